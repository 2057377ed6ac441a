// Composition root: createContainer(config) → every service, wired once.
import fs from 'node:fs';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { prettyDestination } from './lib/log-format.ts';
import { BOUND_REQUEST_ID, requestContext } from './lib/request-context.ts';
import { ConfigError, type Config } from './config.ts';
import { createDb, type Db, type DbOptions } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import { Keyring, randomToken, SecretBox, tokenDigest } from './lib/secrets.ts';
import { Outbound } from './lib/outbound.ts';
import { nowIso } from './lib/time.ts';
import { SettingsService } from './domain/settings/settings.service.ts';
import { TokensService } from './domain/tokens/tokens.service.ts';
import { DeployTokensService } from './domain/tokens/deploy-tokens.service.ts';
import { ResourceAccessTokensService } from './domain/tokens/resource-access-tokens.service.ts';
import { OauthService } from './domain/auth/oauth.service.ts';
import { SessionsService } from './domain/auth/sessions.service.ts';
import { Authenticator } from './domain/auth/authenticator.ts';
import { UsersService } from './domain/users/users.service.ts';
import { Policy } from './domain/access/policy.ts';
import { Resolver } from './domain/access/resolve.ts';
import { UploadsService } from './domain/uploads/uploads.service.ts';
import { KeysService } from './domain/keys/keys.service.ts';
import { DeployKeysService } from './domain/keys/deploy-keys.service.ts';
import { GroupsService } from './domain/groups/groups.service.ts';
import type { FeatureDeps } from './domain/deps.ts';
import { ProtectedRefsService } from './domain/repository/protected-refs.service.ts';
import { LabelsService } from './domain/labels/labels.service.ts';
import { MilestonesService } from './domain/milestones/milestones.service.ts';
import { ForksService } from './domain/projects/forks.service.ts';
import { DeploymentsService } from './domain/deployments/deployments.service.ts';
import { MergeRequestsService } from './domain/merge-requests/merge-requests.service.ts';
import { MergeRequestsQuery } from './domain/merge-requests/merge-requests-query.ts';
import { IssuesService } from './domain/issues/issues.service.ts';
import { IssuesQuery } from './domain/issues/issues-query.ts';
import { IssueLinksService } from './domain/issues/issue-links.service.ts';
import { BoardsService } from './domain/boards/boards.service.ts';
import { TodosService } from './domain/todos/todos.service.ts';
import { IssueClosingService } from './domain/issues/closing.service.ts';
import { IssueMentionsService } from './domain/issues/mentions.service.ts';
import { issueNoteableAttrs } from './domain/issues/issue-events.ts';
import { MergeService } from './domain/merge-requests/merge.service.ts';
import { MergeRequestPipelines } from './domain/merge-requests/mr-pipelines.ts';
import { NotesService } from './domain/notes/notes.service.ts';
import { ApprovalsService } from './domain/merge-requests/approvals.ts';
import { mergeRequestNoteableAttrs } from './domain/merge-requests/mr-events.ts';
import { ProjectsQuery } from './domain/projects/projects-query.ts';
import { ProjectsService } from './domain/projects/projects.service.ts';
import { MembersService } from './domain/members/members.service.ts';
import { SearchService } from './domain/search/search.service.ts';
import { MemberRolesService } from './domain/member-roles/member-roles.service.ts';
import { configureGitBudget } from './git/budget.ts';
import { configureGit } from './git/command.ts';
import { RepositoryStore } from './git/storage.ts';
import { SystemHooksService } from './domain/hooks/system-hooks.service.ts';
import { PushJournal } from './domain/repository/push-journal.ts';
import { RepositoryService } from './domain/repository/repository.service.ts';
import { advertiseSsh } from './domain/core/ssh-url.ts';
import { HookDeliveries } from './domain/hooks/deliveries.ts';
import { WebHooksService } from './domain/hooks/web-hooks.service.ts';
import { Worker } from './jobs/worker.ts';
import { Jobs } from './jobs/registry.ts';
import { seedLanguages } from './domain/translation/languages/seed.ts';
import { ComponentVcs } from './domain/translation/components/vcs.ts';
import { ComponentsService } from './domain/translation/components/components.service.ts';
import { TranslationProjectsService } from './domain/translation/projects/translation-projects.service.ts';
import { TranslationQueries } from './domain/translation/queries.ts';
import { LanguagesService } from './domain/translation/languages/languages.service.ts';
import { TranslationVisibility } from './domain/translation/visibility.ts';
import { RelatedRows } from './domain/translation/related.ts';
import { TranslationReads } from './domain/translation/reads.ts';
import type { TranslationDeps, TranslationWrites } from './domain/translation/deps.ts';
import { TranslationPermissions } from './domain/translation/permissions.ts';
import { UnitEdits } from './domain/translation/units/edits.ts';
import { SuggestionsService } from './domain/translation/units/suggestions.ts';
import { TranslationsService } from './domain/translation/translations/translations.service.ts';
import { TranslationFiles } from './domain/translation/files/files.service.ts';
import { ComponentRepository } from './domain/translation/repository/component-repository.ts';
import { ForgeFollow } from './domain/translation/components/follow.ts';
import type { Ci, CiDeps } from './domain/ci/deps.ts';
import { ArtifactsService } from './domain/ci/artifacts/artifacts.service.ts';
import { JobsService } from './domain/ci/jobs/jobs.service.ts';
import { PipelinesService } from './domain/ci/pipelines/pipelines.service.ts';
import { PipelinesQuery } from './domain/ci/pipelines-query.ts';
import { RunnersService } from './domain/ci/runners/runners.service.ts';
import { CommitStatusesService } from './domain/ci/statuses.service.ts';
import { VariablesService } from './domain/ci/variables/variables.service.ts';
import { JobTokenScopeService } from './domain/ci/job-token-scope.service.ts';
import { PipelineSchedulesService } from './domain/ci/schedules/pipeline-schedules.service.ts';
import { TriggersService } from './domain/ci/triggers/triggers.service.ts';
import { blobDeletionJob } from './domain/blobs/blob-deletions.ts';
import type { BlobStore } from './storage/blob-store.ts';
import { createBlobStore } from './storage/create-blob-store.ts';
import type { ImportExport, ImportExportDeps } from './domain/import-export/deps.ts';
import { ExportsService } from './domain/import-export/export/export.service.ts';
import { ImportsService } from './domain/import-export/import/import.service.ts';
import { RelationImportsService } from './domain/import-export/import/relation-import.service.ts';
import { CommitNotesService } from './domain/repository/commit-notes.ts';
import { HousekeepingService } from './domain/repository/housekeeping.ts';
import { CustomAttributesService } from './domain/custom-attributes/custom-attributes.service.ts';
import { NamespacesService } from './domain/groups/namespaces.service.ts';
import { AvatarsService } from './domain/avatars/avatars.service.ts';
import { MarkdownRenderer } from './domain/markdown/renderer.ts';
import { MarkdownReferences } from './domain/markdown/references.ts';
import { compileClosingPattern, DEFAULT_ISSUE_CLOSING_PATTERN } from './domain/markdown/closing-pattern.ts';

