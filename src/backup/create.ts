// `hearth backup create`: one tar archive with a consistent snapshot of the database, every repository
// as a git bundle, the translation mirrors, the local blobs, the SSH host keys and a manifest.
//
// Consistency with a running server (any number of processes): while the database snapshot is taken
// and every repository's refs are recorded (one for-each-ref each; the bundles are made afterwards, as
// of those refs), a *fence* holds off the database writes of pushes — on SQLite a second connection holds the
// write lock (BEGIN IMMEDIATE; the server's writers wait up to their busy timeout), on PostgreSQL a
// transaction holds `LOCK TABLE pending_pushes IN SHARE MODE`. A push writes its journal row
// (pending_pushes, the updates git prepared) before any ref moves and its events in the transaction
// that deletes that row, after the refs moved (see push-journal.ts). So, for a fence taken at t0:
// - a push whose events committed before t0 moved its refs before t0: both are in the archive;
// - a push prepared before t0 whose events were not committed by then is in the snapshot as its journal
//   row; its refs may or may not be in the recorded refs — restore hands the row over, and the journal's
//   replay writes the events of exactly the updates visible in the restored repository (wholly in or
//   wholly out);
// - a push not prepared at t0 waits at its journal write until the fence goes: nothing of it is in.
// The database snapshot is the SQLite online backup API (a page copy, exact) or, on PostgreSQL, every
// table read in one REPEATABLE READ READ ONLY transaction as JSON lines plus the sequences' positions
// (portable: no pg_dump whose version must match the server's, restore needs no binaries).
// Everything is written to a staging directory next to the output, then streamed into FILE.partial and
// renamed to FILE: a crash or kill -9 leaves no archive under the final name.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type Kysely } from 'kysely';
import SQLite from 'better-sqlite3';
import * as tar from 'tar';
import { VERSION, type Config } from '../config.ts';
import { createDb, type Db, type DbOptions } from '../db/connect.ts';
import { configureGit, git, gitEnv } from '../git/command.ts';
import { FORMAT, listFiles, MANIFEST, type Manifest, type RepositoryEntry, sha256File } from './manifest.ts';
import { Progress } from './progress.ts';

const run = promisify(execFile);

export class BackupError extends Error {}

export interface CreateOptions {
  /** the archive's path (default DATA_DIR/backups/<timestamp>_<date>_<version>_hearth_backup.tar) */
  output?: string;
  /** the database to read (tests: their SQLite file or PostgreSQL schema) */
  db?: Partial<DbOptions>;
  /** where progress goes (default stderr) */
  out?: { write(s: string): unknown; isTTY?: boolean };
  /** test only: runs while the fence is held, after the snapshot and before the bundles */
  duringFence?: () => Promise<void>;
}

export interface RepositoryLocation {
  storage: string;
  path: string;
  dir: string;
}

export function ensureGit(dataDir: string): void {
  try {
    gitEnv();
  } catch {
    configureGit(path.join(dataDir, 'git-home'));
  }
}

/** Storage name → directory: the configured storages and every directory under DATA_DIR/repositories. */
export function storageDirs(config: Config): Map<string, string> {
  const dirs = new Map<string, string>();
  const root = path.join(config.dataDir, 'repositories');
  if (fs.existsSync(root)) {
    for (const e of fs.readdirSync(root, { withFileTypes: true })) if (e.isDirectory()) dirs.set(e.name, path.join(root, e.name));
  }
  dirs.set('default', path.join(root, 'default'));
  for (const [name, dir] of Object.entries(config.repositoryStorages)) dirs.set(name, dir);
  return dirs;
}

