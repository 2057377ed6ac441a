import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Deploy tokens (GitLab's DeployToken): a name, a username for git (`gitlab+deploy-token-<id>` when none was
// given), scopes, an optional expiry time and a revoked flag, held by one project or one group (GitLab keeps the
// holder in project_deploy_tokens / group_deploy_tokens; a token has exactly one, so it is a column here). The
// secret is kept as its salted digest only, unique. Project and group access tokens need no table of their own:
// each is a personal access token of a bot user (users.user_type 'project_bot') who is a member of the project
// or group.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const table = db.schema.createTable('deploy_tokens');
  await (dialect === 'postgres'
    ? table.addColumn('id', 'serial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('name', 'text', (c) => c.notNull())
    // null: the default username, which names the id
    .addColumn('username', 'text')
    .addColumn('token_digest', 'text', (c) => c.notNull())
    // JSON array, in GitLab's order of the scopes
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
    // ISO-8601 UTC time, or null (never expires)
    .addColumn('expires_at', 'text')
    // exactly one of the two holders
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('creator_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deploy_tokens_digest').unique().on('deploy_tokens').column('token_digest').execute();
  await db.schema.createIndex('deploy_tokens_project').on('deploy_tokens').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('deploy_tokens_group').on('deploy_tokens').columns(['group_id', 'id']).execute();
  await trackTableVersions(db, dialect, ['deploy_tokens']);
}