export interface Container {
  config: Config;
  log: Logger;
  db: Db;
  settings: SettingsService;
  users: UsersService;
  tokens: TokensService;
  oauth: OauthService;
  sessions: SessionsService;
  auth: Authenticator;
  policy: Policy;
  resolve: Resolver;
  groups: GroupsService;
  projects: ProjectsService;
  /** project lists and the per-viewer facts a page of projects needs (one query each) */
  projectsQuery: ProjectsQuery;
  members: MembersService;
  memberRoles: MemberRolesService;
  repos: RepositoryStore;
  /** markdown to HTML off the event loop, cached by content, within a time limit */
  markdown: MarkdownRenderer;
  /** GitLab references in markdown: linked for every viewer, redacted per viewer; the issues closing statements name */
  references: MarkdownReferences;
  /** pushes over smart HTTP in flight, and the replay of those a crash interrupted */
  pushes: PushJournal;
  /** the one write path of repositories (API commits, files, branches, tags, changelogs, pushes) and their reads */
  repository: RepositoryService;
  labels: LabelsService;
  milestones: MilestonesService;
  forks: ForksService;
  deployments: DeploymentsService;
  mergeRequests: MergeRequestsService;
  /** the merge request lists with every filter */
  mergeRequestsQuery: MergeRequestsQuery;
  /** the issue tracker: issues and their lists */
  issues: IssuesService;
  issuesQuery: IssuesQuery;
  issueLinks: IssueLinksService;
  /** issue boards of projects and groups */
  boards: BoardsService;
  /** users' to-do items on issues and merge requests */
  todos: TodosService;
  /** issues closed by merges and pushes to the default branch */
  issueClosing: IssueClosingService;
  /** the issues merge requests mention: the system notes, the related merge requests */
  issueMentions: IssueMentionsService;
  /** GitLab's basic search: one scope at the instance, a group or a project */
  search: SearchService;
  /** merging, rebasing, the merge ref and mergeability */
  merges: MergeService;
  /** merge request pipelines: created on open and push, listed, and the auto-merge a finished one settles */
  mergeRequestPipelines: MergeRequestPipelines;
  /** notes, discussions and award emoji of merge requests and issues */
  notes: NotesService;
  /** approvals of merge requests */
  approvals: ApprovalsService;
  /** the one guarded client for outbound requests */
  outbound: Outbound;
  hooks: SystemHooksService;
  deliveries: HookDeliveries;
  /** not started here: `serve` and `worker` start it */
  worker: Worker;
  /** blobs: job artifacts (later export archives and uploads); a local directory or an S3 bucket */
  store: BlobStore;
  /** CI: pipelines, jobs, runners, artifacts, commit statuses */
  ci: Ci;
  /** project export and import: exports, imports (file, URL, S3), single-relation imports */
  importExport: ImportExport;
  /** project and group webhooks (delivered by `deliveries`) */
  webHooks: WebHooksService;
  /** protected branches and protected tags of projects */
  protectedRefs: ProtectedRefsService;
  /** custom attributes of users, projects and groups */
  customAttributes: CustomAttributesService;
  namespaces: NamespacesService;
  /** uploaded avatars of users, groups and projects */
  avatars: AvatarsService;
  /** comments on commits */
  commitNotes: CommitNotesService;
  /** POST /projects/:id/housekeeping: git gc / repack / prune as outbox jobs */
  housekeeping: HousekeepingService;
  /** project uploads (markdown attachments) in the blob store */
  uploads: UploadsService;
  /** users' SSH keys */
  keys: KeysService;
  /** deploy keys and the projects they are enabled on */
  deployKeys: DeployKeysService;
  deployTokens: DeployTokensService;
  resourceAccessTokens: ResourceAccessTokensService;
  translation: {
    vcs: ComponentVcs;
    projects: TranslationProjectsService;
    components: ComponentsService;
    languages: LanguagesService;
    /** one object as the actor sees it (404 otherwise) */
    queries: TranslationQueries;
    /** the lists and sums of the API, with the rows they link to */
    reads: TranslationReads;
    /** rows that objects found elsewhere embed or link to */
    related: RelatedRows;
    /** the write side: permissions, edits, suggestions, translations, files, repository operations, forge follow */
    writes: TranslationWrites;
  };
  close(): Promise<void>;
}

