import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// A label link keeps its issue's project (an issue never changes project: a move copies it), so that a project's
// list filtered by labels reads, from `issue_labels_project`, only that project's links of each label — where a
// group's label carries the issues of every project below the group (thousands, to find a project's hundred).
// Every insert names it (the column is required in the schema's types); PostgreSQL also holds it NOT NULL.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await db.schema.alterTable('issue_labels').addColumn('project_id', 'integer').execute();
  await sql`update issue_labels set project_id = (select issues.project_id from issues where issues.id = issue_labels.issue_id)`.execute(db);
  if (dialect === 'postgres') await sql`alter table issue_labels alter column project_id set not null`.execute(db);
  await db.schema.createIndex('issue_labels_project').on('issue_labels').columns(['label_id', 'project_id', 'issue_id']).execute();
}
