import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// The issues a merge request closes when merged (GitLab's merge_requests_closing_issues): what its description
// says ("Closes #12", GitLab's closing pattern), kept when the merge request is opened or edited, so that the
// merge (in the journal's transaction) and the lists (`closed_by`, `closes_issues`, related merge requests) read
// rows rather than parse texts.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('merge_requests_closing_issues')
    .addColumn('merge_request_id', 'integer', (c) => c.notNull().references('merge_requests.id').onDelete('cascade'))
    .addColumn('issue_id', 'integer', (c) => c.notNull().references('issues.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('merge_requests_closing_issues_pk', ['merge_request_id', 'issue_id'])
    .execute();
  await db.schema.createIndex('merge_requests_closing_issues_issue').on('merge_requests_closing_issues').columns(['issue_id', 'merge_request_id']).execute();
  await trackTableVersions(db, dialect, ['merge_requests_closing_issues']);
}
