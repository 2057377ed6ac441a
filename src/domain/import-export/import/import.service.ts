// Project imports (GitLab lib/api/project_import.rb, Import::GitlabProjects::CreateProjectService,
// RepositoryImportWorker): from an uploaded file, a remote URL or an S3 object. The request creates the
// project (import_status scheduled) and stores or records the archive's source; the work runs as an
// outbox job (kind project_import): fetch, extract safely, restore the repository, apply project.json
// (override_params win), import the relations.
//
// The request (CreateProjectService): the namespace (an id or a full path the caller may see; default
// the caller's own), the project made by the one creation path (ProjectsService.create: its checks and
// messages, the first of them as GitLab's 400 `{"message": "..."}`), and in the same transaction the
// import row (scheduled, a random correlation id, the source, override_params as JSON, the source's
// parameters sealed), the uploaded archive put in the blob store, and the job. `overwrite` with a project
// at that path: the new project is made at `<path>-<random hex>` and, once its import finished, takes
// the old one's name and path while the old one is deleted (Projects::OverwriteProjectService), when the
// importer may remove it.
//
// The job: started → the archive into a temporary file → extractArchive (size and time limits) →
// VERSION → project.bundle restored → project.json's attributes under override_params → the relations
// (importTree; items that fail are failed_relations) → finished. A fatal error: failed with the reason
// in import_error, the relations written so far removed (clearTree), the repository emptied. A claimed
// job holds a lease it renews while it runs; a process that died mid-import leaves it to be claimed again:
// the import then starts over from a clean project (MAX_CLAIMS runs in all, then failed by giveUp).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Database, NamespaceRow, ProjectImportRow, ProjectRow, UserRow } from '../../../db/schema.ts';
import { ciEquals } from '../../../db/sql.ts';
import { Type } from 'typebox';
import { Background } from '../../../jobs/background.ts';
import { defineJob, defineSweep, jobKind } from '../../../jobs/registry.ts';
import { DomainError, Errors } from '../../../lib/errors.ts';
import { OutboundError, type OutboundRules } from '../../../lib/outbound.ts';
import { nowIso } from '../../../lib/time.ts';
import { queueBlobDeletion } from '../../blobs/blob-deletions.ts';
import { userActor, type Actor } from '../../access/actor.ts';
import { traversalIds } from '../../access/policy.ts';
import { restrictedFor } from '../../access/visibility.ts';
import { clampToNamespace } from '../../core/visibility-levels.ts';
import { projectPayload, recordSystemEvent } from '../../core/system-events.ts';
import { fullMessages } from '../../projects/forks.service.ts';
import { deleteProjectRows, removeRepositories } from '../../projects/project-destroy.ts';
import { projectOwners } from '../../projects/project-owners.ts';
import { settingsChanges, settingsOf, validateSettings } from '../../core/project-settings.ts';
import { VISIBILITY_LEVELS } from '../../core/settings-definitions.ts';
import { BUNDLE_FILE, EXPORT_VERSION, VERSION_FILE, type FailedRelation } from '../archive/layout.ts';
import { restoreBundle } from '../archive/bundle.ts';
import { extractArchive } from '../archive/extract.ts';
import type { ImportExportDeps } from '../deps.ts';
import { clearTree, importTree, readProjectAttributes } from '../tree/index.ts';
import { lenientParams, overrideParams } from './override-params.ts';
import { RELATION_IMPORT_JOB } from './relation-import.service.ts';
import { removeStaleWork, WORK_DIR_SWEEP_MS } from './work-dirs.ts';
import { checkS3, contentLengthOf, fetchS3, humanSize, remoteFileErrors, remoteLimit, type S3Source } from './sources.ts';

export interface ImportRequest {
  path: string;
  name?: string;
  /** id or full path; default the caller's namespace */
  namespace?: string;
  overwrite?: boolean;
  override_params?: Record<string, unknown>;
}

export interface RemoteImportRequest extends ImportRequest {
  url: string;
}

export interface S3ImportRequest extends ImportRequest {
  access_key_id: string;
  secret_access_key: string;
  bucket_name: string;
  file_key: string;
  region: string;
}

