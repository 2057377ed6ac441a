import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Project and group web hooks: GitLab's web_hooks table for ProjectHook and
// GroupHook (a row has a project_id or a group_id), with WebHooks::AutoDisabling's recent_failures and
// disabled_until. System hooks keep their own table (005); the delivery queue (hook_deliveries) serves
// both, told apart by hook_type ('system' for system_hooks rows, 'web' for web_hooks rows), so the
// retries, leases, Idempotency-Keys and attempt history are one engine for every kind of hook.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const flag = (def: number) => (c: any) => c.notNull().defaultTo(def);
  let t = db.schema
    .createTable('web_hooks')
    .addColumn('id', dialect === 'postgres' ? 'serial' : 'integer', (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('project_id', 'integer', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('group_id', 'integer', (c) => c.references('namespaces.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('description', 'text')
    // sealed with the instance key (SecretBox): sent with every delivery, never shown
    .addColumn('token_encrypted', 'text')
    // sealed JSON objects {key: value}
    .addColumn('url_variables_encrypted', 'text')
    .addColumn('custom_headers_encrypted', 'text')
    .addColumn('custom_webhook_template', 'text');
  // GitLab's column defaults: push events and SSL verification on, everything else off
  const flags: [string, number][] = [
    ['push_events', 1],
    ['tag_push_events', 0],
    ['merge_requests_events', 0],
    ['repository_update_events', 0],
    ['issues_events', 0],
    ['confidential_issues_events', 0],
    ['note_events', 0],
    ['confidential_note_events', 0],
    ['job_events', 0],
    ['pipeline_events', 0],
    ['wiki_page_events', 0],
    ['deployment_events', 0],
    ['feature_flag_events', 0],
    ['releases_events', 0],
    ['milestone_events', 0],
    ['emoji_events', 0],
    ['resource_access_token_events', 0],
    ['resource_deploy_token_events', 0],
    ['vulnerability_events', 0],
    ['subgroup_events', 0],
    ['member_events', 0],
    ['project_events', 0],
    ['enable_ssl_verification', 1],
  ];
  for (const [name, def] of flags) t = t.addColumn(name, 'integer', flag(def));
  await t
    .addColumn('push_events_branch_filter', 'text')
    .addColumn('branch_filter_strategy', 'text', (c) => c.notNull().defaultTo('wildcard'))
    // WebHooks::AutoDisabling: failures since the last success, and the end of a temporary disable
    .addColumn('recent_failures', 'integer', flag(0))
    .addColumn('disabled_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('web_hooks_project').on('web_hooks').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('web_hooks_group').on('web_hooks').columns(['group_id', 'id']).execute();

  await db.schema
    .alterTable('hook_deliveries')
    .addColumn('hook_type', 'text', (c) => c.notNull().defaultTo('system'))
    .execute();
  await db.schema.createIndex('hook_deliveries_type_hook').on('hook_deliveries').columns(['hook_type', 'hook_id', 'id']).execute();
}
