import { sql, type Kysely, type CreateTableBuilder } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const bool =
    (def = 0) =>
    (c: any) =>
      c.notNull().defaultTo(def);

  await id(db.schema.createTable('users'))
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('password_hash', 'text')
    .addColumn('password_set_at', 'text')
    .addColumn('is_admin', 'integer', bool())
    .addColumn('external', 'integer', bool())
    .addColumn('bot', 'integer', bool())
    .addColumn('user_type', 'text', (c) => c.notNull().defaultTo('human'))
    .addColumn('private_profile', 'integer', bool())
    .addColumn('bio', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('location', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('public_email', 'text')
    .addColumn('commit_email', 'text')
    .addColumn('job_title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('pronouns', 'text')
    .addColumn('website_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('organization', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('messenger_a', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('network_a', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('network_b', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('chat_a', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('note', 'text')
    .addColumn('projects_limit', 'integer', (c) => c.notNull().defaultTo(100000))
    .addColumn('can_create_group', 'integer', bool(1))
    .addColumn('can_create_project', 'integer', bool(1))
    .addColumn('two_factor_enabled', 'integer', bool())
    .addColumn('theme_id', 'integer', (c) => c.notNull().defaultTo(3))
    .addColumn('color_scheme_id', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('avatar_url', 'text')
    .addColumn('created_by_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('confirmed_at', 'text')
    .addColumn('last_sign_in_at', 'text')
    .addColumn('current_sign_in_at', 'text')
    .addColumn('last_sign_in_ip', 'text')
    .addColumn('current_sign_in_ip', 'text')
    .addColumn('sign_in_count', 'integer', bool())
    .addColumn('last_activity_on', 'text')
    .addColumn('failed_attempts', 'integer', bool())
    .addColumn('locked_at', 'text')
    .execute();
  // Usernames and emails are unique case-insensitively, as GitLab's.
  await sql`create unique index users_username_lower on users (lower(username))`.execute(db);
  await sql`create unique index users_email_lower on users (lower(email))`.execute(db);
  await db.schema.createIndex('users_created_at').on('users').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('users_name').on('users').columns(['name', 'id']).execute();

  await id(db.schema.createTable('identities'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('extern_uid', 'text', (c) => c.notNull())
    .addColumn('saml_provider_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('identities_provider_uid').unique().on('identities').columns(['provider', 'extern_uid']).execute();
  await db.schema.createIndex('identities_user').on('identities').column('user_id').execute();

  await id(db.schema.createTable('user_custom_attributes'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_custom_attributes_user_key').unique().on('user_custom_attributes').columns(['user_id', 'key']).execute();

  await id(db.schema.createTable('personal_access_tokens'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('token_digest', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('impersonation', 'integer', bool())
    .addColumn('revoked', 'integer', bool())
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('previous_personal_access_token_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('pat_digest').unique().on('personal_access_tokens').column('token_digest').execute();
  await db.schema.createIndex('pat_user').on('personal_access_tokens').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('pat_previous').on('personal_access_tokens').column('previous_personal_access_token_id').execute();

  await id(db.schema.createTable('oauth_tokens'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_digest', 'text', (c) => c.notNull())
    .addColumn('refresh_token_digest', 'text', (c) => c.notNull())
    .addColumn('previous_refresh_token_digest', 'text')
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_in', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('oauth_token_digest').unique().on('oauth_tokens').column('token_digest').execute();
  await db.schema.createIndex('oauth_refresh_digest').unique().on('oauth_tokens').column('refresh_token_digest').execute();

  await id(db.schema.createTable('web_sessions'))
    .addColumn('session_digest', 'text', (c) => c.notNull().unique())
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .execute();

  await db.schema
    .createTable('application_settings')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('instance_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await id(db.schema.createTable('jobs'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('attempts', 'integer', bool())
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_ready').on('jobs').columns(['state', 'run_at']).execute();
}