/** Every bare repository (a "*.git" directory with a HEAD) of every storage and of the translation mirrors. */
export function findRepositories(config: Config): RepositoryLocation[] {
  const found: RepositoryLocation[] = [];
  for (const [storage, root] of storageDirs(config)) {
    const walk = (dir: string, rel: string) => {
      if (!fs.existsSync(dir)) return;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (!e.isDirectory()) continue;
        const full = path.join(dir, e.name);
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.name.endsWith('.git') && fs.existsSync(path.join(full, 'HEAD'))) {
          // half-made translation mirrors (tmp-*.git) are the server's scratch space
          if (!(storage === '@translation' && e.name.startsWith('tmp-'))) found.push({ storage, path: r, dir: full });
        } else walk(full, r);
      }
    };
    walk(root, '');
  }
  return found.sort((a, b) => (a.storage + a.path).localeCompare(b.storage + b.path));
}

function stamp(d: Date): string {
  return `${Math.floor(d.getTime() / 1000)}_${d.toISOString().slice(0, 10).replace(/-/g, '_')}`;
}

const b64 = (v: unknown): unknown => (Buffer.isBuffer(v) ? { $base64: v.toString('base64') } : v);

/** Holds off the writes of pushes (see the top of this file) while `fn` runs. */
async function fenced<T>(db: Db, dbOpts: DbOptions, fn: () => Promise<T>): Promise<T> {
  if (db.dialect === 'sqlite') {
    const file = dbOpts.sqliteFile ?? path.join(dbOpts.dataDir, 'hearth.sqlite3');
    const fence = new SQLite(file);
    try {
      fence.pragma('busy_timeout = 60000');
      fence.exec('BEGIN IMMEDIATE');
      return await fn();
    } finally {
      if (fence.inTransaction) fence.exec('ROLLBACK');
      fence.close();
    }
  }
  return (db.kysely as Kysely<any>).transaction().execute(async (trx) => {
    await sql`lock table pending_pushes in share mode`.execute(trx);
    return fn();
  });
}

async function snapshotSqlite(db: Db, into: string): Promise<{ migrations: string[]; counts: Record<string, number> }> {
  const file = path.join(into, 'db', 'hearth.sqlite3');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await db.sqlite!.backup(file);
  // a plain file (the copy keeps the source's WAL mode, whose -wal and -shm files would join the archive)
  const snap = new SQLite(file);
  try {
    snap.pragma('journal_mode = DELETE');
    // the tables of rows: not the search indexes (FTS5 virtual tables and their shadow tables) over them
    const tables = snap
      .prepare(`select name from pragma_table_list where schema = 'main' and type = 'table' and name not like 'sqlite_%' order by name`)
      .all() as { name: string }[];
    const counts: Record<string, number> = {};
    for (const { name } of tables) counts[name] = (snap.prepare(`select count(*) as n from "${name}"`).get() as { n: number }).n;
    const migrations = (snap.prepare('select name from schema_migrations order by name').all() as { name: string }[]).map((r) => r.name);
    return { migrations, counts };
  } finally {
    snap.close();
  }
}

