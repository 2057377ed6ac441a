// The merge requests of a commit (MergeRequestsFinder with commit_sha: by_related_commit_sha): those of
// the project whose commits contain it (diff_base_sha..sha; found through refs/merge-requests/<iid>/head,
// which the project keeps for every merge request), or whose merge or squash commit it is. Newest first.
import type { MergeRequestRow } from '../../db/schema.ts';
import type { FeatureDeps } from '../deps.ts';
import type { RepoContext } from './context.ts';

const MR_HEAD = /^refs\/merge-requests\/(\d+)\/head$/;

export async function commitMergeRequests(deps: Pick<FeatureDeps, 'db'>, ctx: RepoContext, sha: string, state?: string): Promise<MergeRequestRow[]> {
  const repo = ctx.repo;
  const iidsOf = (out: Buffer) =>
    new Set(
      out
        .toString('utf8')
        .split('\n')
        .map((r) => MR_HEAD.exec(r)?.[1])
        .filter((x): x is string => !!x)
        .map(Number),
    );
  // the head refs that contain the commit, and every head ref (a merge request whose head ref is not
  // written yet, before its first mergeability check, is looked at through its row's sha)
  const [containing, all] = await Promise.all([
    repo.run(['for-each-ref', `--contains=${sha}`, '--format=%(refname)', 'refs/merge-requests/'], { okCodes: [0, 129] }),
    repo.run(['for-each-ref', '--format=%(refname)', 'refs/merge-requests/']),
  ]);
  const contains = iidsOf(containing.stdout);
  const withRef = iidsOf(all.stdout);
  let q = deps.db.kysely.selectFrom('merge_requests').selectAll().where('project_id', '=', ctx.project.id);
  if (state && state !== 'all') q = q.where('state', '=', state);
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  const out: MergeRequestRow[] = [];
  for (const row of rows) {
    if (row.merge_commit_sha === sha || row.squash_commit_sha === sha) {
      out.push(row);
      continue;
    }
    // a commit of the merge request's latest diff: in its head, not in its base
    if (!row.sha) continue;
    if (withRef.has(row.iid) && !contains.has(row.iid)) continue;
    if (row.sha !== sha && !(await repo.isAncestor(sha, row.sha))) continue;
    if (row.diff_base_sha && (await repo.isAncestor(sha, row.diff_base_sha))) continue;
    out.push(row);
  }
  return out;
}

/**
 * Commit#merged_merge_request: the merged merge request whose merge commit `sha` is, with its commits
 * ("short_id title", oldest first) for a cherry-pick's message.
 */
export async function mergedMergeRequest(deps: Pick<FeatureDeps, 'db'>, ctx: RepoContext, sha: string): Promise<{ iid: number; commitLines: string[] } | null> {
  const row = await deps.db.kysely
    .selectFrom('merge_requests')
    .select(['iid', 'sha', 'diff_base_sha'])
    .where('project_id', '=', ctx.project.id)
    .where('state', '=', 'merged')
    .where('merge_commit_sha', '=', sha)
    .executeTakeFirst();
  if (!row) return null;
  const commitLines: string[] = [];
  if (row.sha && row.diff_base_sha) {
    const r = await ctx.repo.run(['log', '--reverse', '--format=%H %s', `${row.diff_base_sha}..${row.sha}`], { okCodes: [0, 128] });
    for (const l of r.stdout.toString('utf8').split('\n')) if (l) commitLines.push(`${l.slice(0, 8)} ${l.slice(l.indexOf(' ') + 1)}`);
  }
  return { iid: row.iid, commitLines };
}
