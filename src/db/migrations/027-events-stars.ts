import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// User activity events and project stars.
//
// events: GitLab's events table (Event, PushEvent). `action` is GitLab's number (created 1, updated 2,
// closed 3, reopened 4, pushed 5, commented 6, merged 7, joined 8, left 9, destroyed 10, expired 11,
// approved 12); `target_type` the target's class (MergeRequest, Note, DiffNote, DiscussionNote) or null
// for project events (created, joined, left, pushed). A project's events go with the project; a user's
// with the user (GitLab's events.author_id foreign key cascades too).
// push_event_payloads: one per pushed event (PushEventPayload): action created | removed | pushed,
// ref_type branch | tag; ref_count only for a bulk push (more than 3 refs of one kind and action).
// users_star_projects: who starred which project, since when (UsersStarProject).
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  await id(db.schema.createTable('events'))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('author_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('action', 'integer', (c) => c.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // A user's events and a project's events, newest first (the lists read these in id order).
  await db.schema.createIndex('events_author_id').on('events').columns(['author_id', 'id']).execute();
  await db.schema.createIndex('events_project_id').on('events').columns(['project_id', 'id']).execute();
  // Counts (X-Total, up to 10,001) read these alone: a user's events by project and action, a project's by action.
  await db.schema.createIndex('events_author_project').on('events').columns(['author_id', 'project_id', 'action']).execute();
  await db.schema.createIndex('events_project_action').on('events').columns(['project_id', 'action', 'id']).execute();
  await db.schema.createIndex('events_target').on('events').columns(['target_type', 'target_id']).execute();

  await db.schema
    .createTable('push_event_payloads')
    .addColumn('event_id', 'integer', (c) => c.primaryKey().references('events.id').onDelete('cascade'))
    .addColumn('commit_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('ref_type', 'text', (c) => c.notNull())
    .addColumn('commit_from', 'text')
    .addColumn('commit_to', 'text')
    .addColumn('ref', 'text')
    .addColumn('commit_title', 'text')
    .addColumn('ref_count', 'integer')
    .execute();

  await id(db.schema.createTable('users_star_projects'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_star_projects_user_project').on('users_star_projects').columns(['user_id', 'project_id']).unique().execute();
  await db.schema.createIndex('users_star_projects_project').on('users_star_projects').columns(['project_id', 'id']).execute();

  await trackTableVersions(db, dialect, ['events', 'push_event_payloads', 'users_star_projects']);
}
