// Project exports (GitLab lib/api/project_export.rb, Projects::ImportExport::ExportService): the request,
// the status record, the download, the upload to `upload[url]`, and expiry. The work runs as an outbox
// job (kind project_export): this process starts it at once; the worker round takes what another
// process left.
//
// One row per project and user (project_exports). `status` is the current run (queued → started →
// finished | failed); `store_key`, `file_name`, `size` and `expires_at` describe the last finished archive,
// which stays downloadable while a new run regenerates it. What GET /projects/:id/export shows follows
// Project#export_status: a run queued or started while an unexpired archive exists is
// regeneration_in_progress; then queued, started; an unexpired archive is finished (even when a later
// run failed: the archive is still there, as GitLab shows it); a failed run without one is failed;
// else none.
//
// Runs: POST queues a job (`{"export_id": n}`) in the transaction that sets the row queued; a job that
// finds a newer job of the same export waiting or running leaves the work to it. A run is the row's
// `started_at` (set when it starts): its results are written only while the row is still `started`
// with that value, so a POST during a run makes the running one discard its archive and the new job
// start over with the new parameters. Claimed jobs hold a lease renewed while they run; a process that
// dies leaves the lease to run out and another round takes the job again (MAX_CLAIMS runs in all, then giveUp).
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { NamespaceRow, ProjectExportRow, ProjectRow } from '../../../db/schema.ts';
import { Type } from 'typebox';
import { Background } from '../../../jobs/background.ts';
import { defineJob, defineSweep, jobKind } from '../../../jobs/registry.ts';
import { Errors } from '../../../lib/errors.ts';
import { maskUrl, OutboundError, type OutboundRules } from '../../../lib/outbound.ts';
import { nowIso } from '../../../lib/time.ts';
import { queueBlobDeletion } from '../../blobs/blob-deletions.ts';
import type { Actor } from '../../access/actor.ts';
import { Policy, traversalIds } from '../../access/policy.ts';
import type { ResolvedProject } from '../../access/resolve.ts';
import type { ImportExportDeps } from '../deps.ts';
import { buildArchive, ExportTooLargeError } from './archive-builder.ts';

export type ExportStatus = 'none' | 'queued' | 'started' | 'finished' | 'regeneration_in_progress' | 'failed';

export interface ExportRequest {
  description?: string;
  upload?: { url: string; http_method?: 'PUT' | 'POST' };
}

export const EXPORT_JOB = 'project_export';
const ExportJob = jobKind(EXPORT_JOB, Type.Object({ export_id: Type.Number() }));
export const UPLOAD_METHODS = ['PUT', 'POST'] as const;
/** how long a claimed export is this process's before another may take it; renewed while it runs */
const LEASE_MS = 5 * 60_000;
const HEARTBEAT_MS = 60_000;
/** the whole upload to upload[url], the transfer included */
const UPLOAD_TIMEOUT_MS = 60 * 60_000;
/** how long a store redirect stays valid */
const DOWNLOAD_URL_TTL_S = 600;
/** a temporary export directory this old was left by a process that died (the expiry sweep removes it) */
const STALE_TMP_MS = 24 * 3_600_000;
const TMP_PREFIX = 'export-';

/** The status GET /projects/:id/export shows for a row (Project#export_status). */
export function exportStatusOf(row: ProjectExportRow | null | undefined, now = nowIso()): ExportStatus {
  if (!row) return 'none';
  const live = hasArchive(row, now);
  if (row.status === 'queued' || row.status === 'started') return live ? 'regeneration_in_progress' : row.status;
  if (live) return 'finished';
  if (row.status === 'failed') return 'failed';
  return 'none';
}

function hasArchive(row: ProjectExportRow, now = nowIso()): boolean {
  return row.store_key !== null && row.expires_at !== null && row.expires_at > now;
}

/**
 * GitLab's file name (Gitlab::ImportExport.export_filename):
 * `<%Y-%m-%d_%H-%M-%3N>_<full path, / as _>` cut to 51 characters, then `_export.tar.gz` (UTC here).
 */
