// `hearth backup restore FILE [--force]`: the archive of `hearth backup create` into the data directory
// and database the configuration names (DATA_DIR, DATABASE_URL). Everything is checked before anything
// changes: the archive is extracted to a staging directory next to the data directory, every member's
// SHA-256 is compared with the manifest (and nothing unlisted may be there), the dialect and the schema
// migrations must fit, and the target must be empty (no data directory entries but `backups/`, no users
// or projects in the database) unless --force.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { sql, type Kysely } from 'kysely';
import SQLite from 'better-sqlite3';
import * as tar from 'tar';
import type { Config } from '../config.ts';
import { createDb, type Db, type DbOptions } from '../db/connect.ts';
import { migrate, MIGRATIONS } from '../db/migrate.ts';
import { git } from '../git/command.ts';
import { BackupError, ensureGit, storageDirs } from './create.ts';
import { FORMAT, listFiles, MANIFEST, type Manifest, safeMember, sha256File } from './manifest.ts';
import { Progress } from './progress.ts';
import { dataDirHolders, describeHolder, holdDataDir, locksDir } from '../lib/data-dir-lock.ts';

export interface RestoreOptions {
  force?: boolean;
  /** the database to write (tests: their SQLite file or PostgreSQL schema) */
  db?: Partial<DbOptions>;
  out?: { write(s: string): unknown; isTTY?: boolean };
}

/** data directory entries an empty target may already have */
const ALLOWED = new Set(['backups', 'lost+found', 'locks']);

async function extract(file: string, staging: string): Promise<Manifest> {
  if (!fs.existsSync(file)) throw new BackupError(`${file}: no such file`);
  const bad: string[] = [];
  try {
    await tar.x({
      file,
      cwd: staging,
      strict: true,
      filter: (p, entry) => {
        const ok = safeMember(p.replace(/\/$/, '')) && ('type' in entry ? entry.type === 'File' || entry.type === 'Directory' : true);
        if (!ok) bad.push(p);
        return ok;
      },
    });
  } catch (e) {
    throw new BackupError(`${file} is not a readable backup archive (${(e as Error).message})`);
  }
  if (bad.length) throw new BackupError(`${file} is corrupt: unexpected member ${bad[0]}`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(staging, MANIFEST), 'utf8')) as Manifest;
  } catch {
    throw new BackupError(`${file} is corrupt or not a Hearth backup: no readable ${MANIFEST}`);
  }
  if (manifest.format !== FORMAT || typeof manifest.files !== 'object') {
    throw new BackupError(`${file}: unsupported backup format ${String(manifest.format)}`);
  }
  return manifest;
}

async function verify(file: string, staging: string, manifest: Manifest, out: RestoreOptions['out']): Promise<void> {
  const present = listFiles(staging).filter((m) => m !== MANIFEST);
  const listed = Object.keys(manifest.files);
  const extra = present.find((m) => !(m in manifest.files));
  if (extra) throw new BackupError(`${file} is corrupt: ${extra} is not in the manifest`);
  const progress = new Progress('backup verify', listed.length, out);
  for (const m of listed) {
    if (!safeMember(m) || !fs.existsSync(path.join(staging, m))) throw new BackupError(`${file} is corrupt: ${m} is missing`);
    if ((await sha256File(path.join(staging, m))) !== manifest.files[m]) throw new BackupError(`${file} is corrupt: ${m} does not match its checksum`);
    progress.tick(m);
  }
  progress.finish('every checksum matches');
}

async function databaseEmpty(db: Db): Promise<boolean> {
  const k = db.kysely as Kysely<any>;
  for (const table of ['users', 'projects']) {
    try {
      const row = await k.selectFrom(table).select(sql<number>`count(*)`.as('n')).executeTakeFirst();
      if (Number(row?.n ?? 0) > 0) return false;
    } catch {
      // no such table yet: empty
    }
  }
  return true;
}

/** Tables in an order that inserts referenced rows first (PostgreSQL's foreign keys are checked per row). */
async function insertOrder(k: Kysely<any>, tables: string[]): Promise<string[]> {
  const deps = (
    await sql<{ child: string; parent: string }>`select c.relname as child, p.relname as parent from pg_constraint k
      join pg_class c on c.oid = k.conrelid join pg_class p on p.oid = k.confrelid
      join pg_namespace n on n.oid = c.relnamespace
      where k.contype = 'f' and n.nspname = current_schema()`.execute(k)
  ).rows;
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (t: string) => {
    if (state.get(t)) return; // done, or a cycle (self-references: rows go in id order)
    state.set(t, 'visiting');
    for (const d of deps) if (d.child === t && d.parent !== t) visit(d.parent);
    state.set(t, 'done');
    order.push(t);
  };
  for (const t of tables) visit(t);
  return order.filter((t) => tables.includes(t));
}

