// The head pipeline of merge requests (GitLab's MergeRequest#diff_head_pipeline): the newest pipeline of
// the source project for the source branch, or of the merge request itself (a merge request pipeline), whose
// sha is the merge request's head (child pipelines aside). The one answer the API's head_pipeline and pipeline, detailed_merge_status (ci_must_pass,
// ci_still_running), the merge itself, the merge_request hook and the web page all read.
import type { Kysely } from 'kysely';
import type { CiPipelineRow, Database, MergeRequestRow } from '../../db/schema.ts';

type HeadOf = Pick<MergeRequestRow, 'id' | 'source_project_id' | 'source_branch' | 'sha'>;
// (a merge request pipeline is its merge request's whatever its ref: refs/merge-requests/<iid>/head)

/** The head pipeline of each merge request that has one, by merge request id (one query for a page). */
export async function headPipelines(db: Kysely<Database>, rows: HeadOf[]): Promise<Map<number, CiPipelineRow>> {
  const out = new Map<number, CiPipelineRow>();
  const wanted = rows.filter((r): r is HeadOf & { sha: string } => r.sha !== null);
  if (!wanted.length) return out;
  const pipelines = await db
    .selectFrom('ci_pipelines')
    .selectAll()
    .where('project_id', 'in', [...new Set(wanted.map((r) => r.source_project_id))])
    .where('sha', 'in', [...new Set(wanted.map((r) => r.sha))])
    .where('tag', '=', 0)
    .where('source', '!=', 'parent_pipeline')
    .orderBy('id', 'desc')
    .execute();
  for (const r of wanted) {
    const p = pipelines.find(
      (x) => x.project_id === r.source_project_id && x.sha === r.sha && (x.merge_request_id === null ? x.ref === r.source_branch : x.merge_request_id === r.id),
    );
    if (p) out.set(r.id, p);
  }
  return out;
}

/** The head pipeline of one merge request, or null. */
export async function headPipeline(db: Kysely<Database>, mr: HeadOf): Promise<CiPipelineRow | null> {
  return (await headPipelines(db, [mr])).get(mr.id) ?? null;
}