export function exportFileName(fullPath: string, at = new Date()): string {
  const p2 = (n: number) => String(n).padStart(2, '0');
  const stamp = `${at.getUTCFullYear()}-${p2(at.getUTCMonth() + 1)}-${p2(at.getUTCDate())}_${p2(at.getUTCHours())}-${p2(at.getUTCMinutes())}-${String(at.getUTCMilliseconds()).padStart(3, '0')}`;
  return `${`${stamp}_${fullPath.replace(/\//g, '_')}`.slice(0, 51)}_export.tar.gz`;
}

/** A message that may carry a URL, without query strings, fragments or passwords (logs, `error`). */
export function redactUrls(message: string): string {
  return maskUrl(message).replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s?#"']*)[?#][^\s"']*/gi, '$1');
}

/** How an upload went wrong, as GitLab's WebUploadStrategy says it. */
function uploadError(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return redactUrls(`Error uploading the project: ${message}`);
}

export class ExportsService {
  /** the run's outcome is the row's; a failure fails the job (a new request queues another) */
  private readonly background = new Background(
    () => this.runQueued(),
    (e) => this.deps.log.error({ err: e }, 'running project exports failed'),
  );
  readonly job = defineJob({
    kind: ExportJob,
    what: 'a project export',
    leaseMs: LEASE_MS,
    renewMs: HEARTBEAT_MS,
    concurrency: 2,
    giveUp: (p, job) => this.giveUp(job.id, p.export_id),
    run: (p, ctx) => this.runJob(ctx.id, p.export_id),
  });

  /** expired archives (and what dead exports left in the temporary directory) are found by the clock */
  readonly expiry = defineSweep({ name: 'export expiry', everyMs: 60_000, run: () => this.removeExpired() });

  constructor(readonly deps: ImportExportDeps) {}

  /**
   * The guards of every export route (lib/api/project_export.rb `before`): exports disabled → 404
   * "404 Not Found"; the project as the actor sees it (404 Project Not Found); admin_project (403).
   */
  async authorize(actor: Actor, idOrPath: string): Promise<ResolvedProject> {
    const s = await this.deps.settings.get();
    if (!s.project_export_enabled) throw Errors.notFound();
    const resolved = await this.deps.resolve.project(actor, idOrPath);
    Policy.require(resolved.access, 'admin_project', 'Project', 'read_project');
    return resolved;
  }

  /** The rules of the upload to upload[url]: those of web hooks and services. */
  async uploadRules(): Promise<OutboundRules> {
    const s = await this.deps.settings.get();
    return {
      allowLocal: Boolean(s.allow_local_requests_from_web_hooks_and_services),
      allowlist: s.outbound_local_requests_whitelist ?? [],
    };
  }

  /** POST /projects/:id/export (admin_project): queues an export of the project for the actor. */
  async request(actor: Actor, idOrPath: string, input: ExportRequest): Promise<void> {
    const { project } = await this.authorize(actor, idOrPath);
    const user = actor.user;
    if (!user) throw Errors.unauthorized();
    let upload: { url: string; method: 'PUT' | 'POST' } | null = null;
    if (input.upload && input.upload.url !== '') {
      const method = input.upload.http_method ?? 'PUT';
      if (!(UPLOAD_METHODS as readonly string[]).includes(method)) throw Errors.param('upload[http_method] does not have a valid value');
      // WebUploadStrategy's `validates :url, addressable_url: true` (render_validation_error!), with the
      // rules the upload is sent under: refused now rather than after the whole export
      const problem = await this.deps.outbound.check(input.upload.url, await this.uploadRules());
      if (problem !== null && problem !== 'Host cannot be resolved or invalid') throw Errors.invalid({ url: [`is blocked: ${problem}`] });
      upload = { url: input.upload.url, method };
    }
    const now = nowIso();
    const k = this.deps.db.kysely;
    const fields = {
      status: 'queued',
      description: input.description ?? null,
      upload_url: upload ? this.deps.box.seal(upload.url) : null,
      upload_method: upload ? upload.method : null,
      error: null,
      started_at: null,
      finished_at: null,
      updated_at: now,
    };
    await k.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('project_exports')
        .values({
          project_id: project.id,
          user_id: user.id,
          store_key: null,
          file_name: null,
          size: null,
          expires_at: null,
          created_at: now,
          ...fields,
        })
        .onConflict((oc) => oc.columns(['project_id', 'user_id']).doUpdateSet(fields))
        .returning('id')
        .executeTakeFirstOrThrow();
      // a job still waiting takes the new parameters from the row; a running one gives way to a new job
      await ExportJob.queueOnce(trx, { export_id: row.id }, now);
    });
    this.background.kick();
  }

  /** GET /projects/:id/export: the project and the actor's export status. */
  async status(actor: Actor, idOrPath: string): Promise<{ project: ProjectRow; namespace: NamespaceRow; status: ExportStatus; row: ProjectExportRow | null }> {
    const { project, namespace } = await this.authorize(actor, idOrPath);
    const row = (actor.user ? await this.rowOf(project.id, actor.user.id) : null) ?? null;
    return { project, namespace, status: exportStatusOf(row), row };
  }

  /** Project#full_name's namespace part: "Group / Subgroup", or the owner's name for a personal namespace. */
  async namespaceFullName(namespace: NamespaceRow): Promise<string> {
    const k = this.deps.db.kysely;
    if (namespace.type !== 'Group') {
      const owner =
        namespace.owner_id === null ? undefined : await k.selectFrom('users').select('name').where('id', '=', namespace.owner_id).executeTakeFirst();
      return owner?.name ?? namespace.name;
    }
    const ids = traversalIds(namespace);
    const rows = await k.selectFrom('namespaces').select(['id', 'name']).where('id', 'in', ids).execute();
    const names = new Map(rows.map((r) => [Number(r.id), r.name]));
    return ids.map((id) => names.get(id) ?? '').join(' / ');
  }

  /** GET /projects/:id/export/download: the finished archive (or a redirect URL from the store). */
  async download(actor: Actor, idOrPath: string): Promise<{ fileName: string; size: number; stream: Readable | null; redirect: string | null }> {
    const { project } = await this.authorize(actor, idOrPath);
    const gone = () => Errors.refused('404 Not found or has expired', 404);
    const row = actor.user ? await this.rowOf(project.id, actor.user.id) : null;
    if (!row || !hasArchive(row)) throw gone();
    const key = row.store_key!;
    const fileName = row.file_name ?? exportFileName(String(project.id));
    const redirect = await this.deps.store.downloadUrl(key, { fileName, contentType: 'application/gzip', ttlSeconds: DOWNLOAD_URL_TTL_S });
    if (redirect) return { fileName, size: Number(row.size ?? 0), stream: null, redirect };
    const stream = await this.deps.store.get(key);
    if (!stream) throw gone();
    return { fileName, size: Number(row.size ?? 0), stream, redirect: null };
  }

  private rowOf(projectId: number, userId: number): Promise<ProjectExportRow | undefined> {
    return this.deps.db.kysely.selectFrom('project_exports').selectAll().where('project_id', '=', projectId).where('user_id', '=', userId).executeTakeFirst();
  }

  /** The worker's round: runs queued exports (and those whose lease ran out); answers how many it took. */
  runQueued(limit?: number): Promise<number> {
    return this.deps.jobs.round(EXPORT_JOB, limit);
  }

  /** An export whose process died MAX_CLAIMS times: failed, unless a newer job has it. */
  private async giveUp(jobId: number, id: number): Promise<void> {
    if (await this.newerJob(jobId, id)) return;
    const k = this.deps.db.kysely;
    const row = await k.selectFrom('project_exports').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || (row.status !== 'queued' && row.status !== 'started')) return;
    const now = nowIso();
    await k
      .updateTable('project_exports')
      .set({ status: 'failed', error: 'The export was interrupted too many times.', upload_url: null, finished_at: now, updated_at: now })
      .where('id', '=', row.id)
      .where('updated_at', '=', row.updated_at)
      .execute();
  }

  /** A job of the same export queued after `jobId`, still to run or running. */
  private async newerJob(jobId: number, exportId: number): Promise<boolean> {
    const newer = await this.deps.db.kysely
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', EXPORT_JOB)
      .where('payload', '=', JSON.stringify({ export_id: exportId }))
      .where('id', '>', jobId)
      .where('state', 'in', ['queued', 'running'])
      .executeTakeFirst();
    return !!newer;
  }

  /** One claimed job: starts the run unless a newer job has the export, builds, uploads, stores. */
  private async runJob(jobId: number, exportId: number): Promise<void> {
    const k = this.deps.db.kysely;
    if (await this.newerJob(jobId, exportId)) return;
    const row = await k.selectFrom('project_exports').selectAll().where('id', '=', exportId).executeTakeFirst();
    if (!row || (row.status !== 'queued' && row.status !== 'started')) return;
    const run = nowIso();
    const started = await k
      .updateTable('project_exports')
      .set({ status: 'started', started_at: run, error: null, updated_at: run })
      .where('id', '=', row.id)
      .where('updated_at', '=', row.updated_at)
      .where('status', 'in', ['queued', 'started'])
      .executeTakeFirst();
    if (Number(started.numUpdatedRows) === 0) return; // a POST came in between: its job runs it
    const log = this.deps.log.child({ project: row.project_id, export: row.id });
    const project = await k.selectFrom('projects').selectAll().where('id', '=', row.project_id).executeTakeFirst();
    if (!project) return;
    const namespace = await k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    const fullPath = `${namespace.full_path}/${project.path}`;
    const tmpRoot = path.join(this.deps.config.dataDir, 'tmp');
    await fs.promises.mkdir(tmpRoot, { recursive: true });
    const work = await fs.promises.mkdtemp(path.join(tmpRoot, TMP_PREFIX));
    let storedKey: string | null = null;
    try {
      const s = await this.deps.settings.get();
      const maxBytes = Number(s.max_export_size ?? 0) * 1024 * 1024;
      const archive = path.join(work, 'export.tar.gz');
      let size: number;
      try {
        size = await buildArchive(this.deps, project, path.join(work, 'archive'), archive, {
          description: row.description ?? undefined,
          maxBytes: Math.max(maxBytes, 0),
        });
      } catch (e) {
        if (e instanceof ExportTooLargeError) {
          log.warn({ maxBytes }, 'project export over max_export_size');
          await this.fail(row.id, run, e.message);
          return;
        }
        throw e;
      }
      if (row.upload_url) {
        const problem = await this.upload(row, archive);
        if (problem) {
          log.warn({ error: problem }, 'project export upload failed');
          await this.fail(row.id, run, problem);
          return;
        }
      }
      const key = `exports/${project.id}/${crypto.randomBytes(16).toString('hex')}.tar.gz`;
      await this.deps.store.putFile(key, archive, { contentType: 'application/gzip' });
      storedKey = key;
      const finished = nowIso();
      const done = await k.transaction().execute(async (trx) => {
        const current = await trx
          .selectFrom('project_exports')
          .select(['store_key'])
          .where('id', '=', row.id)
          .where('status', '=', 'started')
          .where('started_at', '=', run)
          .executeTakeFirst();
        if (!current) return false;
        await trx
          .updateTable('project_exports')
          .set({
            status: 'finished',
            store_key: key,
            file_name: exportFileName(fullPath),
            size,
            error: null,
            upload_url: null,
            expires_at: new Date(Date.now() + this.deps.config.exportTtlHours * 3_600_000).toISOString(),
            finished_at: finished,
            updated_at: finished,
          })
          .where('id', '=', row.id)
          .where('status', '=', 'started')
          .where('started_at', '=', run)
          .execute();
        if (current.store_key && current.store_key !== key) await queueBlobDeletion(trx, [current.store_key]);
        return true;
      });
      if (done) {
        storedKey = null;
        log.info({ size }, 'project export finished');
      }
    } catch (e) {
      const message = redactUrls(e instanceof Error ? e.message : String(e));
      log.error({ err: { message }, error: message }, 'project export failed');
      await this.fail(row.id, run, message);
    } finally {
      // a run that lost its row (a new request, the project deleted) leaves nothing behind
      if (storedKey) await this.deps.store.delete(storedKey).catch((e) => log.warn({ err: e }, 'removing a discarded export archive failed'));
      await fs.promises.rm(work, { recursive: true, force: true });
    }
  }

  /** Sends the archive to upload[url]; null when the server took it, else the reason. */
  private async upload(row: ProjectExportRow, file: string): Promise<string | null> {
    let url: string;
    try {
      url = this.deps.box.open(row.upload_url!);
    } catch {
      return 'Error uploading the project: the upload URL cannot be read';
    }
    try {
      const res = await this.deps.outbound.sendFile({
        url,
        method: row.upload_method === 'POST' ? 'POST' : 'PUT',
        headers: { 'Content-Type': 'application/gzip' },
        file,
        rules: await this.uploadRules(),
        timeoutMs: UPLOAD_TIMEOUT_MS,
      });
      if (res.status >= 200 && res.status < 300) return null;
      return `Error uploading the project. Code ${res.status}: ${http.STATUS_CODES[res.status] ?? 'Unknown'}`;
    } catch (e) {
      if (e instanceof OutboundError || e instanceof Error) return uploadError(e);
      return uploadError(String(e));
    }
  }

  /** The run `run` of export `id` failed (nothing written when the row moved on to another run). */
  private async fail(id: number, run: string, error: string): Promise<void> {
    const now = nowIso();
    await this.deps.db.kysely
      .updateTable('project_exports')
      .set({ status: 'failed', error: error.slice(0, 1000), upload_url: null, finished_at: now, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'started')
      .where('started_at', '=', run)
      .execute();
  }

  /**
   * The expiry sweep: expired archives leave the store (answers how many), and temporary directories of
   * exports whose process died (older than a day) leave the disk.
   */
  async removeExpired(limit = 500): Promise<number> {
    await this.removeStaleTmp().catch((e) => this.deps.log.warn({ err: e }, 'removing stale export directories failed'));
    const k = this.deps.db.kysely;
    const now = nowIso();
    const rows = await k
      .selectFrom('project_exports')
      .select(['id', 'store_key', 'status', 'expires_at'])
      .where('store_key', 'is not', null)
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    let removed = 0;
    for (const r of rows) {
      await k.transaction().execute(async (trx) => {
        const at = nowIso();
        const reset = await trx
          .updateTable('project_exports')
          .set({ store_key: null, file_name: null, size: null, expires_at: null, updated_at: at })
          .where('id', '=', r.id)
          .where('store_key', '=', r.store_key)
          .executeTakeFirst();
        if (Number(reset.numUpdatedRows) === 0) return;
        // a finished export whose archive is gone is no export; a run in progress keeps its status
        await trx.updateTable('project_exports').set({ status: 'none', error: null }).where('id', '=', r.id).where('status', '=', 'finished').execute();
        await queueBlobDeletion(trx, [r.store_key!]);
        removed++;
      });
    }
    return removed;
  }

  private async removeStaleTmp(): Promise<void> {
    const tmpRoot = path.join(this.deps.config.dataDir, 'tmp');
    const names = await fs.promises.readdir(tmpRoot).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(TMP_PREFIX)) continue;
      const dir = path.join(tmpRoot, name);
      const st = await fs.promises.lstat(dir).catch(() => null);
      if (st?.isDirectory() && Date.now() - st.mtimeMs > STALE_TMP_MS) await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }

  /** Resolves when the exports this process started are done (tests, shutdown). */
  async idle(): Promise<void> {
    await this.background.idle();
  }
}
