// Issues closed by what lands on the default branch (GitLab's MergeRequests::PostMergeService#close_issues and
// ProcessCommitWorker): a merge request merged into its project's default branch closes the issues its
// description names with the closing pattern ("Closes #12", kept in merge_requests_closing_issues when it is
// opened or edited), and a push to the default branch closes those its new commits' messages name (at most 100
// commits). Each is one job written after the cause (the merge's journal transaction, or the accepted push), run
// in the background: the issue closes as the merging user or the pusher, when they may update it, with the
// system note "closed via merge request !3" or "closed via commit 1a2b3c4d" and the issue hook.
import type { Kysely } from 'kysely';
import { Type } from 'typebox';
import type { Database, MergeRequestRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { Background } from '../../jobs/background.ts';
import { defineJob, jobKind } from '../../jobs/registry.ts';
import { nowIso } from '../../lib/time.ts';
import type { FeatureDeps } from '../deps.ts';
import { onRefsChanged, type RefChange } from '../repository/push-events.ts';
import type { IssuesService } from './issues.service.ts';

/** What finds the issues a text closes (the markdown references, given by the container). */
export interface ClosingReferences {
  closingIssues(project: ProjectRow, fullPath: string, text: string): Promise<{ id: number; project_id: number; iid: number }[]>;
}

export const CLOSING_JOB = 'issue_closing';
const ClosingJob = jobKind(
  CLOSING_JOB,
  Type.Object({
    projectId: Type.Number(),
    userId: Type.Number(),
    mergeRequestId: Type.Optional(Type.Number()),
    before: Type.Optional(Type.String()),
    after: Type.Optional(Type.String()),
  }),
);
/** ProcessCommitWorker's limit: the newest commits of a push whose messages may close issues. */
const PUSH_COMMITS = 100;
const ZERO_SHA = '0'.repeat(40);

export class IssueClosingService {
  private refs: ClosingReferences | null = null;
  private readonly background = new Background(
    () => this.deps.jobs.round(CLOSING_JOB),
    (e) => this.deps.log.error({ err: e }, 'closing referenced issues failed'),
  );
  readonly job = defineJob({
    kind: ClosingJob,
    what: 'closing of referenced issues',
    leaseMs: 120_000,
    concurrency: 10,
    run: (p) => this.run(p),
  });

  constructor(
    readonly deps: FeatureDeps,
    private readonly issues: IssuesService,
  ) {
    onRefsChanged(deps.db, (target, changes) =>
      this.afterPush(target.project, target.user, changes).catch((e) =>
        deps.log.error({ err: e, project: target.project.id }, 'queueing issue closing failed'),
      ),
    );
  }

  /** The references finder (wired by the container). */
  useReferences(refs: ClosingReferences): void {
    this.refs = refs;
  }

  /** Resolves when this process's closing work is done (tests, shutdown). */
  idle(): Promise<void> {
    return this.background.idle();
  }

  /**
   * MergeRequest#cache_merge_request_closes_issues!: the issues the merge request's description closes, kept
   * as rows. Read before `trx` (texts and projects), written in it.
   */
  async closingIssueIds(project: ProjectRow, fullPath: string, mr: Pick<MergeRequestRow, 'description'>): Promise<number[]> {
    if (!this.refs || !mr.description) return [];
    return (await this.refs.closingIssues(project, fullPath, mr.description)).map((i) => i.id);
  }

  async keepClosingIssues(trx: Kysely<Database>, mergeRequestId: number, issueIds: number[]): Promise<void> {
    await trx.deleteFrom('merge_requests_closing_issues').where('merge_request_id', '=', mergeRequestId).execute();
    const at = nowIso();
    for (const issue_id of new Set(issueIds)) {
      await trx.insertInto('merge_requests_closing_issues').values({ merge_request_id: mergeRequestId, issue_id, created_at: at }).execute();
    }
  }

  /** In the merge's transaction: a merge into the project's default branch queues the closing of its issues. */
  async queueAfterMerge(trx: Kysely<Database>, mr: MergeRequestRow, userId: number): Promise<void> {
    const project = await trx.selectFrom('projects').select(['default_branch']).where('id', '=', mr.project_id).executeTakeFirst();
    if (!project || project.default_branch !== mr.target_branch) return;
    const any = await trx.selectFrom('merge_requests_closing_issues').select('issue_id').where('merge_request_id', '=', mr.id).limit(1).executeTakeFirst();
    if (!any) return;
    await ClosingJob.queue(trx, { projectId: mr.project_id, userId, mergeRequestId: mr.id });
  }

  /** Wakes this process's runner (after the merge's transaction committed). */
  kick(): void {
    this.background.kick();
  }

  /** After an accepted push: the new commits of the default branch may close issues. */
  private async afterPush(project: ProjectRow, user: UserRow, changes: RefChange[]): Promise<void> {
    const ref = `refs/heads/${project.default_branch ?? ''}`;
    const change = changes.find((c) => c.ref === ref && c.after !== ZERO_SHA);
    if (!change || !this.refs) return;
    await ClosingJob.queue(this.deps.db.kysely, { projectId: project.id, userId: user.id, before: change.before, after: change.after });
    this.background.kick();
  }

  private async run(p: { projectId: number; userId: number; mergeRequestId?: number; before?: string; after?: string }): Promise<void> {
    const k = this.deps.db.kysely;
    const [user, row] = await Promise.all([
      k.selectFrom('users').selectAll().where('id', '=', p.userId).executeTakeFirst(),
      this.deps.resolve.findProjectRow(p.projectId),
    ]);
    if (!user || !row || !('project' in row)) return;
    const fullPath = `${row.namespace.full_path}/${row.project.path}`;
    if (p.mergeRequestId !== undefined) {
      const mr = await k.selectFrom('merge_requests').select(['iid']).where('id', '=', p.mergeRequestId).executeTakeFirst();
      if (!mr) return;
      const ids = await k.selectFrom('merge_requests_closing_issues').select('issue_id').where('merge_request_id', '=', p.mergeRequestId).execute();
      for (const { issue_id } of ids)
        await this.closeOne(user, issue_id, row.project.id, (projectId) => this.reference(projectId, row.project, fullPath, `!${mr.iid}`, 'merge request'));
      return;
    }
    if (!p.after || !this.refs) return;
    const repo = this.deps.repos.repository(row.project);
    if (!repo.exists()) return;
    const range = p.before && p.before !== ZERO_SHA ? [p.after, `^${p.before}`] : [p.after];
    const r = await repo.run(['log', `--max-count=${PUSH_COMMITS}`, '--format=%H%x00%B%x00', ...range, '--'], { okCodes: [0, 128], maxBytes: 16 << 20 });
    if (r.code !== 0) return;
    const parts = r.stdout.toString('utf8').split('\0');
    // oldest first, as the commits landed
    const commits: { sha: string; message: string }[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) commits.unshift({ sha: parts[i].trim(), message: parts[i + 1] });
    for (const c of commits) {
      const issues = await this.refs.closingIssues(row.project, fullPath, c.message);
      for (const issue of issues) {
        await this.closeOne(user, issue.id, row.project.id, (projectId) => this.reference(projectId, row.project, fullPath, `@${c.sha.slice(0, 8)}`, 'commit'));
      }
    }
  }

  private async closeOne(user: UserRow, issueId: number, _projectId: number, via: (issueProjectId: number) => Promise<string>): Promise<void> {
    const issue = await this.deps.db.kysely.selectFrom('issues').select(['project_id', 'state']).where('id', '=', issueId).executeTakeFirst();
    if (!issue || issue.state !== 'opened') return;
    await this.issues.closeVia(user, issueId, await via(issue.project_id));
  }

  /**
   * How the note names the merge request or commit, relative to the issue's project: `!3` / `1a2b3c4d` in the
   * same project, the path within a namespace, else the full path (Referable#to_reference).
   */
  private async reference(issueProjectId: number, from: ProjectRow, fullPath: string, ref: string, kind: 'merge request' | 'commit'): Promise<string> {
    const short = kind === 'commit' ? ref.slice(1) : ref;
    if (issueProjectId === from.id) return `${kind} ${short}`;
    const other = await this.deps.db.kysely.selectFrom('projects').select(['namespace_id']).where('id', '=', issueProjectId).executeTakeFirst();
    const prefix = other?.namespace_id === from.namespace_id ? from.path : fullPath;
    return `${kind} ${prefix}${ref}`;
  }
}