/** What the import-result record is made of. */
export interface ImportState {
  project: ProjectRow;
  namespace: NamespaceRow;
  state: ProjectImportRow | null;
  /** "Group / Subgroup / Project"'s namespace part: the group names, or the owner's name */
  namespaceFullName?: string;
  /** read_import_error: the caller sees import_error as it is (else GitLab's "Ask a maintainer …") */
  canReadError?: boolean;
}

export const IMPORT_JOB = 'project_import';
const ImportJob = jobKind(IMPORT_JOB, Type.Object({ project_id: Type.Number() }));
/** a claimed import is this worker's for so long; renewed every LEASE_RENEW_MS while it runs */
const LEASE_MS = 5 * 60_000;
const LEASE_RENEW_MS = 60_000;
/** the HEAD of a remote archive at request time (GitLab: 1 s) */
const HEAD_TIMEOUT_MS = 10_000;
/** the download of a remote archive: the whole transfer, and the longest silence */
const DOWNLOAD_TIMEOUT_MS = 6 * 3600_000;
const DOWNLOAD_IDLE_MS = 120_000;
const MAX_FAILED_RELATIONS = 100;
export const HIDDEN_IMPORT_ERROR = 'Ask a maintainer to check the import status for more details.';
const OWNER = 50;
const MAINTAINER = 40;

/** What the job needs to fetch the archive (sealed in source_params: URLs and credentials are secrets). */
interface SourceParams {
  url?: string;
  s3?: S3Source;
  /** overwrite: the path of the project this import replaces once finished */
  original_path?: string;
}

/** A reason the import fails with (import_error). */
class ImportFailure extends Error {}

const mib = (v: unknown) => Math.max(0, Number(v) || 0) * 1024 * 1024;

export class ImportsService {
  /** the outcome is the row's (import_status); an interrupted import starts over, up to MAX_CLAIMS times */
  private readonly background = new Background(
    () => this.runQueued(),
    (e) => this.deps.log.error({ err: e }, 'running project imports failed'),
  );
  readonly job = defineJob({
    kind: ImportJob,
    what: 'a project import',
    leaseMs: LEASE_MS,
    renewMs: LEASE_RENEW_MS,
    concurrency: 2,
    giveUp: (p) => this.giveUp(p.project_id),
    run: (p) => this.runOne(p.project_id),
  });

  /** what killed imports left in the work directory is found by the clock */
  readonly workDirs = defineSweep({ name: 'import work directories', everyMs: WORK_DIR_SWEEP_MS, run: () => this.removeStaleWork() });

  constructor(readonly deps: ImportExportDeps) {}

  // ---- requests ------------------------------------------------------------------------------

  /** `import_sources` must include gitlab_project (else 403, GitLab's forbidden!). */
  async assertEnabled(): Promise<void> {
    const s = await this.deps.settings.get();
    if (!(s.import_sources ?? []).includes('gitlab_project')) throw Errors.forbidden();
  }

