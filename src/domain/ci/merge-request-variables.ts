// The predefined variables of a merge request pipeline (GitLab's MergeRequest#predefined_variables for a
// detached pipeline): what rules read when the pipeline is created and what its jobs get.
import type { MergeRequestRow } from '../../db/schema.ts';

/** the ref a merge request pipeline runs on, in the target repository */
export const mergeRequestRef = (iid: number) => `refs/merge-requests/${iid}/head`;

export function mergeRequestVariables(
  mr: Pick<MergeRequestRow, 'id' | 'iid' | 'title' | 'description' | 'source_branch' | 'target_branch' | 'source_project_id' | 'project_id' | 'diff_base_sha'>,
  p: { externalUrl: string; projectPath: string; sourceProjectPath: string },
): Record<string, string> {
  return {
    CI_MERGE_REQUEST_ID: String(mr.id),
    CI_MERGE_REQUEST_IID: String(mr.iid),
    CI_MERGE_REQUEST_REF_PATH: mergeRequestRef(mr.iid),
    CI_MERGE_REQUEST_PROJECT_ID: String(mr.project_id),
    CI_MERGE_REQUEST_PROJECT_PATH: p.projectPath,
    CI_MERGE_REQUEST_PROJECT_URL: `${p.externalUrl}/${p.projectPath}`,
    CI_MERGE_REQUEST_TARGET_BRANCH_NAME: mr.target_branch,
    CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: mr.source_branch,
    CI_MERGE_REQUEST_SOURCE_PROJECT_ID: String(mr.source_project_id),
    CI_MERGE_REQUEST_SOURCE_PROJECT_PATH: p.sourceProjectPath,
    CI_MERGE_REQUEST_SOURCE_PROJECT_URL: `${p.externalUrl}/${p.sourceProjectPath}`,
    CI_MERGE_REQUEST_TITLE: mr.title,
    CI_MERGE_REQUEST_DESCRIPTION: mr.description ?? '',
    CI_MERGE_REQUEST_EVENT_TYPE: 'detached',
    ...(mr.diff_base_sha ? { CI_MERGE_REQUEST_DIFF_BASE_SHA: mr.diff_base_sha } : {}),
  };
}
