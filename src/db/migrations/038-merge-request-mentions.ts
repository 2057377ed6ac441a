import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// The issues a merge request mentions (GitLab's cross references: the system note "mentioned in merge request !45"
// on the issue, written once per issue and merge request): the machine-readable side of that note, so that the
// issue's related merge requests, and who may see the note, are read from rows rather than parsed from its text.
// The row goes with its issue or its note. It outlives its merge request on purpose (no foreign key; ids are never
// reused): as GitLab's note whose reference no longer resolves, the note is then hidden from everyone.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('merge_requests_mentioning_issues')
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('merge_request_id', 'integer', (c) => c.notNull())
    .addColumn('note_id', 'integer', (c) => c.references('notes.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('merge_requests_mentioning_issues_pk', ['issue_id', 'merge_request_id'])
    .execute();
  await db.schema.createIndex('merge_requests_mentioning_issues_note').on('merge_requests_mentioning_issues').column('note_id').execute();
  await trackTableVersions(db, dialect, ['merge_requests_mentioning_issues']);
}