  /** Where spooled uploads and the job's work go: `<dataDir>/tmp` (made when missing). */
  tmpDir(): string {
    const dir = path.join(this.deps.config.dataDir, 'tmp');
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  /** POST /projects/import: `file` is the spooled upload (a temporary file the service may move). */
  async importFile(actor: Actor, input: ImportRequest, file: { path: string; size: number }): Promise<ImportState> {
    await this.assertEnabled();
    return this.create(actor, input, 'file', {}, file);
  }

  /** POST /projects/remote-import */
  async importRemote(actor: Actor, input: RemoteImportRequest): Promise<ImportState> {
    await this.assertEnabled();
    const override = overrideParams(input.override_params);
    const s = await this.deps.settings.get();
    const rules = this.rules(s);
    // addressable_url (file_url): the URL may be requested under the outbound rules
    const blocked = await this.deps.outbound.check(input.url, rules);
    if (blocked) throw Errors.refused(`File url is blocked: ${blocked}`);
    // RemoteFileValidator on the HEAD's headers (a failed HEAD: its reason first, then the header checks)
    const errors: string[] = [];
    let headers: Record<string, string> = {};
    try {
      headers = (await this.deps.outbound.request({ method: 'HEAD', url: input.url, rules, timeoutMs: HEAD_TIMEOUT_MS, maxResponseBytes: 1024 })).headers;
    } catch (e) {
      errors.push(`Failed to retrive headers: ${e instanceof Error ? e.message : String(e)}`);
    }
    errors.push(...remoteFileErrors(contentLengthOf(headers['content-length']), headers['content-type'], remoteLimit(s.max_import_remote_file_size)));
    if (errors.length) throw Errors.refused(errors[0]);
    return this.create(actor, { ...input, override_params: override }, 'url', { url: input.url });
  }

  /** POST /projects/remote-import-s3 */
  async importS3(actor: Actor, input: S3ImportRequest): Promise<ImportState> {
    await this.assertEnabled();
    const override = overrideParams(input.override_params);
    const blank: string[] = [];
    for (const k of ['region', 'bucket_name', 'file_key', 'access_key_id', 'secret_access_key'] as const) {
      if (!String(input[k] ?? '').trim()) blank.push(`${k.charAt(0).toUpperCase()}${k.slice(1).replace(/_/g, ' ')} can't be blank`);
    }
    if (blank.length) throw Errors.refused(blank[0]);
    const src: S3Source = {
      region: input.region,
      bucket_name: input.bucket_name,
      file_key: input.file_key,
      access_key_id: input.access_key_id,
      secret_access_key: input.secret_access_key,
    };
    const s = await this.deps.settings.get();
    const errors = await checkS3(this.deps.config, src, remoteLimit(s.max_import_remote_file_size));
    if (errors.length) throw Errors.refused(errors[0]);
    return this.create(actor, { ...input, override_params: override }, 's3', { s3: src });
  }

  /** GET /projects/:id/import */
  async status(actor: Actor, idOrPath: string): Promise<ImportState> {
    const { project, namespace, access } = await this.deps.resolve.project(actor, idOrPath);
    const state = (await this.deps.db.kysely.selectFrom('project_imports').selectAll().where('project_id', '=', project.id).executeTakeFirst()) ?? null;
    return {
      project,
      namespace,
      state,
      namespaceFullName: await this.namespaceFullName(namespace),
      canReadError: actor.isAdmin || access.abilities.has('admin_project'),
    };
  }

  /** CreateProjectService with the source's parameters: the project, its import row, the archive, the job. */
  private async create(
    actor: Actor,
    input: ImportRequest,
    source: 'file' | 'url' | 's3',
    params: SourceParams,
    file?: { path: string; size: number },
  ): Promise<ImportState> {
    const me = actor.user!;
    const k = this.deps.db.kysely;
    const override = overrideParams(input.override_params);
    // validates_presence_of :path, :namespace
    if (!String(input.path ?? '').trim()) throw Errors.refused("Path can't be blank");
    const namespace =
      input.namespace !== undefined && input.namespace !== ''
        ? await this.findNamespace(actor, String(input.namespace))
        : await k.selectFrom('namespaces').selectAll().where('owner_id', '=', me.id).where('type', '=', 'User').executeTakeFirst();
    if (!namespace) throw Errors.refused("Namespace can't be blank");
    // Projects::CreateService: import_projects is a group's Maintainers' (creating projects may be
    // open to Developers; one who may not create at all gets the creation's "Namespace is not valid")
    if (namespace.type === 'Group' && !actor.isAdmin) {
      const access = await this.deps.policy.group(actor, namespace);
      if (access.abilities.has('create_projects') && access.level < MAINTAINER) throw Errors.refused('User is not allowed to import projects');
    }

    let projectPath = input.path;
    const sourceParams: SourceParams = { ...params };
    if (input.overwrite) {
      const existing = await k
        .selectFrom('projects')
        .select('id')
        .where('namespace_id', '=', namespace.id)
        .where(ciEquals('path', input.path))
        .executeTakeFirst();
      if (existing) {
        sourceParams.original_path = input.path;
        projectPath = `${input.path}-${crypto.randomBytes(16).toString('hex')}`;
      }
    }
    const { name: _n, path: _p, namespace_id: _ns, ...attributes } = override as Record<string, unknown>;
    let storeKey: string | null = null;
    let row: ProjectImportRow | null = null;
    try {
      const project = await this.deps.projects.create(
        actor,
        // override_params win, the name too (the request's `name` only when the override has none)
        { ...attributes, name: (typeof override.name === 'string' && override.name) || input.name || undefined, path: projectPath, namespace_id: namespace.id },
        {
          inTransaction: async (trx, created) => {
            const now = nowIso();
            if (file) {
              storeKey = `imports/${created.id}/${crypto.randomBytes(12).toString('hex')}.tar.gz`;
              await this.deps.store.putFile(storeKey, file.path, { contentType: 'application/gzip' });
            }
            row = await trx
              .insertInto('project_imports')
              .values({
                project_id: created.id,
                user_id: me.id,
                import_type: 'gitlab_project',
                source,
                source_params: Object.keys(sourceParams).length ? this.deps.box.seal(JSON.stringify(sourceParams)) : null,
                status: 'scheduled',
                correlation_id: crypto.randomBytes(16).toString('hex'),
                import_error: null,
                failed_relations: '[]',
                store_key: storeKey,
                override_params: JSON.stringify(override),
                created_at: now,
                updated_at: now,
                started_at: null,
                finished_at: null,
              })
              .returningAll()
              .executeTakeFirstOrThrow();
            await ImportJob.queue(trx, { project_id: created.id });
          },
        },
      );
      this.background.kick();
      return { project, namespace, state: row, namespaceFullName: await this.namespaceFullName(namespace), canReadError: true };
    } catch (e) {
      if (storeKey) await this.deps.store.delete(storeKey).catch(() => {});
      // CreateProjectService: error(project.errors.full_messages) — the first, as a 400 message
      if (e instanceof DomainError && e.kind === 'invalid') {
        throw Errors.refused(fullMessages(e.detail as Record<string, string[]>)[0] ?? '400 Bad request');
      }
      throw e;
    }
  }

  /** find_namespace!: an id or a full path the caller may see (their own namespace, a group they can read). */
  private async findNamespace(actor: Actor, key: string): Promise<NamespaceRow> {
    const q = this.deps.db.kysely.selectFrom('namespaces').selectAll();
    const ns = /^\d+$/.test(key)
      ? Number(key) <= 2 ** 31 - 1
        ? await q.where('id', '=', Number(key)).executeTakeFirst()
        : undefined
      : await q.where(ciEquals('full_path', key)).executeTakeFirst();
    if (ns) {
      if (ns.type === 'User' && (actor.isAdmin || ns.owner_id === actor.user!.id)) return ns;
      if (ns.type === 'Group' && (await this.deps.policy.group(actor, ns)).abilities.has('read_group')) return ns;
    }
    throw Errors.notFound('Namespace');
  }

  private async namespaceFullName(ns: NamespaceRow): Promise<string> {
    const k = this.deps.db.kysely;
    if (ns.type === 'User') {
      const owner = ns.owner_id === null ? undefined : await k.selectFrom('users').select('name').where('id', '=', ns.owner_id).executeTakeFirst();
      return owner?.name ?? ns.name;
    }
    const ids = traversalIds(ns);
    const rows = await k.selectFrom('namespaces').select(['id', 'name']).where('id', 'in', ids).execute();
    const names = new Map(rows.map((r) => [r.id, r.name]));
    return ids.map((id) => names.get(id) ?? '').join(' / ');
  }

  private rules(s: Record<string, unknown>): OutboundRules {
    return {
      allowLocal: Boolean(s.allow_local_requests_from_web_hooks_and_services),
      allowlist: (s.outbound_local_requests_whitelist as string[] | undefined) ?? [],
    };
  }

  // ---- the job -------------------------------------------------------------------------------

  /** The worker's round: runs queued imports; answers how many it ran. */
  runQueued(limit?: number): Promise<number> {
    return this.deps.jobs.round(IMPORT_JOB, limit);
  }

  /** An import whose process died MAX_CLAIMS times: failed, nothing of it left. */
  private async giveUp(id: number): Promise<void> {
    const k = this.deps.db.kysely;
    const row = await k.selectFrom('project_imports').selectAll().where('project_id', '=', id).executeTakeFirst();
    const project = await k.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row || !project || (row.status !== 'scheduled' && row.status !== 'started')) return;
    await this.fail(project, row, 'The import was interrupted too many times');
  }

