import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Indexes for the project lists (GitLab's default order is created_at, then last_activity_at and
// updated_at are the usual ones) and for removing a project's old paths with it.
export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  await db.schema.createIndex('projects_created_at').on('projects').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('projects_last_activity_at').on('projects').columns(['last_activity_at', 'id']).execute();
  await db.schema.createIndex('projects_updated_at').on('projects').columns(['updated_at', 'id']).execute();
  await db.schema.createIndex('redirect_routes_source').on('redirect_routes').columns(['source_type', 'source_id']).execute();
}