async function readJsonl(file: string, each: (rows: Record<string, unknown>[]) => Promise<void>, batch: number): Promise<void> {
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  let rows: Record<string, unknown>[] = [];
  for await (const line of rl) {
    if (!line) continue;
    const row = JSON.parse(line) as Record<string, unknown>;
    for (const [k, v] of Object.entries(row)) {
      if (v && typeof v === 'object' && '$base64' in (v as object)) row[k] = Buffer.from((v as { $base64: string }).$base64, 'base64');
    }
    rows.push(row);
    if (rows.length >= batch) {
      await each(rows);
      rows = [];
    }
  }
  if (rows.length) await each(rows);
}

async function restorePostgres(db: Db, staging: string, manifest: Manifest, progress: Progress): Promise<void> {
  await migrate(db);
  const k = db.kysely as Kysely<any>;
  const tables = Object.keys(manifest.counts);
  const order = await insertOrder(k, tables);
  await k.transaction().execute(async (trx) => {
    for (const t of [...order].reverse()) await sql`delete from ${sql.table(t)}`.execute(trx);
    for (const t of order) {
      const file = path.join(staging, 'db', `${t}.jsonl`);
      if (!fs.existsSync(file)) continue;
      await readJsonl(
        file,
        async (rows) => {
          await trx.insertInto(t).values(rows).execute();
        },
        // PostgreSQL takes at most 65535 parameters a statement
        Math.max(1, Math.floor(60_000 / Math.max(1, Object.keys((await firstRow(file)) ?? { a: 1 }).length))),
      );
      progress.tick(`table ${t}`);
    }
    const sequences = JSON.parse(fs.readFileSync(path.join(staging, 'db', 'sequences.json'), 'utf8')) as { name: string; last_value: number | null }[];
    for (const s of sequences) {
      if (s.last_value === null) continue;
      await sql`select setval(${sql.lit(s.name)}::regclass, ${s.last_value})`.execute(trx);
    }
    await handOverJournal(trx);
  });
}

async function firstRow(file: string): Promise<Record<string, unknown> | null> {
  const rl = readline.createInterface({ input: fs.createReadStream(file) });
  for await (const line of rl) {
    rl.close();
    return line ? (JSON.parse(line) as Record<string, unknown>) : null;
  }
  return null;
}

/** Pushes journaled but unfinished at backup time: the next journal sweep replays them (see create.ts). */
async function handOverJournal(k: Kysely<any>): Promise<void> {
  await k.updateTable('pending_pushes').set({ owner: 'restored:0:restored:backup', lease_until: '1970-01-01T00:00:00.000Z' }).execute();
}

async function restoreRepository(dir: string, staging: string, r: Manifest['repositories'][number]): Promise<void> {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await git(['init', '--bare', '--quiet', dir]);
  if (r.bundle) {
    await git(['fetch', '--quiet', '--no-write-fetch-head', path.join(staging, r.bundle), 'refs/*:refs/*'], { gitDir: dir, timeoutMs: 3_600_000 });
  }
  if (r.bundle) {
    // exactly the refs recorded under the fence (the bundle may also hold newer ones)
    const recorded = new Map(
      fs
        .readFileSync(path.join(staging, `${r.bundle.slice(0, -'.bundle'.length)}.refs`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(l.indexOf(' ') + 1), l.slice(0, l.indexOf(' '))] as const),
    );
    const now = (await git(['for-each-ref', '--format=%(refname)'], { gitDir: dir })).stdout.toString().split('\n').filter(Boolean);
    const script = [...now.filter((ref) => !recorded.has(ref)).map((ref) => `delete ${ref}`), ...[...recorded].map(([ref, sha]) => `update ${ref} ${sha}`)];
    await git(['update-ref', '--stdin'], { gitDir: dir, input: `${script.join('\n')}\n` });
  }
  if (r.config) fs.copyFileSync(path.join(staging, r.config), path.join(dir, 'config'));
  if (r.head) await git(['symbolic-ref', 'HEAD', r.head], { gitDir: dir });
}

/**
 * Holds the data directory for the restore (a server starting meanwhile refuses to), after refusing when a
 * server or worker holds it: the running process would go on writing into the files the restore replaces,
 * and what it acknowledged then would be gone after its restart. Stale locks (their process gone) are removed.
 */
function holdForRestore(dataDir: string, out: NonNullable<RestoreOptions['out']>): () => void {
  const existed = { dataDir: fs.existsSync(dataDir), locks: fs.existsSync(locksDir(dataDir)) };
  const lock = holdDataDir(dataDir, 'backup restore');
  const release = () => {
    lock.release();
    // what holding made, and nothing else: a refused restore leaves the target as it was
    for (const [made, dir] of [
      [!existed.locks, locksDir(dataDir)],
      [!existed.dataDir, dataDir],
    ] as const) {
      try {
        if (made) fs.rmdirSync(dir); // only when empty
      } catch {}
    }
  };
  const { live, stale } = dataDirHolders(dataDir);
  for (const h of stale) out.write(`backup restore: removed the stale lock of ${describeHolder(h)}: that process is gone\n`);
  if (live.length) {
    release();
    const elsewhere = live.filter((h) => h.host !== os.hostname()).map((h) => h.file);
    throw new BackupError(
      `${dataDir} is in use by ${live.map(describeHolder).join(', ')}; stop ${live.length > 1 ? 'them' : 'it'} first (nothing was changed)` +
        (elsewhere.length ? `; a lock of another host cannot be checked from here: if that process is gone, delete ${elsewhere.join(', ')}` : ''),
    );
  }
  return release;
}