  /** One import from its row's state. */
  private async runOne(projectId: number): Promise<void> {
    const k = this.deps.db.kysely;
    const row = await k.selectFrom('project_imports').selectAll().where('project_id', '=', projectId).executeTakeFirst();
    if (!row || (row.status !== 'scheduled' && row.status !== 'started')) return;
    let project = await k.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst();
    if (!project) return;
    // its process died mid-import: start over from a clean project (claimJobs gives up after MAX_CLAIMS)
    if (row.status === 'started') await this.clean(project);
    const started = nowIso();
    await k.updateTable('project_imports').set({ status: 'started', started_at: started, updated_at: started }).where('project_id', '=', projectId).execute();
    const work = fs.mkdtempSync(path.join(this.tmpDir(), `import-${projectId}-`));
    // the work directory goes before the outcome is written: a finished or failed import left nothing behind
    const removeWork = () => fs.promises.rm(work, { recursive: true, force: true });
    try {
      project = await this.perform(project, row, work, removeWork);
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      if (!(e instanceof ImportFailure)) this.deps.log.warn({ err: e, project: projectId }, 'project import failed');
      await removeWork().catch(() => {});
      const current = (await k.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirst()) ?? project;
      await this.fail(current, row, reason || 'Import failed');
    } finally {
      await removeWork().catch((e) => this.deps.log.error({ err: e, dir: work }, 'removing the work directory of an import failed'));
    }
  }

