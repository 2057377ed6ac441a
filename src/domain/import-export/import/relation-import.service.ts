// Single-relation imports (GitLab POST /projects/import-relation, Projects::ImportExport::RelationImportWorker):
// one relation of an export archive into an existing project, one at a time per project, items already
// there skipped. The work runs as an outbox job (kind relation_import).
//
// The request stores the uploaded archive in the blob store (`relation-imports/<project>/<random>.tar.gz`)
// and, in one transaction, the row (status created) and its job; this process runs the job at once
// (the jobs registry), the worker's round takes what another process left. The job: started → the archive
// fetched into `<dataDir>/tmp`, extracted under the limits of the settings (max_decompressed_archive_size,
// decompress_archive_file_timeout) → VERSION and tree/project/<relation>.ndjson checked → importTree
// (only that relation, items already there skipped) → finished, or failed with the reason in `error`
// (not shown by the API: GitLab's entity has no error either). Either way the archive is queued for
// deletion and the temporary files removed.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Database, RelationImportRow } from '../../../db/schema.ts';
import { Type } from 'typebox';
import { Background } from '../../../jobs/background.ts';
import { defineJob, jobKind } from '../../../jobs/registry.ts';
import { DomainError, Errors } from '../../../lib/errors.ts';
import { nowIso } from '../../../lib/time.ts';
import { queueBlobDeletion } from '../../blobs/blob-deletions.ts';
import type { Actor } from '../../access/actor.ts';
import { MovedError } from '../../access/resolve.ts';
import { ArchiveError, extractArchive } from '../archive/extract.ts';
import { EXPORT_VERSION, IMPORTABLE_RELATIONS, type ImportableRelation, relationFile, VERSION_FILE } from '../archive/layout.ts';
import type { ImportExportDeps } from '../deps.ts';
import { importTree, TreeError } from '../tree/index.ts';

export const RELATION_IMPORT_JOB = 'relation_import';
const RelationImportJob = jobKind(RELATION_IMPORT_JOB, Type.Object({ relation_import_id: Type.Number() }));
/** how long a claimed import is this worker's; a worker that died leaves it to another after this */
const LEASE_MS = 5 * 60_000;
/** the lease is renewed so often while an import runs */
const LEASE_RENEW_MS = 60_000;
/** Projects::ImportExport::RelationImportTracker::STALE_TIMEOUT: an older unfinished one no longer blocks */
const STALE_MS = 24 * 60 * 60_000;
const MIB = 1024 * 1024;

/** GitLab's messages (Projects::ImportExport::RelationImportService) */
export const PROJECT_NOT_FOUND = 'Project not found';
export const NOT_AUTHORIZED = 'You are not authorized to perform this action';
export const IN_PROGRESS = 'A relation import is already in progress for this project';

export const isImportableRelation = (r: unknown): r is ImportableRelation => (IMPORTABLE_RELATIONS as readonly unknown[]).includes(r);

export class RelationImportsService {
  /** the outcome is the row's; the job ends either way (a lease that runs out brings it back) */
  private readonly background = new Background(
    () => this.runQueued(),
    (e) => this.deps.log.error({ err: e }, 'running relation imports failed'),
  );
  readonly job = defineJob({
    kind: RelationImportJob,
    what: 'a relation import',
    leaseMs: LEASE_MS,
    renewMs: LEASE_RENEW_MS,
    concurrency: 2,
    giveUp: (p) => this.giveUp(p.relation_import_id),
    run: (p, ctx) => this.perform(p.relation_import_id, ctx.claimedBefore),
  });

  constructor(readonly deps: ImportExportDeps) {}

  /** Where the uploads are spooled and the jobs work: `<dataDir>/tmp` */
  tmpDir(): string {
    return path.join(this.deps.config.dataDir, 'tmp');
  }

