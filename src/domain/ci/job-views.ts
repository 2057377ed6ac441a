// What a page of jobs links to, read once: users, pipelines, runners, artifacts, projects with their
// namespaces' full names, and the commits. One query per table and one commit read per distinct sha, so
// the API's job entities only map.
import type { CiBuildRow, CiJobArtifactRow, CiPipelineRow, CiRunnerRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import type { Db } from '../../db/connect.ts';
import type { Commit } from '../../git/objects.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import type { Settings } from '../core/settings-definitions.ts';
import { VIEW_COLUMNS, type UserViewRow } from '../core/user-columns.ts';

export interface JobRelated {
  /** the instance settings when the page was read (the user shapes need them) */
  settings: Settings;
  usersById: Map<number, UserViewRow>;
  pipelines: Map<number, CiPipelineRow>;
  runners: Map<number, CiRunnerRow>;
  /** by job, oldest first */
  artifacts: Map<number, CiJobArtifactRow[]>;
  projects: Map<number, { project: ProjectRow; namespace: NamespaceRow }>;
  /** a namespace's full human name (groups: ancestors' names joined by " / ") */
  namespaceNames: Map<number, string>;
  /** by `${project_id}:${sha}`; null when the repository lacks the commit */
  commits: Map<string, Commit | null>;
}

/** What the loader reads from: the database, the repositories and the instance settings. */
export interface JobRelatedDeps {
  db: Db;
  repos: RepositoryStore;
  settings: SettingsService;
}

const uniq = <T>(xs: (T | null | undefined)[]): T[] => [...new Set(xs.filter((x): x is T => x !== null && x !== undefined))];
const traversal = (n: NamespaceRow) => n.traversal_ids.split('/').filter(Boolean).map(Number);

/** Reads everything a page of jobs shows. */
export async function loadJobRelated(deps: JobRelatedDeps, rows: CiBuildRow[]): Promise<JobRelated> {
  const k = deps.db.kysely;
  const jobIds = rows.map((r) => r.id);
  const userIds = uniq(rows.map((r) => r.user_id));
  const pipelineIds = uniq(rows.map((r) => r.pipeline_id));
  const runnerIds = uniq(rows.map((r) => r.runner_id));
  const projectIds = uniq(rows.map((r) => r.project_id));
  const [users, pipelines, runners, artifacts, projects, settings] = await Promise.all([
    userIds.length
      ? k
          .selectFrom('users')
          .select([...VIEW_COLUMNS])
          .where('users.id', 'in', userIds)
          .execute()
      : [],
    pipelineIds.length ? k.selectFrom('ci_pipelines').selectAll().where('id', 'in', pipelineIds).execute() : [],
    runnerIds.length ? k.selectFrom('ci_runners').selectAll().where('id', 'in', runnerIds).execute() : [],
    jobIds.length ? k.selectFrom('ci_job_artifacts').selectAll().where('job_id', 'in', jobIds).orderBy('id').execute() : [],
    projectIds.length ? k.selectFrom('projects').selectAll().where('id', 'in', projectIds).execute() : [],
    deps.settings.get(),
  ]);
  const { namespaces, namespaceNames } = await namespacesOf(deps, projects);
  const projectMap = new Map(projects.map((p) => [p.id, { project: p, namespace: namespaces.get(p.namespace_id)! }]));
  return {
    settings,
    usersById: new Map(users.map((u) => [u.id, u as UserViewRow])),
    pipelines: new Map(pipelines.map((p) => [p.id, p])),
    runners: new Map(runners.map((r) => [r.id, r])),
    artifacts: byJob(artifacts),
    projects: projectMap,
    namespaceNames,
    commits: await commitsOf(deps, rows, projectMap),
  };
}

/** The projects' namespaces and their full names (the groups' ancestors not among them: one more query). */
async function namespacesOf(deps: Pick<JobRelatedDeps, 'db'>, projects: ProjectRow[]) {
  const k = deps.db.kysely;
  const nsIds = uniq(projects.map((p) => p.namespace_id));
  const rows = nsIds.length ? await k.selectFrom('namespaces').selectAll().where('id', 'in', nsIds).execute() : [];
  const namespaces = new Map(rows.map((n) => [n.id, n]));
  const ancestorIds = uniq(rows.flatMap((n) => (n.type === 'Group' ? traversal(n) : []))).filter((id) => !namespaces.has(id));
  const ancestors = ancestorIds.length ? await k.selectFrom('namespaces').select(['id', 'name']).where('id', 'in', ancestorIds).execute() : [];
  const nameOf = new Map<number, string>([...rows.map((n) => [n.id, n.name] as const), ...ancestors.map((n) => [n.id, n.name] as const)]);
  const namespaceNames = new Map(
    rows.map((n) => [
      n.id,
      n.type === 'Group'
        ? traversal(n)
            .map((id) => nameOf.get(id) ?? '')
            .join(' / ')
        : n.name,
    ]),
  );
  return { namespaces, namespaceNames };
}

function byJob(artifacts: CiJobArtifactRow[]): Map<number, CiJobArtifactRow[]> {
  const out = new Map<number, CiJobArtifactRow[]>();
  for (const a of artifacts) {
    const list = out.get(a.job_id);
    if (list) list.push(a);
    else out.set(a.job_id, [a]);
  }
  return out;
}

/** The commit of each job, read once per project and sha (a malformed sha or a missing repository: null). */
async function commitsOf(
  deps: Pick<JobRelatedDeps, 'repos'>,
  rows: CiBuildRow[],
  projects: Map<number, { project: ProjectRow }>,
): Promise<Map<string, Commit | null>> {
  const commits = new Map<string, Commit | null>();
  await Promise.all(
    uniq(rows.map((r) => `${r.project_id}:${r.sha}`)).map(async (key) => {
      const [pid, sha] = key.split(':') as [string, string];
      const p = projects.get(Number(pid));
      let commit: Commit | null = null;
      if (p) {
        const repo = deps.repos.repository(p.project);
        commit = /^[0-9a-f]{40,64}$/.test(sha) && repo.exists() ? await repo.commit(sha).catch(() => null) : null;
      }
      commits.set(key, commit);
    }),
  );
  return commits;
}