  private async perform(project: ProjectRow, row: ProjectImportRow, work: string, removeWork: () => Promise<void>): Promise<ProjectRow> {
    const k = this.deps.db.kysely;
    const importer = row.user_id === null ? undefined : await k.selectFrom('users').selectAll().where('id', '=', row.user_id).executeTakeFirst();
    if (!importer) throw new ImportFailure('The user who started the import no longer exists');
    const params: SourceParams = row.source_params ? (JSON.parse(this.deps.box.open(row.source_params)) as SourceParams) : {};
    if (params.original_path) await this.checkOverwrite(importer, project, params.original_path);
    const s = await this.deps.settings.get();

    // the archive
    const archive = path.join(work, 'archive.tar.gz');
    await this.acquire(row, params, archive, s);
    const dir = path.join(work, 'archive');
    await extractArchive(archive, dir, { maxBytes: mib(s.max_decompressed_archive_size), timeoutMs: (Number(s.decompress_archive_file_timeout) || 0) * 1000 });
    fs.rmSync(archive, { force: true });

    // VersionChecker
    const versionFile = path.join(dir, VERSION_FILE);
    if (!fs.existsSync(versionFile)) throw new ImportFailure(`No such file or directory - ${VERSION_FILE}`);
    const version = (fs.readFileSync(versionFile, 'utf8').split('\n')[0] ?? '').trim();
    if (!/^\d+(\.\d+)*$/.test(version)) throw new ImportFailure('Incorrect VERSION format');
    if (version !== EXPORT_VERSION) throw new ImportFailure(`Import version mismatch: Required ${EXPORT_VERSION} but was ${version}`);

    // the repository first (GitLab's restorers: repository, then the tree)
    const repo = this.deps.repos.repository(project);
    let defaultBranch: string | null = null;
    const bundle = path.join(dir, BUNDLE_FILE);
    if (fs.existsSync(bundle)) defaultBranch = await restoreBundle(repo, bundle, null);

    // project.json under override_params (rule 4); its default branch when the bundle brought it
    const attrs = (await readProjectAttributes(dir)) as Record<string, unknown>;
    const override = JSON.parse(row.override_params) as Record<string, unknown>;
    const wanted = typeof attrs.default_branch === 'string' ? attrs.default_branch : null;
    if (defaultBranch && wanted && wanted !== defaultBranch && (await repo.branch(wanted))) {
      await repo.setHead(wanted);
      defaultBranch = wanted;
    }
    project = await this.applyAttributes(project, importer, attrs, override, defaultBranch);

    // the relations
    const result = await importTree(this.deps, dir, { project, importer });
    const failed: FailedRelation[] = result.failed.slice(0, MAX_FAILED_RELATIONS);

    if (params.original_path) project = await this.overwrite(importer, project, params.original_path);
    await removeWork();
    const now = nowIso();
    await k.transaction().execute(async (trx) => {
      await trx
        .updateTable('project_imports')
        .set({ status: 'finished', failed_relations: JSON.stringify(failed), store_key: null, source_params: null, finished_at: now, updated_at: now })
        .where('project_id', '=', project.id)
        .execute();
      if (row.store_key) await queueBlobDeletion(trx, [row.store_key]);
    });
    return project;
  }