export interface ContainerOptions {
  db?: Partial<DbOptions>;
  log?: Logger;
  /** the DNS lookup of outbound requests and repository fetches (tests: names that answer what a test needs) */
  resolve?: (host: string) => Promise<string[]>;
}

export const ROOT_TOKEN_SCOPES = ['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode'];

export async function createContainer(config: Config, opts: ContainerOptions = {}): Promise<Container> {
  const log = opts.log ?? createLogger(config.logLevel, config.logFormat === 'pretty' ? prettyDestination() : undefined);
  const db = createDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...opts.db });
  await migrate(db);
  const salt = await instanceSecret(db, 'token_salt');
  const getSalt = () => salt;
  const settings = new SettingsService(db);
  await settings.ensure();
  await seedLanguages(db);
  configureGit(path.join(config.dataDir, 'git-home'));
  configureGitBudget(config.gitBudget);
  const repos = new RepositoryStore(config.dataDir, config.repositoryStorages);
  advertiseSsh(config.externalUrl, { host: config.ssh.externalHost, port: config.ssh.externalPort });
  const users = new UsersService(db, settings, repos);
  const tokens = new TokensService(db, settings, getSalt);
  const oauth = new OauthService(db, getSalt);
  const sessions = new SessionsService(db, getSalt);
  const auth = new Authenticator(db, settings, tokens, oauth, sessions, config.impersonationEnabled);
  const policy = new Policy(db);
  const resolve = new Resolver(db, policy);
  const groups = new GroupsService(db, settings, policy, resolve, repos);
  const projects = new ProjectsService(db, settings, policy, resolve, repos, { db, settings, externalUrl: config.externalUrl });
  const projectsQuery = new ProjectsQuery(db, policy);
  const members = new MembersService(db);
  const memberRoles = new MemberRolesService(db);
  const outbound = new Outbound({ resolve: opts.resolve, userAgent: `Hearth/${config.version}` });
  const box = new SecretBox(await instanceSecret(db, 'secret_box_key'));
  const hooks = new SystemHooksService(db, settings, box, outbound);
  const deliveries = new HookDeliveries(db, hooks, outbound, settings, {
    externalUrl: config.externalUrl,
    version: config.version,
    retrySchedule: config.hookRetrySchedule,
    timeoutMs: config.hookTimeoutMs,
  });
  const jobs = new Jobs(db, log);
  const worker = new Worker(deliveries, jobs, log, config.workerPollMs);
  const pushes = new PushJournal(db, repos, settings, config.externalUrl, log, config.testFault);
  const repository = new RepositoryService({ db, settings, policy, resolve, repos, pushes, externalUrl: config.externalUrl });
  const deps: FeatureDeps = { db, settings, policy, resolve, repos, repository, users, log, externalUrl: config.externalUrl, jobs };
  const labels = new LabelsService(deps);
  const milestones = new MilestonesService(deps);
  const forks = new ForksService(deps);
  const deployments = new DeploymentsService(deps);
  const mergeRequests = new MergeRequestsService(deps);
  const mergeRequestsQuery = new MergeRequestsQuery(deps);
  const merges = new MergeService(deps);
  merges.attach(mergeRequests);
  // a journaled merge's merge request is settled with its journal row (by this process or a replay)
  pushes.settleMergesWith((trx, outcome) => merges.settleMerge(trx, outcome));
  const notes = new NotesService(deps, { MergeRequest: mergeRequestNoteableAttrs(deps), Issue: issueNoteableAttrs(deps) });
  const todos = new TodosService(deps);
  const issues = new IssuesService(deps, notes, todos);
  const issuesQuery = new IssuesQuery(deps);
  const issueLinks = new IssueLinksService(deps, issues, notes);
  const boards = new BoardsService(deps, issues, issuesQuery);
  const issueClosing = new IssueClosingService(deps, issues);
  mergeRequests.useClosingIssues(issueClosing);
  const issueMentions = new IssueMentionsService(deps, notes, mergeRequests);
  mergeRequests.useMentions(issueMentions);
  notes.onNoteText('MergeRequest', issueMentions.noteText);
  notes.hideNotes('Issue', (actor, f) => issueMentions.hiddenNoteIds(actor, f));
  merges.onMerged({ inTransaction: (trx, mr, userId) => issueClosing.queueAfterMerge(trx, mr, userId), committed: () => issueClosing.kick() });
  const search = new SearchService(deps, projectsQuery, mergeRequestsQuery, members, issuesQuery);
  const approvals = new ApprovalsService(deps, notes);
  const vcs = new ComponentVcs(config.dataDir, config.externalUrl, repos, resolve, settings, outbound);
  const components = new ComponentsService(db, vcs);
  // what a process killed while creating or deleting a component left behind (copies of repositories)
  const leftovers = await components.removeLeftovers();
  if (leftovers.length) log.info({ removed: leftovers.length }, 'removed translation mirrors that no component owns');
  const visible = new TranslationVisibility(db);
  const related = new RelatedRows(db);
  const queries = new TranslationQueries(db, visible);
  const writes = {} as TranslationWrites;
  const tdeps: TranslationDeps = { ...deps, config, outbound, vcs, components, queries, writes, mergeRequests };
  Object.assign(writes, {
    permissions: new TranslationPermissions(tdeps),
    edits: new UnitEdits(tdeps),
    suggestions: new SuggestionsService(tdeps),
    translations: new TranslationsService(tdeps),
    files: new TranslationFiles(tdeps),
    repository: new ComponentRepository(tdeps),
    follow: new ForgeFollow(tdeps),
  } satisfies TranslationWrites);
  const store = createBlobStore(config.blobStore);
  const ci = {} as Ci;
  const cdeps: CiDeps = { ...deps, config, store, hooks, ci, box, digest: (token) => tokenDigest(salt, token) };
  Object.assign(ci, {
    pipelines: new PipelinesService(cdeps),
    pipelinesQuery: new PipelinesQuery(cdeps),
    jobs: new JobsService(cdeps),
    runners: new RunnersService(cdeps),
    artifacts: new ArtifactsService(cdeps),
    statuses: new CommitStatusesService(cdeps),
    variables: new VariablesService(cdeps, await loadKeyring(config)),
    triggers: new TriggersService(cdeps),
    schedules: new PipelineSchedulesService(cdeps),
    jobTokenScope: new JobTokenScopeService(cdeps),
  } satisfies Ci);
  auth.jobTokens = { resolve: (token) => ci.jobs.resolveToken(token) };
  const mergeRequestPipelines = new MergeRequestPipelines(deps, ci.pipelines, merges, notes);
  // a merge request's head pipeline that finished settles its "merge when pipeline succeeds"
  ci.pipelines.onFinished((p, versions) => mergeRequestPipelines.pipelineFinished(p, versions));
  const importExport = {} as ImportExport;
  const ideps: ImportExportDeps = { ...deps, config, store, outbound, projects, box, ie: importExport };
  Object.assign(importExport, {
    exports: new ExportsService(ideps),
    imports: new ImportsService(ideps),
    relationImports: new RelationImportsService(ideps),
  } satisfies ImportExport);
  const webHooks = new WebHooksService(db, settings, box, outbound, resolve);
  const protectedRefs = new ProtectedRefsService(deps);
  const customAttributes = new CustomAttributesService(db);
  const namespaces = new NamespacesService(db, policy);
  const avatars = new AvatarsService(db, store, config.externalUrl);
  const commitNotes = new CommitNotesService(deps);
  const housekeeping = new HousekeepingService(deps);
  const uploads = new UploadsService({ db, store, resolve, settings });
  const keys = new KeysService(deps);
  const deployKeys = new DeployKeysService(deps);
  const deployTokens = new DeployTokensService(deps, (secret) => tokens.digest(secret));
  const resourceAccessTokens = new ResourceAccessTokensService(deps, tokens, members);
  const translation = {
    vcs,
    components,
    projects: new TranslationProjectsService(db, components),
    languages: new LanguagesService(db),
    queries,
    reads: new TranslationReads(db, visible, related, config.searchTimeoutMs),
    related,
    writes,
  };
  // what the worker runs, in this order on every round; sweeps find what expires or times out by the clock
  jobs.register(
    merges.refreshJob,
    issueClosing.job,
    merges.job,
    mergeRequestPipelines.job,
    writes.repository.commits,
    writes.follow.job,
    ci.artifacts.expiry,
    ci.jobs.timeouts,
    ci.pipelines.scheduled,
    ci.schedules.due,
    ci.schedules.job,
    blobDeletionJob(store),
    importExport.exports.job,
    importExport.imports.job,
    importExport.relationImports.job,
    importExport.imports.workDirs,
    importExport.exports.expiry,
    housekeeping.job,
  );
  let closingPattern: RegExp;
  try {
    closingPattern = compileClosingPattern(config.issueClosingPattern ?? DEFAULT_ISSUE_CLOSING_PATTERN);
  } catch (e) {
    throw new ConfigError(`HEARTH_ISSUE_CLOSING_PATTERN is not a regular expression: ${(e as Error).message}`);
  }
  const references = new MarkdownReferences(db, policy, config.externalUrl, { log, closingPattern, repos, issues: issuesQuery });
  const markdown = new MarkdownRenderer(config.markdownTimeoutMs, log, references);
  // the closing pattern's issues: what a merge request's description and a push's commits close
  issueClosing.useReferences(references);
  // the issues a merge request's texts mention, as their writer reads them
  issueMentions.useReferences({
    readableIssuesIn: (text, project, author) => markdown.readableIssuesIn(text, { gfm: true, externalUrl: config.externalUrl, project }, author),
  });
  const close = async () => {
    await worker.stop();
    await merges.idle();
    await issueClosing.idle();
    await housekeeping.idle();
    await ci.schedules.idle();
    await writes.follow.idle();
    await Promise.all([importExport.exports.idle(), importExport.imports.idle(), importExport.relationImports.idle()]);
    await pushes.stop();
    repos.close();
    await markdown.close();
    await outbound.close();
    await store.close();
    await db.close();
  };
  const c: Container = {
    config,
    log,
    db,
    settings,
    users,
    tokens,
    oauth,
    sessions,
    auth,
    policy,
    resolve,
    groups,
    projects,
    projectsQuery,
    members,
    memberRoles,
    repos,
    markdown,
    references,
    pushes,
    repository,
    labels,
    milestones,
    forks,
    deployments,
    mergeRequests,
    mergeRequestsQuery,
    issues,
    issuesQuery,
    issueLinks,
    boards,
    todos,
    issueClosing,
    issueMentions,
    search,
    merges,
    mergeRequestPipelines,
    notes,
    approvals,
    outbound,
    hooks,
    deliveries,
    worker,
    store,
    ci,
    importExport,
    webHooks,
    protectedRefs,
    customAttributes,
    namespaces,
    avatars,
    commitNotes,
    housekeeping,
    uploads,
    keys,
    deployKeys,
    deployTokens,
    resourceAccessTokens,
    translation,
    close,
  };
  await bootstrapRoot(c);
  return c;
}

