import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Merge requests and what hangs on them: labels, milestones, assignees, reviewers, approvals, notes
// (discussions), award emoji, resource events; environments and deployments; forks; per-scope iids.
// Users are not foreign keys here: a deleted user's merge requests and notes stay (GitLab moves them to
// its ghost user); the entities show a missing user as null.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const flag = (def: number) => (c: any) => c.notNull().defaultTo(def);
  const project = (c: any) => c.notNull().references('projects.id').onDelete('cascade');
  const mr = (c: any) => c.notNull().references('merge_requests.id').onDelete('cascade');

  // The last iid handed out per scope (GitLab's internal_ids): usage 'merge_requests' | 'milestones' |
  // 'deployments'; scope_type 'Project' | 'Namespace'. Taken with UPDATE … RETURNING in the writer's transaction.
  await db.schema
    .createTable('internal_ids')
    .addColumn('usage', 'text', (c) => c.notNull())
    .addColumn('scope_type', 'text', (c) => c.notNull())
    .addColumn('scope_id', 'integer', (c) => c.notNull())
    .addColumn('last_value', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('internal_ids_pk', ['usage', 'scope_type', 'scope_id'])
    .execute();

  // A fork and the project it was forked from (GitLab's fork_network_members); the root is the first
  // project of the network. The fork's repository borrows its source's objects (git alternates).
  await db.schema
    .createTable('project_forks')
    .addColumn('project_id', 'integer', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    .addColumn('forked_from_project_id', 'integer', (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('root_project_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_forks_from').on('project_forks').column('forked_from_project_id').execute();

  // Labels of a project (project_id) or of a group (group_id, a namespace id); exactly one is set.
  await id(db.schema.createTable('labels'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('color', 'text', (c) => c.notNull()) // "#rrggbb" as given (named colours resolved on write)
    .addColumn('description', 'text')
    .addColumn('priority', 'integer') // project labels' priority (GitLab's label_priorities), null = none
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index labels_project_title on labels (project_id, lower(title)) where project_id is not null`.execute(db);
  await sql`create unique index labels_group_title on labels (group_id, lower(title)) where group_id is not null`.execute(db);

  // Milestones of a project or of a group (exactly one of project_id, group_id); iid per scope.
  await id(db.schema.createTable('milestones'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active')) // active | closed
    .addColumn('due_date', 'text') // YYYY-MM-DD
    .addColumn('start_date', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index milestones_project_title on milestones (project_id, title) where project_id is not null`.execute(db);
  await sql`create unique index milestones_group_title on milestones (group_id, title) where group_id is not null`.execute(db);

  // project_id is the target project (GitLab's target_project_id); source_project_id differs for forks.
  // draft is derived from the title on every write (the wip filter reads it). merge_status is GitLab's
  // stored state machine (unchecked | preparing | checking | can_be_merged | cannot_be_merged |
  // cannot_be_merged_recheck | cannot_be_merged_rechecked); detailed_merge_status is computed from it and
  // the merge request's other facts. sha is the source branch head when last refreshed; merge_params is
  // JSON (force_remove_source_branch, …).
  await id(db.schema.createTable('merge_requests'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', project)
    .addColumn('source_project_id', 'integer', (c) => c.notNull())
    .addColumn('source_branch', 'text', (c) => c.notNull())
    .addColumn('target_branch', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('opened')) // opened | closed | locked | merged
    .addColumn('draft', 'integer', flag(0))
    .addColumn('author_id', 'integer')
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    .addColumn('merge_user_id', 'integer')
    .addColumn('closed_by_id', 'integer')
    .addColumn('sha', 'text')
    .addColumn('diff_base_sha', 'text') // merge base of source and target when last refreshed
    .addColumn('merge_commit_sha', 'text')
    .addColumn('squash_commit_sha', 'text')
    .addColumn('merge_status', 'text', (c) => c.notNull().defaultTo('unchecked'))
    .addColumn('merge_error', 'text')
    .addColumn('rebase_in_progress', 'integer', flag(0))
    .addColumn('squash', 'integer', flag(0))
    .addColumn('merge_params', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('merge_when_pipeline_succeeds', 'integer', flag(0))
    .addColumn('discussion_locked', 'integer') // null = never set
    .addColumn('allow_collaboration', 'integer', flag(0))
    .addColumn('imported_from', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('time_estimate', 'integer', flag(0))
    .addColumn('total_time_spent', 'integer', flag(0))
    // denormalised for lists (kept by the writers of award_emoji and notes)
    .addColumn('upvotes', 'integer', flag(0))
    .addColumn('downvotes', 'integer', flag(0))
    .addColumn('user_notes_count', 'integer', flag(0))
    .addColumn('merged_at', 'text')
    .addColumn('closed_at', 'text')
    .addColumn('prepared_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('merge_requests_project_iid').unique().on('merge_requests').columns(['project_id', 'iid']).execute();
  await db.schema.createIndex('merge_requests_source').on('merge_requests').columns(['source_project_id', 'source_branch']).execute();

  const userLink = (table: string, extra?: (t: CreateTableBuilder<any, any>) => CreateTableBuilder<any, any>) => {
    let t = db.schema
      .createTable(table)
      .addColumn('merge_request_id', 'integer', mr)
      .addColumn('user_id', 'integer', (c) => c.notNull());
    if (extra) t = extra(t);
    return t
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, ['merge_request_id', 'user_id'])
      .execute();
  };
  await userLink('merge_request_assignees');
  await userLink('merge_request_reviewers', (t) => t.addColumn('state', 'text', (c) => c.notNull().defaultTo('unreviewed')));
  await userLink('approvals');
  for (const t of ['merge_request_assignees', 'merge_request_reviewers', 'approvals']) {
    await db.schema.createIndex(`${t}_user`).on(t).columns(['user_id', 'merge_request_id']).execute();
  }

  await db.schema
    .createTable('merge_request_labels')
    .addColumn('merge_request_id', 'integer', mr)
    .addColumn('label_id', 'integer', (c) => c.notNull().references('labels.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('merge_request_labels_pk', ['merge_request_id', 'label_id'])
    .execute();
  await db.schema.createIndex('merge_request_labels_label').on('merge_request_labels').columns(['label_id', 'merge_request_id']).execute();

  // Notes on a merge request (noteable_type 'MergeRequest'); every note belongs to a discussion
  // (discussion_id, 40 hex); individual notes are discussions of one. system notes record changes.
  await id(db.schema.createTable('notes'))
    .addColumn('project_id', 'integer', project)
    .addColumn('noteable_type', 'text', (c) => c.notNull())
    .addColumn('noteable_id', 'integer', (c) => c.notNull())
    .addColumn('discussion_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text') // null | DiscussionNote | DiffNote
    .addColumn('author_id', 'integer')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('system', 'integer', flag(0))
    .addColumn('internal', 'integer', flag(0))
    .addColumn('resolvable', 'integer', flag(0))
    .addColumn('resolved_at', 'text')
    .addColumn('resolved_by_id', 'integer')
    .addColumn('position', 'text') // JSON of a diff note
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notes_noteable').on('notes').columns(['noteable_type', 'noteable_id', 'id']).execute();
  await db.schema.createIndex('notes_discussion').on('notes').columns(['discussion_id', 'id']).execute();

  // Award emoji on a merge request or a note (awardable_type 'MergeRequest' | 'Note').
  await id(db.schema.createTable('award_emoji'))
    .addColumn('awardable_type', 'text', (c) => c.notNull())
    .addColumn('awardable_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('award_emoji_unique').unique().on('award_emoji').columns(['awardable_type', 'awardable_id', 'name', 'user_id']).execute();
  await db.schema.createIndex('award_emoji_user').on('award_emoji').columns(['user_id', 'name', 'awardable_type', 'awardable_id']).execute();

  // Resource events: who added/removed a label, set/removed a milestone, changed the state.
  await id(db.schema.createTable('resource_label_events'))
    .addColumn('merge_request_id', 'integer', mr)
    .addColumn('label_id', 'integer', (c) => c.references('labels.id').onDelete('set null'))
    .addColumn('user_id', 'integer')
    .addColumn('action', 'text', (c) => c.notNull()) // add | remove
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await id(db.schema.createTable('resource_milestone_events'))
    .addColumn('merge_request_id', 'integer', mr)
    .addColumn('milestone_id', 'integer', (c) => c.references('milestones.id').onDelete('set null'))
    .addColumn('user_id', 'integer')
    .addColumn('action', 'text', (c) => c.notNull()) // add | remove
    .addColumn('state', 'text', (c) => c.notNull()) // the merge request's state at the time
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await id(db.schema.createTable('resource_state_events'))
    .addColumn('merge_request_id', 'integer', mr)
    .addColumn('user_id', 'integer')
    .addColumn('state', 'text', (c) => c.notNull()) // opened | closed | reopened | merged | locked
    .addColumn('source_commit', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  for (const t of ['resource_label_events', 'resource_milestone_events', 'resource_state_events']) {
    await db.schema.createIndex(`${t}_mr`).on(t).columns(['merge_request_id', 'id']).execute();
  }

  // Environments and deployments; a deployment records the merge requests merged into what it deployed.
  await id(db.schema.createTable('environments'))
    .addColumn('project_id', 'integer', project)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('external_url', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('available')) // available | stopping | stopped
    .addColumn('tier', 'text', (c) => c.notNull().defaultTo('other'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('environments_project_name').unique().on('environments').columns(['project_id', 'name']).execute();
  await id(db.schema.createTable('deployments'))
    .addColumn('iid', 'integer', (c) => c.notNull())
    .addColumn('project_id', 'integer', project)
    .addColumn('environment_id', 'integer', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('tag', 'integer', flag(0))
    .addColumn('sha', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer')
    .addColumn('status', 'text', (c) => c.notNull()) // created | running | success | failed | canceled | skipped | blocked
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema.createIndex('deployments_project_iid').unique().on('deployments').columns(['project_id', 'iid']).execute();
  await db.schema.createIndex('deployments_environment').on('deployments').columns(['environment_id', 'id']).execute();
  await db.schema
    .createTable('deployment_merge_requests')
    .addColumn('deployment_id', 'integer', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
    .addColumn('merge_request_id', 'integer', mr)
    .addColumn('environment_id', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('deployment_merge_requests_pk', ['deployment_id', 'merge_request_id'])
    .execute();
  await db.schema.createIndex('deployment_merge_requests_mr').on('deployment_merge_requests').columns(['merge_request_id', 'environment_id']).execute();

  await trackTableVersions(db, dialect, [
    'project_forks',
    'labels',
    'milestones',
    'merge_requests',
    'merge_request_assignees',
    'merge_request_reviewers',
    'approvals',
    'merge_request_labels',
    'notes',
    'award_emoji',
    'resource_label_events',
    'resource_milestone_events',
    'resource_state_events',
    'environments',
    'deployments',
    'deployment_merge_requests',
  ]);
}