  /** The archive into `file`: the stored upload, the remote URL or the S3 object, under the size limits. */
  private async acquire(row: ProjectImportRow, params: SourceParams, file: string, s: Record<string, unknown>): Promise<void> {
    const limit = remoteLimit(s.max_import_remote_file_size);
    if (row.source === 'file') {
      const body = row.store_key ? await this.deps.store.get(row.store_key) : null;
      if (!body) throw new ImportFailure('The uploaded archive is gone');
      await pipeline(body, fs.createWriteStream(file));
      return;
    }
    if (row.source === 'url' && params.url) {
      try {
        await this.deps.outbound.fetchToFile({
          url: params.url,
          file,
          maxBytes: limit,
          rules: this.rules(s),
          timeoutMs: DOWNLOAD_TIMEOUT_MS,
          idleTimeoutMs: DOWNLOAD_IDLE_MS,
          accept: (status) => {
            if (status !== 200) throw new ImportFailure(`Unsupported response downloading fragment ${status}`);
          },
        });
      } catch (e) {
        if (e instanceof OutboundError && e.kind === 'too_large') throw new ImportFailure(`Content length is too big (should be at most ${humanSize(limit)})`);
        if (e instanceof OutboundError) throw new ImportFailure(`Failed to download the archive: ${e.message}`);
        throw e;
      }
      return;
    }
    if (row.source === 's3' && params.s3) {
      await fetchS3(this.deps.config, params.s3, file, limit);
      return;
    }
    throw new ImportFailure('The archive has no source');
  }

