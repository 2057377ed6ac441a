import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// SSH keys: GitLab's `keys` table holds user keys and deploy keys (`type`), one row per public
// key: a key already known to anyone cannot be added again (`fingerprint has already been taken`), so the
// SHA256 fingerprint is unique. A deploy key is enabled on projects through deploy_keys_projects, each with
// its own `can_push`.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  await id(db.schema.createTable('keys'))
    // 'user' (LDAPKey/Key) or 'deploy' (DeployKey)
    .addColumn('type', 'text', (c) => c.notNull())
    // the owner of a user key; the creator of a deploy key (null once that user is deleted)
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    // the normalised public key: "<type> <base64>[ <comment>]"
    .addColumn('key', 'text', (c) => c.notNull())
    // ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, sk-ssh-ed25519@openssh.com, …
    .addColumn('key_type', 'text', (c) => c.notNull())
    .addColumn('bits', 'integer', (c) => c.notNull())
    // MD5, colon-separated hex (GitLab's `fingerprint`)
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    // "SHA256:<base64 without padding>" (GitLab's `fingerprint_sha256` without the prefix is stored there;
    // here the column keeps the form `ssh-keygen -l` prints)
    .addColumn('fingerprint_sha256', 'text', (c) => c.notNull())
    // auth, signing, auth_and_signing (user keys); deploy keys are auth
    .addColumn('usage_type', 'text', (c) => c.notNull().defaultTo('auth_and_signing'))
    // deploy keys: an administrator's instance-wide key (GET /deploy_keys?public=true)
    .addColumn('public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('keys_fingerprint_sha256').on('keys').column('fingerprint_sha256').unique().execute();
  await db.schema.createIndex('keys_fingerprint').on('keys').column('fingerprint').execute();
  await db.schema.createIndex('keys_user').on('keys').columns(['user_id', 'type', 'id']).execute();

  await id(db.schema.createTable('deploy_keys_projects'))
    .addColumn('deploy_key_id', 'integer', (c) => c.notNull().references('keys.id').onDelete('cascade'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('can_push', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deploy_keys_projects_key_project').on('deploy_keys_projects').columns(['deploy_key_id', 'project_id']).unique().execute();
  await db.schema.createIndex('deploy_keys_projects_project').on('deploy_keys_projects').columns(['project_id', 'deploy_key_id']).execute();

  await trackTableVersions(db, dialect, ['keys', 'deploy_keys_projects']);
}