async function snapshotPostgres(db: Db, into: string): Promise<{ migrations: string[]; counts: Record<string, number> }> {
  const dir = path.join(into, 'db');
  fs.mkdirSync(dir, { recursive: true });
  return (db.kysely as Kysely<any>)
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const tables = (
        await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(trx)
      ).rows.map((r) => r.name);
      const counts: Record<string, number> = {};
      for (const table of tables) {
        const cols = (
          await sql<{ c: string }>`select column_name as c from information_schema.columns
            where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(trx)
        ).rows.map((r) => r.c);
        const order = cols.includes('id') ? sql`order by id` : sql``;
        const fd = fs.openSync(path.join(dir, `${table}.jsonl`), 'w');
        let n = 0;
        // keyset pages keep memory flat on big tables (tables without an id are small: read at once)
        let after: number | null = null;
        for (;;) {
          const page: Record<string, unknown>[] = cols.includes('id')
            ? (
                await sql<
                  Record<string, unknown>
                >`select * from ${sql.table(table)} ${after === null ? sql`` : sql`where id > ${after}`} ${order} limit 5000`.execute(trx)
              ).rows
            : (await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(trx)).rows;
          for (const row of page) {
            const out: Record<string, unknown> = {};
            for (const [k, v] of Object.entries(row)) out[k] = b64(v);
            fs.writeSync(fd, `${JSON.stringify(out)}\n`);
          }
          n += page.length;
          if (!cols.includes('id') || page.length < 5000) break;
          after = Number(page[page.length - 1].id);
        }
        fs.closeSync(fd);
        counts[table] = n;
      }
      const sequences = (
        await sql<{ name: string; last_value: number | null }>`select sequencename as name, last_value from pg_sequences
          where schemaname = current_schema() order by sequencename`.execute(trx)
      ).rows;
      fs.writeFileSync(path.join(dir, 'sequences.json'), JSON.stringify(sequences));
      const migrations = (await sql<{ name: string }>`select name from schema_migrations order by name`.execute(trx)).rows.map((r) => r.name);
      return { migrations, counts };
    });
}

/** A repository's refs and HEAD as they are now (under the fence: fast, one for-each-ref). */
interface RefState {
  repo: RepositoryLocation;
  refs: string; // "<sha> <ref>\n" lines
  head: string | null;
}

async function refState(repo: RepositoryLocation): Promise<RefState> {
  const refs = (await git(['for-each-ref', '--format=%(objectname) %(refname)'], { gitDir: repo.dir })).stdout.toString();
  const head = await git(['symbolic-ref', '-q', 'HEAD'], { gitDir: repo.dir, okCodes: [0, 1] });
  return { repo, refs, head: head.code === 0 ? head.stdout.toString().trim() : null };
}

/**
 * The bundle of a repository as of its recorded refs (after the fence: pushes may have moved refs since).
 * It holds every ref now and every recorded tip's objects (a tip a force push left behind is still
 * there: housekeeping prunes only what was unreachable for 30 minutes); the recorded refs go beside it
 * (`.refs`), and restore sets exactly those.
 */
async function bundle(state: RefState, into: string): Promise<RepositoryEntry> {
  const { repo } = state;
  if (!fs.existsSync(repo.dir)) throw new BackupError(`${repo.storage}/${repo.path} disappeared during the backup; run it again`);
  const base = `repositories/${repo.storage}/${repo.path}`;
  const lines = state.refs.split('\n').filter(Boolean);
  const entry: RepositoryEntry = { storage: repo.storage, path: repo.path, head: state.head, refs: lines.length, bundle: null, config: null };
  fs.mkdirSync(path.join(into, path.dirname(base)), { recursive: true });
  if (lines.length) {
    entry.bundle = `${base}.bundle`;
    const tips = [...new Set(lines.map((l) => l.slice(0, l.indexOf(' '))))].join('\n');
    await git(['bundle', 'create', '--quiet', path.join(into, entry.bundle), '--all', '--stdin'], {
      gitDir: repo.dir,
      input: `${tips}\n`,
      timeoutMs: 3_600_000,
    });
    fs.writeFileSync(path.join(into, `${base}.refs`), state.refs);
  }
  if (fs.existsSync(path.join(repo.dir, 'config'))) {
    entry.config = `${base}.config`;
    fs.copyFileSync(path.join(repo.dir, 'config'), path.join(into, entry.config));
  }
  return entry;
}

function copyTree(from: string, to: string): number {
  let n = 0;
  for (const rel of listFiles(from)) {
    fs.mkdirSync(path.dirname(path.join(to, rel)), { recursive: true });
    fs.copyFileSync(path.join(from, rel), path.join(to, rel));
    n++;
  }
  return n;
}

async function gitVersion(): Promise<string> {
  try {
    return (await run('git', ['--version'], { env: gitEnv() })).stdout.trim();
  } catch {
    return 'unknown';
  }
}

/** Staging directories of earlier runs whose process is gone (killed): removed. */
function removeStaleStaging(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    const m = /^\..+\.staging-(\d+)$/.exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    try {
      process.kill(Number(m[1]), 0);
      continue; // another backup is running
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') continue;
    }
    fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    const partial = path.join(dir, name.replace(/^\.(.+)\.staging-\d+$/, '$1.partial'));
    fs.rmSync(partial, { force: true });
  }
}

export async function createBackup(config: Config, opts: CreateOptions = {}): Promise<{ file: string; manifest: Manifest }> {
  const now = new Date();
  const dbOpts: DbOptions = { databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...opts.db };
  const sqliteFile = dbOpts.sqliteFile ?? path.join(dbOpts.dataDir, 'hearth.sqlite3');
  if (!dbOpts.databaseUrl && !fs.existsSync(sqliteFile)) {
    throw new BackupError(`no database at ${sqliteFile}: DATA_DIR is not a Hearth data directory (set DATABASE_URL for PostgreSQL)`);
  }
  const file = path.resolve(opts.output ?? path.join(config.dataDir, 'backups', `${stamp(now)}_${VERSION}_hearth_backup.tar`));
  const partial = `${file}.partial`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (fs.existsSync(file)) throw new BackupError(`${file} exists; choose another --output`);
  const staging = path.join(path.dirname(file), `.${path.basename(file)}.staging-${process.pid}`);
  removeStaleStaging(path.dirname(file));
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  ensureGit(config.dataDir);
  const db = createDb(dbOpts);
  const out = opts.out ?? process.stderr;
  try {
    const k = db.kysely as Kysely<any>;
    const migrated = await k
      .selectFrom('schema_migrations')
      .select('name')
      .limit(1)
      .execute()
      .then((r) => r.length > 0)
      .catch(() => false);
    if (!migrated) throw new BackupError('the database has no Hearth schema (start the server or run hearth migrate once)');
    const repos = findRepositories(config);
    const progress = new Progress('backup create', repos.length + 1, out);
    const started = Date.now();
    const { snap, states } = await fenced(db, dbOpts, async () => {
      const snap = db.dialect === 'sqlite' ? await snapshotSqlite(db, staging) : await snapshotPostgres(db, staging);
      progress.tick('database');
      await opts.duringFence?.();
      // repositories gone since they were listed belonged to projects whose rows went before the fence
      const states = await Promise.all(repos.filter((r) => fs.existsSync(r.dir)).map((r) => refState(r)));
      return { snap, states };
    });
    const fenceSeconds = (Date.now() - started) / 1000;
    const entries: RepositoryEntry[] = [];
    for (const state of states) {
      entries.push(await bundle(state, staging));
      progress.tick(`${state.repo.storage}/${state.repo.path}`);
    }
    progress.finish(`${entries.length} repositories, writes held off ${fenceSeconds.toFixed(2)} s`);
    // blobs and host keys: files written once and never changed in place
    if (config.blobStore.kind === 'local') copyTree(config.blobStore.dir, path.join(staging, 'blobs'));
    else out.write('backup create: blobs are in the S3 bucket; back the bucket up with its own tools\n');
    copyTree(path.join(config.dataDir, 'ssh'), path.join(staging, 'ssh'));
    const members = listFiles(staging);
    const sums = new Progress('backup checksums', members.length, out);
    const files: Record<string, string> = {};
    for (const m of members) {
      files[m] = await sha256File(path.join(staging, m));
      sums.tick(m);
    }
    sums.finish();
    const manifest: Manifest = {
      format: FORMAT,
      hearth_version: VERSION,
      created_at: now.toISOString(),
      git_version: await gitVersion(),
      dialect: db.dialect,
      migrations: snap.migrations,
      counts: snap.counts,
      repositories: entries,
      files,
      fence_seconds: fenceSeconds,
    };
    fs.writeFileSync(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    await tar.c({ file: partial, cwd: staging, portable: true }, [MANIFEST, ...members]);
    const fd = fs.openSync(partial, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(partial, file);
    out.write(`backup create: ${file} (${fs.statSync(file).size} bytes)\n`);
    return { file, manifest };
  } finally {
    fs.rmSync(partial, { force: true });
    fs.rmSync(staging, { recursive: true, force: true });
    await db.close();
  }
}
