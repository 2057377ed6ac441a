// Job artifacts (GitLab Ci::JobArtifact, Ci::JobArtifacts::CreateService / DeleteService /
// ExpireProjectBuildArtifactsService / DestroyAllExpiredService): the files a job uploads, kept in the
// blob store, downloaded whole or one file at a time, kept, deleted or expired.
// See docs/design-notes.md, CI.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { CiBuildRow, CiJobArtifactRow, Database, ProjectRow } from '../../../db/schema.ts';
import { isInt32, isUniqueViolation } from '../../../db/sql.ts';
import { DomainError, Errors } from '../../../lib/errors.ts';
import { safeEqual } from '../../../lib/secrets.ts';
import { nowIso } from '../../../lib/time.ts';
import { BlobTooLargeError } from '../../../storage/blob-store.ts';
import { spool } from '../../../storage/local-store.ts';
import type { Actor } from '../../access/actor.ts';
import type { ResolvedProject } from '../../access/resolve.ts';
import { settingsOf } from '../../core/project-settings.ts';
import type { CiDeps } from '../deps.ts';
import { jobOptions } from '../job-options.ts';
import { expiryFrom } from '../../../lib/duration.ts';
import { BadArchiveError, eachEntry, openZipBlob, validateArchive } from './zip.ts';
import { defineSweep } from '../../../jobs/registry.ts';

/** Ci::JobArtifact.file_types */
export const FILE_TYPES = [
  'archive',
  'metadata',
  'trace',
  'junit',
  'sast',
  'dependency_scanning',
  'container_scanning',
  'dast',
  'codequality',
  'license_scanning',
  'performance',
  'metrics',
  'metrics_referee',
  'network_referee',
  'lsif',
  'dotenv',
  'cobertura',
  'terraform',
  'accessibility',
  'cluster_applications',
  'secret_detection',
  'requirements',
  'coverage_fuzzing',
  'browser_performance',
  'load_performance',
  'api_fuzzing',
  'cluster_image_scanning',
  'cyclonedx',
  'requirements_v2',
  'annotations',
  'repository_xray',
  'jacoco',
] as const;
/** Ci::JobArtifact.file_formats */
export const FILE_FORMATS = ['raw', 'zip', 'gzip'] as const;

/** One entry of the job payload's `dependencies` (Entities::Ci::JobRequest::Dependency). */
export interface DependencyEntity {
  id: number;
  name: string;
  /** the running (consuming) job's own token: the runner downloads with it (authenticate_job_via_dependent_job!) */
  token: string;
  /** only when the dependency has an archive (`available_artifacts?`) */
  artifacts_file?: { filename: string; size: number };
}

export interface UploadParams {
  artifact_type: string;
  artifact_format: string;
  expire_in?: string;
}

/** A blob to send: streamed by the route, or a URL to redirect to (S3 direct download). */
export interface Download {
  artifact: CiJobArtifactRow;
  redirect: string | null;
}

const RUNNING = 'running';
/** the expiry a claimed row carries while a worker removes it: before any real time, so still expired */
const CLAIM_PREFIX = '0000-00-00T00:00:00.000Z#';
const BATCH = 100;
/** how long a claim keeps other workers off a row (a blob delete takes far less) */
const CLAIM_LEASE_MS = 10 * 60_000;

export class ArtifactsService {
  /** expired artifacts are found by the clock */
  readonly expiry = defineSweep({ name: 'artifact expiry', everyMs: 60_000, run: () => this.removeExpired() });

  constructor(protected readonly deps: CiDeps) {}

