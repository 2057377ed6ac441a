// GitLab's key_create / key_destroy system hook events (Key#post_create_hook / post_destroy_hook →
// SystemHooksService → Gitlab::HookData::KeyBuilder), recorded in the same transaction as the write.
import type { Kysely } from 'kysely';
import type { Database, KeyRow } from '../../db/schema.ts';
import { recordSystemEvent } from '../core/system-events.ts';

/** KeyBuilder#build: event_name, the timestamps, the key and its id, and the owner's username when the key has one. */
export function keyPayload(event_name: 'key_create' | 'key_destroy', key: Pick<KeyRow, 'id' | 'key' | 'created_at' | 'updated_at'>, username: string | null) {
  return {
    event_name,
    created_at: key.created_at,
    updated_at: key.updated_at,
    key: key.key,
    id: key.id,
    ...(username !== null ? { username } : {}),
  };
}

/** Records the event for `key` (a user key or a deploy key); the owner's username is read in `trx`. */
export async function recordKeyEvent(trx: Kysely<Database>, event_name: 'key_create' | 'key_destroy', key: KeyRow): Promise<void> {
  const owner = key.user_id === null ? undefined : await trx.selectFrom('users').select('username').where('id', '=', key.user_id).executeTakeFirst();
  await recordSystemEvent(trx, keyPayload(event_name, key, owner?.username ?? null));
}

/**
 * A user is being deleted: their keys go with the row (the foreign key), and GitLab's `dependent: :destroy`
 * runs each key's post_destroy_hook, so every one of them is a key_destroy event. Call before the delete.
 */
export async function recordKeyDestroyEventsOf(trx: Kysely<Database>, userId: number): Promise<void> {
  const keys = await trx.selectFrom('keys').selectAll().where('user_id', '=', userId).where('type', '=', 'user').orderBy('id').execute();
  if (keys.length === 0) return;
  const owner = await trx.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirst();
  for (const key of keys) await recordSystemEvent(trx, keyPayload('key_destroy', key, owner?.username ?? null));
}