const SECRET_PARAMS = /([?&](?:private_token|access_token|job_token|token|refresh_token|password)=)[^&]*/gi;

/**
 * The product's logger: secrets in headers and query strings never reach it. A line written while a request is
 * served carries its id (`reqId`) even when a service writes it through this logger rather than the request's.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    mixin: (_obj, _level, logger) => {
      const id = (logger as unknown as Record<symbol, unknown>)[BOUND_REQUEST_ID] ? undefined : requestContext.getStore();
      return id === undefined ? {} : { reqId: id };
    },
    redact: ['req.headers.authorization', 'req.headers["private-token"]', 'req.headers["job-token"]', 'req.headers.cookie', 'req.headers.sudo'],
    serializers: {
      req: (req: { method: string; url: string; headers: Record<string, unknown>; ip?: string; id?: string }) => ({
        id: req.id,
        method: req.method,
        url: String(req.url).replace(SECRET_PARAMS, '$1[REDACTED]'),
        headers: req.headers,
        remoteAddress: req.ip,
      }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The keys that seal secrets at rest: HEARTH_ENCRYPTION_KEYS, else a key file in the data directory made on
 * first start (a single node's default; every node of a cluster needs the same keys, given in the environment).
 */
async function loadKeyring(config: Config): Promise<Keyring> {
  if (config.encryptionKeys.length) return new Keyring(config.encryptionKeys);
  const file = path.join(config.dataDir, 'encryption.key');
  await fs.promises.mkdir(config.dataDir, { recursive: true });
  try {
    await fs.promises.writeFile(file, `${randomToken(32)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return new Keyring([(await fs.promises.readFile(file, 'utf8')).trim()]);
}

/** A secret kept in the database so every node of a cluster shares it. */
async function instanceSecret(db: Db, name: string): Promise<string> {
  await db.kysely
    .insertInto('instance_secrets')
    .values({ name, value: randomToken(32) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.kysely.selectFrom('instance_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}

/** First start: the administrator `root` (id 1), its password and, optionally, a fixed token. */
async function bootstrapRoot(c: Container): Promise<void> {
  let root = await c.users.byId(1);
  if (!root) {
    let password = c.config.rootPassword;
    let file: string | null = null;
    if (!password) {
      password = randomToken(24);
      fs.mkdirSync(c.config.dataDir, { recursive: true });
      file = path.join(c.config.dataDir, 'initial_root_password');
      fs.writeFileSync(file, `Password: ${password}\n`, { mode: 0o600 });
    }
    root = await c.users.create({
      username: 'root',
      name: 'Administrator',
      email: 'admin@example.com',
      password,
      is_admin: true,
      extra: { created_at: nowIso() },
    });
    if (file) c.log.info({ file }, 'created the administrator root; its password is in the file named here (delete it after the first sign-in)');
    else c.log.info('created the administrator root with the password from HEARTH_ROOT_PASSWORD');
  }
  if (c.config.rootToken) await c.tokens.ensureFixed(root, c.config.rootToken, 'HEARTH_ROOT_TOKEN', ROOT_TOKEN_SCOPES);
}