export async function restoreBackup(config: Config, file: string, opts: RestoreOptions = {}): Promise<Manifest> {
  const out = opts.out ?? process.stderr;
  const release = holdForRestore(path.resolve(config.dataDir), out);
  try {
    return await restoreInto(config, file, opts, out);
  } finally {
    release();
  }
}

async function restoreInto(config: Config, file: string, opts: RestoreOptions, out: NonNullable<RestoreOptions['out']>): Promise<Manifest> {
  const archive = path.resolve(file);
  const parent = path.dirname(path.resolve(config.dataDir));
  fs.mkdirSync(parent, { recursive: true });
  const staging = fs.mkdtempSync(path.join(parent, '.hearth-restore-'));
  const dbOpts: DbOptions = { databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...opts.db };
  let db: Db | null = null;
  try {
    const manifest = await extract(archive, staging);
    await verify(archive, staging, manifest, out);
    const dialect = config.databaseUrl ? 'postgres' : 'sqlite';
    if (manifest.dialect !== dialect) {
      throw new BackupError(
        `this backup holds a ${manifest.dialect} database; restore it with ${manifest.dialect === 'sqlite' ? 'DATABASE_URL unset' : 'DATABASE_URL set'}`,
      );
    }
    const known = MIGRATIONS.map((m) => m.name);
    const fits = dialect === 'sqlite' ? manifest.migrations.every((m, i) => known[i] === m) : manifest.migrations.join() === known.join();
    if (!fits) throw new BackupError(`this backup was made by Hearth ${manifest.hearth_version} with another database schema; restore it with that version`);
    // the target must be empty
    const entries = fs.existsSync(config.dataDir) ? fs.readdirSync(config.dataDir).filter((e) => !ALLOWED.has(e)) : [];
    const sqliteFile = dbOpts.sqliteFile ?? path.join(config.dataDir, 'hearth.sqlite3');
    if (dialect === 'postgres') {
      db = createDb(dbOpts);
      if (!opts.force && !(await databaseEmpty(db)))
        throw new BackupError('the database is not empty (it has users or projects); use --force to replace its contents');
    } else if (!opts.force && fs.existsSync(sqliteFile)) {
      throw new BackupError(`${sqliteFile} exists; use --force to replace it`);
    }
    if (!opts.force && entries.length) {
      throw new BackupError(`${config.dataDir} is not empty (${entries.slice(0, 3).join(', ')}); use --force to replace its contents`);
    }
    // from here on the target changes
    ensureGit(config.dataDir);
    const storages = storageDirs(config);
    const progress = new Progress('backup restore', manifest.repositories.length + Object.keys(manifest.counts).length + 1, out);
    if (opts.force) {
      for (const dir of storages.values()) fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(path.join(config.dataDir, 'ssh'), { recursive: true, force: true });
      if (config.blobStore.kind === 'local') fs.rmSync(config.blobStore.dir, { recursive: true, force: true });
    }
    fs.mkdirSync(config.dataDir, { recursive: true });
    if (dialect === 'sqlite') {
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(sqliteFile + suffix, { force: true });
      fs.mkdirSync(path.dirname(sqliteFile), { recursive: true });
      fs.copyFileSync(path.join(staging, 'db', 'hearth.sqlite3'), `${sqliteFile}.restoring`);
      const s = new SQLite(`${sqliteFile}.restoring`);
      s.prepare(`update pending_pushes set owner = 'restored:0:restored:backup', lease_until = '1970-01-01T00:00:00.000Z'`).run();
      s.close();
      fs.renameSync(`${sqliteFile}.restoring`, sqliteFile);
      progress.tick('database', Object.keys(manifest.counts).length);
    } else {
      await restorePostgres(db!, staging, manifest, progress);
    }
    for (const r of manifest.repositories) {
      const root = storages.get(r.storage) ?? path.join(config.dataDir, 'repositories', r.storage);
      await restoreRepository(path.join(root, r.path), staging, r);
      progress.tick(`${r.storage}/${r.path}`);
    }
    if (fs.existsSync(path.join(staging, 'blobs'))) {
      if (config.blobStore.kind !== 'local') out.write('backup restore: the archive has local blobs but HEARTH_S3_BUCKET is set; they are not copied\n');
      else fs.cpSync(path.join(staging, 'blobs'), config.blobStore.dir, { recursive: true });
    }
    if (fs.existsSync(path.join(staging, 'ssh'))) fs.cpSync(path.join(staging, 'ssh'), path.join(config.dataDir, 'ssh'), { recursive: true });
    progress.tick('blobs and host keys');
    progress.finish(`${manifest.repositories.length} repositories`);
    return manifest;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    if (db) await db.close();
  }
}
