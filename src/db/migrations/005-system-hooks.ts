import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// System hooks, the deliveries of events to them (one row per event and hook: the retry queue),
// and every attempt of a delivery (what the receiver answered).
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const flag = (def: number) => (c: any) => c.notNull().defaultTo(def);

  await id(db.schema.createTable('system_hooks'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('description', 'text')
    // the secret token, encrypted with an instance key (it is sent with every delivery, so not hashed)
    .addColumn('token_encrypted', 'text')
    .addColumn('push_events', 'integer', flag(0))
    .addColumn('tag_push_events', 'integer', flag(0))
    .addColumn('merge_requests_events', 'integer', flag(0))
    .addColumn('repository_update_events', 'integer', flag(1))
    .addColumn('enable_ssl_verification', 'integer', flag(1))
    .addColumn('push_events_branch_filter', 'text')
    .addColumn('branch_filter_strategy', 'text', (c) => c.notNull().defaultTo('wildcard'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await id(db.schema.createTable('hook_deliveries'))
    .addColumn('hook_id', 'integer', (c) => c.notNull())
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    // the same for every attempt and resend of this event to this hook
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    // the same for every hook this event goes to
    .addColumn('event_uuid', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('pending')) // pending | delivered | failed
    .addColumn('attempts', 'integer', flag(0))
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('last_status', 'text') // HTTP status, or "internal error"
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('hook_deliveries_due').on('hook_deliveries').columns(['state', 'run_at']).execute();
  await db.schema.createIndex('hook_deliveries_hook').on('hook_deliveries').columns(['hook_id', 'id']).execute();

  await id(db.schema.createTable('hook_attempts'))
    .addColumn('delivery_id', 'integer', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull()) // as shown: without a userinfo password
    .addColumn('request_headers', 'text', (c) => c.notNull()) // JSON object, the token redacted
    .addColumn('response_status', 'text', (c) => c.notNull()) // HTTP status, or "internal error"
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response_headers', 'text', (c) => c.notNull()) // JSON object
    .addColumn('response_body', 'text', (c) => c.notNull()) // at most 8 KiB
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('hook_attempts_delivery').on('hook_attempts').columns(['delivery_id', 'id']).execute();

  await trackTableVersions(db, dialect, ['system_hooks']);
}