  /**
   * project.json's attributes (those Hearth keeps, checked: what does not fit is dropped) under
   * override_params; the visibility as GitLab's RelationTreeRestorer: the override, else the archive's,
   * never above the group's, internal made private when restricted. Name and path stay the request's.
   */
  private async applyAttributes(
    project: ProjectRow,
    importer: UserRow,
    attrs: Record<string, unknown>,
    override: Record<string, unknown>,
    defaultBranch: string | null,
  ): Promise<ProjectRow> {
    const k = this.deps.db.kysely;
    const merged: Record<string, unknown> = { ...lenientParams(attrs), ...override };
    const s = await this.deps.settings.get();
    const namespace = await k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    let visibility = typeof merged.visibility === 'string' && merged.visibility in VISIBILITY_LEVELS ? merged.visibility : project.visibility;
    visibility = clampToNamespace(visibility, namespace);
    // the import runs in the background: the importer's row says whether restrictions bind them
    if (restrictedFor(s, { isAdmin: importer.is_admin === 1 }, visibility) && visibility !== project.visibility) visibility = 'private';
    // the archive's settings one by one: a value the model refuses is left out, an override's was checked at request time
    const changes: Record<string, unknown> = {};
    const fromArchive = { ...settingsChanges(lenientParams(attrs), 'create'), ...settingsChanges(lenientParams(attrs), 'update') };
    for (const [key, value] of Object.entries(fromArchive)) {
      const errors: Record<string, string[]> = {};
      validateSettings({ [key]: value }, errors);
      if (!Object.keys(errors).length) changes[key] = value;
    }
    Object.assign(changes, settingsChanges(override, 'create'));
    delete changes.initialize_with_readme;
    delete changes.repository_object_format;
    const settings = { ...(JSON.parse(project.settings) as Record<string, unknown>), ...changes };
    const description = typeof merged.description === 'string' ? merged.description.slice(0, 2000) : project.description;
    const topics = Array.isArray(merged.topics) ? merged.topics : Array.isArray(merged.tag_list) ? merged.tag_list : null;
    const updated = await k
      .updateTable('projects')
      .set({
        description,
        visibility,
        settings: JSON.stringify(settings),
        ...(topics ? { topics: JSON.stringify([...new Set(topics.map(String))]) } : {}),
        ...(defaultBranch ? { default_branch: defaultBranch } : {}),
        updated_at: nowIso(),
      })
      .where('id', '=', project.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    // settingsOf reads what was written: a sanity check that it parses
    settingsOf(updated);
    return updated;
  }

  /** Importer#overwrite_project's permission: the importer may remove the project being replaced. */
  private async checkOverwrite(importer: UserRow, project: ProjectRow, originalPath: string): Promise<ProjectRow | null> {
    const k = this.deps.db.kysely;
    const namespace = await k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    const old = await k
      .selectFrom('projects')
      .selectAll()
      .where('namespace_id', '=', project.namespace_id)
      .where(ciEquals('path', originalPath))
      .where('id', '!=', project.id)
      .executeTakeFirst();
    if (!old) return null;
    const access = await this.deps.policy.project(userActor(importer), old, namespace);
    if (!(importer.is_admin === 1 || access.abilities.has('remove_project') || access.level >= OWNER)) {
      throw new ImportFailure(`User ${importer.username} (${importer.id}) cannot overwrite a project in ${namespace.path}`);
    }
    return old;
  }

  /**
   * Projects::OverwriteProjectService: the project being replaced is deleted and the imported one takes
   * its name and path, in one transaction (its repository leaves the disk after the commit).
   */
  private async overwrite(importer: UserRow, project: ProjectRow, originalPath: string): Promise<ProjectRow> {
    const old = await this.checkOverwrite(importer, project, originalPath);
    if (!old) return project;
    const k = this.deps.db.kysely;
    const namespace = await k.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
    const updated = await k.transaction().execute(async (trx) => {
      await recordSystemEvent(trx, projectPayload('project_destroy', old, namespace, await projectOwners(trx, old, namespace)));
      await deleteProjectRows(trx, [old]);
      const now = nowIso();
      const renamed = await trx
        .updateTable('projects')
        .set({ name: old.name, path: old.path, updated_at: now })
        .where('id', '=', project.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await trx
        .deleteFrom('redirect_routes')
        .where(ciEquals('path', `${namespace.full_path}/${old.path}`))
        .execute();
      await trx
        .insertInto('redirect_routes')
        .values({ source_type: 'Project', source_id: project.id, path: `${namespace.full_path}/${project.path}`, created_at: now })
        .execute();
      await recordSystemEvent(
        trx,
        projectPayload('project_rename', renamed, namespace, await projectOwners(trx, renamed, namespace), `${namespace.full_path}/${project.path}`),
      );
      return renamed;
    });
    removeRepositories(this.deps.repos, [old]);
    return updated;
  }

  /** A failed import: failed with the reason, nothing of it left (relations, refs), its archive queued for removal. */
  private async fail(project: ProjectRow, row: ProjectImportRow, reason: string): Promise<void> {
    const k = this.deps.db.kysely;
    const now = nowIso();
    const finish = async (trx: Kysely<Database>, clear: boolean) => {
      if (clear) await clearTree(trx, project.id);
      await trx
        .updateTable('project_imports')
        .set({ status: 'failed', import_error: reason.slice(0, 4000), store_key: null, source_params: null, finished_at: now, updated_at: now })
        .where('project_id', '=', project.id)
        .execute();
      if (row.store_key) await queueBlobDeletion(trx, [row.store_key]);
    };
    try {
      await k.transaction().execute((trx) => finish(trx, true));
    } catch (e) {
      this.deps.log.error({ err: e, project: project.id }, 'removing the rows of a failed import failed');
      await k.transaction().execute((trx) => finish(trx, false));
    }
    await this.emptyRepository(project).catch((e) => this.deps.log.error({ err: e, project: project.id }, 'emptying the repository of a failed import failed'));
  }

  /** Before an interrupted import starts over: its rows and refs removed. */
  private async clean(project: ProjectRow): Promise<void> {
    await this.deps.db.kysely.transaction().execute((trx) => clearTree(trx, project.id));
    await this.emptyRepository(project);
  }

  /** Every ref deleted and the objects pruned: an empty repository again. */
  private async emptyRepository(project: ProjectRow): Promise<void> {
    const repo = this.deps.repos.repository(project);
    if (!repo.exists()) return;
    const refs = (await repo.run(['for-each-ref', '--format=%(refname)'])).stdout.toString().split('\n').filter(Boolean);
    if (refs.length) await repo.run(['update-ref', '--stdin'], { input: refs.map((r) => `delete ${r}\n`).join('') });
    await repo.run(['prune', '--expire=now'], { timeoutMs: 10 * 60_000 });
    repo.touchRefs();
  }

  /** What killed imports (project and relation imports) and upload requests left in `<dataDir>/tmp` removed (work-dirs.ts). */
  async removeStaleWork(): Promise<number> {
    return removeStaleWork(this.deps.db, this.tmpDir(), { project: IMPORT_JOB, relation: RELATION_IMPORT_JOB });
  }

  /** Resolves when the imports this process started are done (tests, shutdown). */
  async idle(): Promise<void> {
    await this.background.idle();
  }
}
