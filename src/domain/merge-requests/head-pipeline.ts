// A merge request's pipelines (GitLab's Ci::PipelinesForMergeRequestFinder#all) and its head pipeline
// (MergeRequest#diff_head_pipeline: the first of them at the merge request's head sha). Its pipelines are the
// source branch's in the source project (every source but merge_request_event, child pipelines aside) and its own
// merge request pipelines wherever they run: the target project, or the source project of a merge request from a
// fork. GitLab's order: merge request pipelines first, then the newest. The one answer the API's head_pipeline and
// pipeline, detailed_merge_status (ci_must_pass, ci_still_running), the merge itself, "merge when pipeline
// succeeds", the merge_request hook and the web page all read.
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { CiPipelineRow, Database, MergeRequestRow } from '../../db/schema.ts';

type Of = Pick<MergeRequestRow, 'id' | 'source_project_id' | 'source_branch'>;
type HeadOf = Of & Pick<MergeRequestRow, 'sha'>;

const MR_EVENT = 'merge_request_event';

/**
 * The pipelines of these merge requests (at these shas), and maybe others of the same projects and branches
 * (`belongsTo` tells); each arm reads an index (merge_request_id, id) or (project_id, sha).
 */
function candidates(eb: ExpressionBuilder<Database, 'ci_pipelines'>, rows: readonly Of[], shas?: string[]) {
  const atShas = shas ? [eb('sha', 'in', shas)] : [];
  return eb.or([
    eb.and([eb('merge_request_id', 'in', [...new Set(rows.map((r) => r.id))]), eb('source', '=', MR_EVENT), ...atShas]),
    eb.and([
      eb('project_id', 'in', [...new Set(rows.map((r) => r.source_project_id))]),
      ...atShas,
      eb('ref', 'in', [...new Set(rows.map((r) => r.source_branch))]),
      eb('tag', '=', 0),
      eb('source', 'not in', [MR_EVENT, 'parent_pipeline']),
    ]),
  ]);
}

/** Whether a pipeline is one of the merge request's (the exact test behind `candidates`). */
function belongsTo(p: CiPipelineRow, mr: Of): boolean {
  if (p.source === MR_EVENT) return p.merge_request_id === mr.id;
  return p.source !== 'parent_pipeline' && p.project_id === mr.source_project_id && p.ref === mr.source_branch && p.tag === 0;
}

/** Merge request pipelines first, then the newest (the finder's sort). */
function byGitLabOrder(a: CiPipelineRow, b: CiPipelineRow): number {
  const ma = a.source === MR_EVENT ? 0 : 1;
  const mb = b.source === MR_EVENT ? 0 : 1;
  return ma - mb || b.id - a.id;
}

/** The merge request's pipelines in GitLab's order (at most `limit`), in whichever projects they run. */
export async function pipelinesOf(db: Kysely<Database>, mr: Of, limit = 1000): Promise<CiPipelineRow[]> {
  const rows = await db
    .selectFrom('ci_pipelines')
    .selectAll()
    .where((eb) => candidates(eb, [mr]))
    .orderBy((eb) => eb.case().when('source', '=', MR_EVENT).then(0).else(1).end())
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.filter((p) => belongsTo(p, mr));
}

/** The head pipeline of each merge request that has one, by merge request id (one query for a page). */
export async function headPipelines(db: Kysely<Database>, rows: HeadOf[]): Promise<Map<number, CiPipelineRow>> {
  const out = new Map<number, CiPipelineRow>();
  const wanted = rows.filter((r): r is HeadOf & { sha: string } => r.sha !== null);
  if (!wanted.length) return out;
  const pipelines = await db
    .selectFrom('ci_pipelines')
    .selectAll()
    .where((eb) => candidates(eb, wanted, [...new Set(wanted.map((r) => r.sha))]))
    .execute();
  pipelines.sort(byGitLabOrder);
  for (const r of wanted) {
    const p = pipelines.find((x) => x.sha === r.sha && belongsTo(x, r));
    if (p) out.set(r.id, p);
  }
  return out;
}

/** The head pipeline of one merge request, or null. */
export async function headPipeline(db: Kysely<Database>, mr: HeadOf): Promise<CiPipelineRow | null> {
  return (await headPipelines(db, [mr])).get(mr.id) ?? null;
}