  /** POST /projects/import-relation: `path` is the project's full path; `file` the spooled upload. */
  async request(
    actor: Actor,
    input: { path: string; relation: ImportableRelation },
    file: { path: string; size: number },
  ): Promise<{ row: RelationImportRow; projectPath: string }> {
    const { project, projectPath, access } = await this.findByFullPath(actor, input.path);
    if (!isImportableRelation(input.relation)) throw Errors.param('relation does not have a valid value');
    if (!access.abilities.has('admin_project')) throw Errors.refused(NOT_AUTHORIZED, 403);
    const k = this.deps.db.kysely;
    // refused before the archive is stored; checked again in the transaction (two requests at once)
    if (await this.inProgress(k, project.id)) throw Errors.conflict(IN_PROGRESS);

    const key = `relation-imports/${project.id}/${randomUUID()}.tar.gz`;
    await this.deps.store.putFile(key, file.path, { contentType: 'application/gzip' });
    let row: RelationImportRow;
    try {
      row = await k.transaction().execute(async (trx) => {
        // one at a time per project: the project's row is the lock (PostgreSQL; SQLite writes one at a time)
        if (this.deps.db.dialect === 'postgres') await trx.selectFrom('projects').select('id').where('id', '=', project.id).forUpdate().execute();
        if (await this.inProgress(trx, project.id)) throw Errors.conflict(IN_PROGRESS);
        const now = nowIso();
        const inserted = await trx
          .insertInto('relation_imports')
          .values({
            project_id: project.id,
            user_id: actor.user?.id ?? null,
            relation: input.relation,
            status: 'created',
            store_key: key,
            error: null,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await RelationImportJob.queue(trx, { relation_import_id: inserted.id }, now);
        return inserted;
      });
    } catch (e) {
      await this.deps.store.delete(key).catch((err) => this.deps.log.error({ err, key }, 'removing a refused relation import archive failed'));
      throw e;
    }
    this.background.kick();
    return { row, projectPath };
  }

  /** GET /projects/:id/relation-imports: every relation import of the project, oldest first (GitLab's association order). */
  async list(actor: Actor, idOrPath: string): Promise<{ rows: RelationImportRow[]; projectPath: string }> {
    const { project, namespace, access } = await this.deps.resolve.project(actor, idOrPath);
    // forbidden!('Project') unless can?(current_user, :admin_project, user_project)
    if (!access.abilities.has('admin_project')) throw Errors.forbidden('Project');
    const rows = await this.deps.db.kysely.selectFrom('relation_imports').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
    return { rows, projectPath: `${namespace.full_path}/${project.path}` };
  }

  /** The worker's round: runs the queued imports (or those whose worker died); how many it took. */
  runQueued(limit?: number): Promise<number> {
    return this.deps.jobs.round(RELATION_IMPORT_JOB, limit);
  }

  /** An import whose process died MAX_CLAIMS times: failed. */
  private async giveUp(id: number): Promise<void> {
    const row = await this.deps.db.kysely.selectFrom('relation_imports').selectAll().where('id', '=', id).executeTakeFirst();
    if (row && (row.status === 'created' || row.status === 'started')) await this.settle(row, 'failed', 'The import was interrupted too many times');
  }

  /** Resolves when the imports this process started are done (tests, shutdown). */
  async idle(): Promise<void> {
    await this.background.idle();
  }

  // ---- the job -------------------------------------------------------------------------------

  /**
   * One import: created → started → finished | failed. `attempts` > 0: a worker took it before and
   * did not finish (its lease ran out): it starts again (importTree skips what is already there); after
   * MAX_CLAIMS runs claimJobs gives it up (giveUp).
   */
  private async perform(id: number, attempts: number): Promise<void> {
    const k = this.deps.db.kysely;
    const row = await k.selectFrom('relation_imports').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return; // the project went, and its imports with it
    if (row.status !== 'created' && !(row.status === 'started' && attempts > 0)) return;
    const started = await k
      .updateTable('relation_imports')
      .set({ status: 'started', updated_at: nowIso() })
      .where('id', '=', row.id)
      .where('status', '=', row.status)
      .executeTakeFirst();
    if (Number(started.numUpdatedRows) === 0) return;

    let work: string | null = null;
    try {
      const project = await k.selectFrom('projects').selectAll().where('id', '=', row.project_id).executeTakeFirst();
      if (!project) return;
      const importer = row.user_id === null ? undefined : await k.selectFrom('users').selectAll().where('id', '=', row.user_id).executeTakeFirst();
      if (!importer) throw new ArchiveError('The user who requested the import no longer exists');
      if (!row.store_key) throw new ArchiveError('The archive is missing');
      await mkdir(this.tmpDir(), { recursive: true });
      work = await mkdtemp(path.join(this.tmpDir(), `relation-import-${row.id}-`));
      const archive = path.join(work, 'archive.tar.gz');
      const body = await this.deps.store.get(row.store_key);
      if (!body) throw new ArchiveError('The archive is missing');
      await pipeline(body, createWriteStream(archive, { flags: 'wx', mode: 0o600 }));

      const s = await this.deps.settings.get();
      const dir = path.join(work, 'archive');
      await extractArchive(archive, dir, {
        maxBytes: Math.max(0, Number(s.max_decompressed_archive_size) || 0) * MIB,
        timeoutMs: Math.max(0, Number(s.decompress_archive_file_timeout) || 0) * 1000,
      });
      await rm(archive, { force: true });
      await checkStructure(dir, row.relation);
      await importTree(this.deps, dir, { project, importer, only: [row.relation as ImportableRelation], skipExisting: true });
      await this.settle(row, 'finished', null);
    } catch (e) {
      const known = e instanceof ArchiveError || e instanceof TreeError;
      if (!known) this.deps.log.error({ err: e, relationImport: row.id }, 'a relation import failed');
      await this.settle(row, 'failed', (e instanceof Error ? e.message : String(e)).slice(0, 2000));
    } finally {
      if (work) await rm(work, { recursive: true, force: true });
    }
  }

  /** The import's outcome; its archive is queued for deletion in the same transaction. */
  private async settle(row: RelationImportRow, status: 'finished' | 'failed', error: string | null): Promise<void> {
    await this.deps.db.kysely.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('relation_imports').select('store_key').where('id', '=', row.id).executeTakeFirst();
      if (!current) return;
      if (current.store_key) await queueBlobDeletion(trx, [current.store_key]);
      await trx.updateTable('relation_imports').set({ status, error, store_key: null, updated_at: nowIso() }).where('id', '=', row.id).execute();
    });
  }

