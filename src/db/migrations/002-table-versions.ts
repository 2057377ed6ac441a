import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await trackTableVersions(db, dialect, ['users', 'identities', 'user_custom_attributes', 'personal_access_tokens', 'oauth_tokens', 'application_settings']);
  // Non-administrators' user lists count by state.
  await db.schema.createIndex('users_state').on('users').columns(['state', 'id']).execute();
}