  private get k(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  // ---- permissions ---------------------------------------------------------------------------

  /**
   * ProjectPolicy read_build: the builds feature on (private: members), Reporter and up always, other
   * readers of the project when public_jobs is on. A job token reads only its own project.
   */
  canReadBuild(actor: Actor, r: ResolvedProject): boolean {
    if (actor.isAdmin) return true;
    if (!r.access.abilities.has('read_project')) return false;
    const s = settingsOf(r.project);
    const level = s.builds_access_level as string;
    if (level === 'disabled') return false;
    if (level === 'private' && r.access.level < 10) return false;
    if (r.access.level >= 20) return true;
    return s.public_jobs === true;
  }

  /**
   * The project for an artifacts route: 404 when invisible (for a job token: outside the project's job token
   * scope, which the policy applies), 403 without read_build.
   */
  async project(actor: Actor, id: string): Promise<ResolvedProject> {
    const r = await this.deps.resolve.project(actor, id);
    if (!this.canReadBuild(actor, r)) throw Errors.forbidden();
    return r;
  }

  /** find_build!: a job (not a bridge) of the project, else 404 "Not found". */
  async findBuild(project: ProjectRow, jobId: number): Promise<CiBuildRow> {
    if (!isInt32(jobId)) throw Errors.recordNotFound();
    const job = await this.k
      .selectFrom('ci_builds')
      .selectAll()
      .where('id', '=', jobId)
      .where('project_id', '=', project.id)
      .where('type', '=', 'build')
      .executeTakeFirst();
    if (!job) throw Errors.recordNotFound();
    return job;
  }

  async archiveOf(jobId: number): Promise<CiJobArtifactRow | undefined> {
    return this.k.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', jobId).where('file_type', '=', 'archive').executeTakeFirst();
  }

  /** present_artifacts_file!: the archive to stream, or a redirect to it; 404 "Not Found" without one. */
  async download(job: CiBuildRow, directDownload = true): Promise<Download> {
    const artifact = job.erased_at ? undefined : await this.archiveOf(job.id);
    if (!artifact) throw Errors.notFound();
    const redirect = directDownload
      ? await this.deps.store.downloadUrl(artifact.store_key, { fileName: artifact.file_name, contentType: 'application/octet-stream', ttlSeconds: 600 })
      : null;
    return { artifact, redirect };
  }

  async open(artifact: CiJobArtifactRow): Promise<Readable> {
    const s = await this.deps.store.get(artifact.store_key);
    if (!s) throw Errors.notFound();
    return s;
  }

  /**
   * The files of an archive for the job page's browser (the artifacts browser's list): names and sizes, directories
   * left out, at most `limit` (and whether there were more).
   */
  async entries(artifact: CiJobArtifactRow, limit = 1000): Promise<{ files: { path: string; size: number }[]; more: boolean }> {
    const zip = await openZipBlob(this.deps.store, artifact.store_key, artifact.size);
    const files: { path: string; size: number }[] = [];
    let more = false;
    try {
      await eachEntry(zip, (e) => {
        if (e.fileName.endsWith('/')) return false;
        if (files.length >= limit) {
          more = true;
          return true;
        }
        files.push({ path: e.fileName, size: e.uncompressedSize });
        return false;
      });
    } finally {
      zip.close();
    }
    return { files, more };
  }

  /**
   * Project#latest_successful_build_for_ref: the newest successful pipeline of the ref (branch or tag,
   * by creation time; not a child pipeline), then the job of that name with an archive in it or its
   * child pipelines, the parent's first. 404 "Not found" otherwise.
   */
  async latestSuccessfulBuildForRef(project: ProjectRow, jobName: string, ref: string): Promise<CiBuildRow> {
    const pipeline = await this.k
      .selectFrom('ci_pipelines')
      .select(['id'])
      .where('project_id', '=', project.id)
      .where('ref', '=', ref)
      .where('status', '=', 'success')
      .where('source', '!=', 'parent_pipeline')
      .where('parent_pipeline_id', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (!pipeline) throw Errors.recordNotFound();
    // the pipeline and its descendants, by depth (the parent's job wins)
    const levels: number[][] = [[pipeline.id]];
    for (let depth = 0; depth < 10; depth++) {
      const children = await this.k.selectFrom('ci_pipelines').select('id').where('parent_pipeline_id', 'in', levels[depth]!).execute();
      if (!children.length) break;
      levels.push(children.map((c) => c.id));
    }
    for (const ids of levels) {
      const job = await this.k
        .selectFrom('ci_builds')
        .innerJoin('ci_job_artifacts', (j) => j.onRef('ci_job_artifacts.job_id', '=', 'ci_builds.id').on('ci_job_artifacts.file_type', '=', 'archive'))
        .selectAll('ci_builds')
        .where('ci_builds.pipeline_id', 'in', ids)
        .where('ci_builds.name', '=', jobName)
        .where('ci_builds.type', '=', 'build')
        .where('ci_builds.erased_at', 'is', null)
        .where((eb) => eb.or([eb('ci_job_artifacts.expire_at', 'is', null), eb('ci_job_artifacts.expire_at', '>', nowIso())]))
        .orderBy('ci_builds.retried', 'asc')
        .orderBy('ci_builds.pipeline_id', 'asc')
        .orderBy('ci_builds.id', 'desc')
        .executeTakeFirst();
      if (job) return job;
    }
    throw Errors.recordNotFound();
  }

  // ---- the runner's side ---------------------------------------------------------------------

  /**
   * authenticate_job!: the job of the URL, holding `token`, running. 403 otherwise (GitLab answers
   * 403 rather than 404 so that a runner stops the job), with Job-Status when it is not running.
   */
  async authenticateJob(jobId: number, token: string | undefined): Promise<CiBuildRow> {
    if (!isInt32(jobId)) throw Errors.forbidden();
    const job = await this.k.selectFrom('ci_builds').selectAll().where('id', '=', jobId).executeTakeFirst();
    if (!job || !token) throw Errors.forbidden();
    if (!job.token_digest || !safeEqual(job.token_digest, this.deps.digest(token))) throw Errors.forbidden();
    if (job.erased_at) throw Errors.forbidden('Job has been erased!');
    if (job.status !== RUNNING) throw new DomainError('forbidden', 403, 'Job is not processing on runner', { 'job-status': job.status });
    return job;
  }

  /**
   * GET /jobs/:id/artifacts: the job's own running token, or the token of a running job of the same
   * pipeline that consumes it (authenticate_job_via_dependent_job!; GitLab asks read_build of the
   * consumer's user, Hearth asks more: the same pipeline).
   */
  async authenticateDownload(jobId: number, token: string | undefined): Promise<CiBuildRow> {
    if (!isInt32(jobId)) throw Errors.forbidden();
    const job = await this.k.selectFrom('ci_builds').selectAll().where('id', '=', jobId).executeTakeFirst();
    if (!job || !token) throw Errors.forbidden();
    const consumer = await this.k.selectFrom('ci_builds').selectAll().where('token_digest', '=', this.deps.digest(token)).executeTakeFirst();
    if (!consumer || consumer.status !== RUNNING) throw Errors.forbidden();
    if (consumer.id !== job.id && consumer.pipeline_id !== job.pipeline_id) throw Errors.forbidden();
    if (job.erased_at) throw Errors.forbidden('Job has been erased!');
    return job;
  }

  /**
   * Ci::JobArtifacts::CreateService#execute for a body being received: spooled to a temporary file
   * under the data directory (size limit, SHA-256), an archive checked, then stored and recorded (one
   * row per job and type). The same bytes again are a success; other bytes for a type the job already
   * has are 400, as GitLab's unique index answers.
   */
  async upload(job: CiBuildRow, file: { stream: Readable; filename: string }, params: UploadParams): Promise<CiJobArtifactRow | null> {
    const settings = await this.deps.settings.get();
    const expireIn = params.expire_in ?? settings.default_artifacts_expire_in;
    const expireAt = expiryFrom(expireIn);
    if (expireAt === undefined) {
      file.stream.resume();
      throw Errors.param('expire_in is invalid');
    }
    const maxBytes = Number(settings.max_artifacts_size) * 1024 * 1024;
    const tmpDir = path.join(this.deps.config.dataDir, 'tmp');
    await fs.mkdir(tmpDir, { recursive: true });
    const temp = path.join(tmpDir, `artifact-${randomBytes(12).toString('hex')}`);
    try {
      let spooled: { size: number; sha256: string };
      try {
        spooled = await spool(file.stream, temp, maxBytes);
      } catch (err) {
        if (err instanceof BlobTooLargeError) throw Errors.tooLarge();
        throw err;
      }
      const existing = await this.k
        .selectFrom('ci_job_artifacts')
        .selectAll()
        .where('job_id', '=', job.id)
        .where('file_type', '=', params.artifact_type)
        .executeTakeFirst();
      if (existing) {
        if (existing.file_sha256 === spooled.sha256) return null;
        throw Errors.refused('another artifact of the same type already exists');
      }
      if (params.artifact_type === 'archive' || params.artifact_format === 'zip') {
        try {
          await validateArchive(temp);
        } catch (err) {
          if (err instanceof BadArchiveError) throw Errors.badRequest(err.message);
          throw err;
        }
      }
      const ext = params.artifact_format === 'zip' ? '.zip' : params.artifact_format === 'gzip' ? '.gz' : '';
      const key = `artifacts/${job.project_id}/${job.id}/${params.artifact_type}-${randomBytes(8).toString('hex')}${ext}`;
      await this.deps.store.putFile(key, temp, { contentType: 'application/octet-stream' });
      const fileName = safeFileName(file.filename) ?? (params.artifact_type === 'archive' ? 'artifacts.zip' : `${params.artifact_type}${ext}`);
      try {
        return await this.k.transaction().execute(async (trx) => {
          await trx.updateTable('ci_builds').set({ artifacts_expire_at: expireAt }).where('id', '=', job.id).execute();
          return trx
            .insertInto('ci_job_artifacts')
            .values({
              project_id: job.project_id,
              job_id: job.id,
              file_type: params.artifact_type,
              file_format: params.artifact_format,
              file_name: fileName,
              size: spooled.size,
              file_sha256: spooled.sha256,
              store_key: key,
              expire_at: expireAt,
              created_at: nowIso(),
            })
            .returningAll()
            .executeTakeFirstOrThrow();
        });
      } catch (err) {
        await this.deps.store.delete(key);
        if (isUniqueViolation(err)) throw Errors.refused('another artifact of the same type already exists');
        throw err;
      }
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  /**
   * The jobs whose artifacts `job` receives, for its job payload: `options.dependencies` when given,
   * else the `needs` with `artifacts: true`, else every job of the earlier stages (latest try of each
   * name, same pipeline). `token` is `job`'s own token (plain; only its digest is stored).
   */
  async forDependencies(job: CiBuildRow, token: string, pipelineJobs?: CiBuildRow[]): Promise<DependencyEntity[]> {
    const opts = jobOptions(job.options);
    // a job of the first stage without needs depends on none (dependencies name jobs of earlier stages only)
    if (!opts.needs && job.stage_idx === 0) return [];
    // the pipeline's current jobs (not retried) when the caller holds them, else read
    const all = pipelineJobs
      ? pipelineJobs.filter((j) => j.type === 'build' && j.retried === 0 && j.id !== job.id).sort((a, b) => a.id - b.id)
      : await this.k
          .selectFrom('ci_builds')
          .selectAll()
          .where('pipeline_id', '=', job.pipeline_id)
          .where('type', '=', 'build')
          .where('retried', '=', 0)
          .where('id', '!=', job.id)
          .orderBy('id')
          .execute();
    let deps: CiBuildRow[];
    if (opts.dependencies) {
      const names = new Set(opts.dependencies);
      deps = all.filter((j) => names.has(j.name) && j.stage_idx < job.stage_idx);
    } else if (opts.needs) {
      const names = new Set(opts.needs.filter((n) => n.artifacts !== false).map((n) => n.job));
      deps = all.filter((j) => names.has(j.name));
    } else {
      deps = all.filter((j) => j.stage_idx < job.stage_idx);
    }
    if (!deps.length) return [];
    const archives = await this.k
      .selectFrom('ci_job_artifacts')
      .selectAll()
      .where(
        'job_id',
        'in',
        deps.map((d) => d.id),
      )
      .where('file_type', '=', 'archive')
      .execute();
    const byJob = new Map(archives.map((a) => [a.job_id, a]));
    const now = nowIso();
    return deps.map((d) => {
      const a = byJob.get(d.id);
      const available = a && !d.erased_at && (a.expire_at === null || a.expire_at > now);
      return { id: d.id, name: d.name, token, ...(available ? { artifacts_file: { filename: a.file_name, size: a.size } } : {}) };
    });
  }

  // ---- keep, delete, expire ------------------------------------------------------------------

  /** Ci::Build#keep_artifacts!: no expiry for the job and its artifacts; 404 without an available archive. */
  async keep(job: CiBuildRow): Promise<CiBuildRow> {
    const archive = job.erased_at ? undefined : await this.archiveOf(job.id);
    const expired = job.artifacts_expire_at !== null && job.artifacts_expire_at <= nowIso();
    if (!archive || expired || (archive.expire_at !== null && archive.expire_at <= nowIso())) throw Errors.notFound();
    return this.k.transaction().execute(async (trx) => {
      // not a row already expired (a worker may hold it): only those still to expire are kept
      const now = nowIso();
      await trx
        .updateTable('ci_job_artifacts')
        .set({ expire_at: null })
        .where('job_id', '=', job.id)
        .where((eb) => eb.or([eb('expire_at', 'is', null), eb('expire_at', '>', now)]))
        .execute();
      return trx.updateTable('ci_builds').set({ artifacts_expire_at: null }).where('id', '=', job.id).returningAll().executeTakeFirstOrThrow();
    });
  }

  /** Ci::JobArtifacts::DeleteService: every artifact of the job but its log (rows, then blobs). */
  async deleteForJob(job: CiBuildRow): Promise<void> {
    const rows = await this.k.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', job.id).where('file_type', '!=', 'trace').execute();
    await this.destroy(rows);
  }

  /** Ci::BuildEraseService's share (J's erase): every artifact of the job. */
  async eraseJob(job: CiBuildRow): Promise<void> {
    const rows = await this.k.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', job.id).execute();
    await this.destroy(rows);
  }

  /** Rows first (in one transaction), then their blobs: a reader never finds a row without its bytes. */
  private async destroy(rows: CiJobArtifactRow[]): Promise<void> {
    if (!rows.length) return;
    await this.k
      .deleteFrom('ci_job_artifacts')
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
    for (const r of rows) await this.deps.store.delete(r.store_key);
  }

  /**
   * The pipelines whose artifacts are locked (keep_latest_artifact, on for the instance and the
   * project): the newest successful pipeline of each ref, with its child pipelines.
   */
  async lockedPipelines(project: ProjectRow): Promise<Set<number>> {
    const settings = await this.deps.settings.get();
    if (!settings.keep_latest_artifact || settingsOf(project).keep_latest_artifact === false) return new Set();
    const pipelines = await this.k
      .selectFrom('ci_pipelines')
      .select(['id', 'ref', 'tag', 'status', 'parent_pipeline_id', 'created_at'])
      .where('project_id', '=', project.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const locked = new Set<number>();
    const seen = new Set<string>();
    for (const p of pipelines) {
      if (p.parent_pipeline_id !== null || p.status !== 'success') continue;
      const ref = `${p.tag}:${p.ref}`;
      if (seen.has(ref)) continue;
      seen.add(ref);
      locked.add(p.id);
    }
    // children (and theirs) of a locked pipeline
    let grew = true;
    while (grew) {
      grew = false;
      for (const p of pipelines) {
        if (p.parent_pipeline_id !== null && locked.has(p.parent_pipeline_id) && !locked.has(p.id)) {
          locked.add(p.id);
          grew = true;
        }
      }
    }
    return locked;
  }

  /**
   * ExpireProjectBuildArtifactsService: every erasable artifact (not a log) of the project expires now,
   * except those of locked pipelines; removeExpired() deletes them. Answers how many rows it expired.
   */
  async expireProject(project: ProjectRow): Promise<number> {
    const locked = [...(await this.lockedPipelines(project))];
    const now = nowIso();
    return this.k.transaction().execute(async (trx) => {
      const jobs = trx
        .selectFrom('ci_builds')
        .select('id')
        .where('project_id', '=', project.id)
        .$if(locked.length > 0, (q) => q.where('pipeline_id', 'not in', locked));
      const res = await trx
        .updateTable('ci_job_artifacts')
        .set({ expire_at: now })
        .where('project_id', '=', project.id)
        .where('file_type', '!=', 'trace')
        .where('job_id', 'in', jobs)
        .where((eb) => eb.or([eb('expire_at', 'is', null), eb('expire_at', '>', now)]))
        .executeTakeFirst();
      await trx
        .updateTable('ci_builds')
        .set({ artifacts_expire_at: now })
        .where('id', 'in', trx.selectFrom('ci_job_artifacts').select('job_id').where('project_id', '=', project.id).where('expire_at', '=', now))
        .execute();
      return Number(res.numUpdatedRows);
    });
  }

  /**
   * One round of the expiry cleanup (worker): expired artifacts (never a log, never a locked
   * pipeline's) are claimed one by one (their expiry swapped for a claim mark with its time,
   * compare-and-set, so two workers never remove the same row), their blob removed, then the row. A
   * worker that dies after its claim leaves a mark that is still expired: the lease over, a later round
   * takes it. Answers how many it removed.
   */
  /** Spooled uploads older than a day (left by a process that died mid-upload) go. */
  private async sweepSpooled(): Promise<void> {
    const dir = path.join(this.deps.config.dataDir, 'tmp');
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    const before = Date.now() - 86_400_000;
    for (const n of names) {
      if (!n.startsWith('artifact-')) continue;
      const file = path.join(dir, n);
      const st = await fs.stat(file).catch(() => null);
      if (st && st.mtimeMs < before) await fs.rm(file, { force: true });
    }
  }

  async removeExpired(now = nowIso()): Promise<number> {
    await this.sweepSpooled();
    let removed = 0;
    let after = 0;
    const lockedByProject = new Map<number, Set<number>>();
    for (;;) {
      const rows = await this.k
        .selectFrom('ci_job_artifacts')
        .innerJoin('ci_builds', 'ci_builds.id', 'ci_job_artifacts.job_id')
        .selectAll('ci_job_artifacts')
        .select('ci_builds.pipeline_id')
        .where('ci_job_artifacts.expire_at', 'is not', null)
        .where('ci_job_artifacts.expire_at', '<=', now)
        .where('ci_job_artifacts.file_type', '!=', 'trace')
        .where('ci_job_artifacts.id', '>', after)
        .orderBy('ci_job_artifacts.id')
        .limit(BATCH)
        .execute();
      if (!rows.length) break;
      after = rows[rows.length - 1]!.id;
      for (const row of rows) {
        let locked = lockedByProject.get(row.project_id);
        if (!locked) {
          const project = await this.k.selectFrom('projects').selectAll().where('id', '=', row.project_id).executeTakeFirst();
          locked = project ? await this.lockedPipelines(project) : new Set();
          lockedByProject.set(row.project_id, locked);
        }
        if (locked.has(row.pipeline_id)) continue;
        // another worker's claim holds for CLAIM_LEASE_MS; after that it is taken as left behind
        if (row.expire_at!.startsWith(CLAIM_PREFIX)) {
          const at = Number(row.expire_at!.slice(CLAIM_PREFIX.length).split('.')[0]);
          if (Number.isFinite(at) && Date.now() - at < CLAIM_LEASE_MS) continue;
        }
        const claim = `${CLAIM_PREFIX}${Date.now()}.${randomBytes(8).toString('hex')}`;
        const got = await this.k
          .updateTable('ci_job_artifacts')
          .set({ expire_at: claim })
          .where('id', '=', row.id)
          .where('expire_at', '=', row.expire_at)
          .executeTakeFirst();
        if (Number(got.numUpdatedRows) !== 1) continue;
        await this.deps.store.delete(row.store_key);
        const gone = await this.k.deleteFrom('ci_job_artifacts').where('id', '=', row.id).where('expire_at', '=', claim).executeTakeFirst();
        if (Number(gone.numDeletedRows) === 1) removed++;
      }
    }
    return removed;
  }
}

/** The uploaded file's base name when it is a plain one. */
function safeFileName(name: string | undefined): string | null {
  if (!name) return null;
  const base = name.split(/[\\/]/).pop() ?? '';
  if (!base || base === '.' || base === '..' || base.length > 255 || /[\0-\x1f]/.test(base)) return null;
  return base;
}