  // ---- helpers -------------------------------------------------------------------------------

  /**
   * Project.find_by_full_path: a full path only (no id, no redirect), the project seen by the actor —
   * else 404 "Project not found" (a project the actor may not see is not told apart from none).
   */
  private async findByFullPath(actor: Actor, fullPath: string) {
    if (!fullPath.includes('/')) throw Errors.refused(PROJECT_NOT_FOUND, 404);
    try {
      const r = await this.deps.resolve.project(actor, fullPath);
      return { ...r, projectPath: `${r.namespace.full_path}/${r.project.path}` };
    } catch (e) {
      if (e instanceof MovedError || (e instanceof DomainError && e.status === 404)) throw Errors.refused(PROJECT_NOT_FOUND, 404);
      throw e;
    }
  }

  /**
   * Project#any_import_in_progress?: a relation import created or started (and not stale), or an import
   * of the project itself scheduled or started.
   */
  private async inProgress(k: Kysely<Database>, projectId: number): Promise<boolean> {
    const since = new Date(Date.now() - STALE_MS).toISOString();
    const running = await k
      .selectFrom('relation_imports')
      .select('id')
      .where('project_id', '=', projectId)
      .where('status', 'in', ['created', 'started'])
      .where('created_at', '>', since)
      .executeTakeFirst();
    if (running) return true;
    const own = await k
      .selectFrom('project_imports')
      .select('project_id')
      .where('project_id', '=', projectId)
      .where('status', 'in', ['scheduled', 'started'])
      .executeTakeFirst();
    return own !== undefined;
  }
}

/** The archive follows the export structure: VERSION (this format's) and the relation's file. */
async function checkStructure(dir: string, relation: string): Promise<void> {
  const version = await readFile(path.join(dir, VERSION_FILE), 'utf8').catch(() => null);
  if (version === null) throw new ArchiveError('The archive does not follow the export structure: VERSION is missing');
  const v = version.trim();
  // Gitlab::ImportExport::VersionChecker
  if (v !== EXPORT_VERSION) throw new ArchiveError(`Import version mismatch: Required ${EXPORT_VERSION} but was ${v.slice(0, 40)}`);
  const file = relationFile(relation);
  const st = await stat(path.join(dir, file)).catch(() => null);
  if (!st?.isFile()) throw new ArchiveError(`The archive does not follow the export structure: ${file} is missing`);
}
