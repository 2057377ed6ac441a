// Removing what importTree wrote into a project (a failed import starts clean and leaves nothing
// half-visible). Children of merge requests and pipelines go with them (ON DELETE CASCADE); notes and
// award emoji are polymorphic, so they are deleted here first.
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';

export async function clearTree(trx: Kysely<Database>, projectId: number): Promise<void> {
  const mrs = trx.selectFrom('merge_requests').select('id').where('project_id', '=', projectId);
  const issues = trx.selectFrom('issues').select('id').where('project_id', '=', projectId);
  const notes = trx.selectFrom('notes').select('id').where('project_id', '=', projectId);
  await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Note').where('awardable_id', 'in', notes).execute();
  await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'MergeRequest').where('awardable_id', 'in', mrs).execute();
  await trx.deleteFrom('award_emoji').where('awardable_type', '=', 'Issue').where('awardable_id', 'in', issues).execute();
  await trx.deleteFrom('notes').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'MergeRequest').where('subscribable_id', 'in', mrs).execute();
  // merge_request_labels, assignees, reviewers, approvals, resource events, deployment links: cascade
  await trx.deleteFrom('merge_requests').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Issue').where('subscribable_id', 'in', issues).execute();
  await trx.deleteFrom('todos').where('target_type', '=', 'Issue').where('target_id', 'in', issues).execute();
  // issue_assignees, issue_labels, issue_links, resource events: cascade
  await trx.deleteFrom('issues').where('project_id', '=', projectId).execute();
  // board lists go with their boards
  await trx.deleteFrom('boards').where('project_id', '=', projectId).execute();
  const builds = trx.selectFrom('ci_builds').select('id').where('project_id', '=', projectId);
  await trx.deleteFrom('ci_build_trace_chunks').where('build_id', 'in', builds).execute();
  // builds go with their pipelines (cascade); children before parents for parent_pipeline_id
  await trx.deleteFrom('ci_builds').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('ci_pipelines').where('project_id', '=', projectId).where('parent_pipeline_id', 'is not', null).execute();
  await trx.deleteFrom('ci_pipelines').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('deployments').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('environments').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('milestones').where('project_id', '=', projectId).execute();
  const labels = trx.selectFrom('labels').select('id').where('project_id', '=', projectId);
  await trx.deleteFrom('subscriptions').where('subscribable_type', '=', 'Label').where('subscribable_id', 'in', labels).execute();
  await trx.deleteFrom('labels').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('protected_branches').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('protected_tags').where('project_id', '=', projectId).execute();
  await trx.deleteFrom('internal_ids').where('scope_type', '=', 'Project').where('scope_id', '=', projectId).execute();
  // members the import added: every direct member below Owner except the project's creator (the importer)
  const project = await trx.selectFrom('projects').select('creator_id').where('id', '=', projectId).executeTakeFirst();
  let q = trx.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', '=', projectId).where('access_level', '<', 50);
  if (project?.creator_id) q = q.where('user_id', '!=', project.creator_id);
  await q.execute();
}
