// The columns of a user that other features read (the UserBasic shape of authors, assignees and members,
// the profile and administrator shapes), and the batched loader of the basic ones.
import type { Kysely } from 'kysely';
import type { Database, UserRow } from '../../db/schema.ts';

/** The columns the basic shape and the cursor need: lists for non-administrators read only these. */
export const BASIC_COLUMNS = [
  'users.id',
  'users.username',
  'users.name',
  'users.state',
  'users.locked_at',
  'users.avatar_url',
  'users.created_at',
  'users.updated_at',
] as const;
export type UserBasicRow = Pick<UserRow, 'id' | 'username' | 'name' | 'state' | 'locked_at' | 'avatar_url' | 'created_at' | 'updated_at'>;

/** Users by id with the basic columns (the UserBasic shape), one query; no id asked, no query. */
export async function basicByIds(db: Kysely<Database>, ids: Iterable<number | null>): Promise<Map<number, UserBasicRow>> {
  const wanted = [...new Set([...ids].filter((id): id is number => id !== null))];
  if (!wanted.length) return new Map();
  const rows = await db
    .selectFrom('users')
    .select([...BASIC_COLUMNS])
    .where('users.id', 'in', wanted)
    .execute();
  return new Map(rows.map((u) => [u.id, u]));
}

/** What the profile and administrator shapes read: every column but the credentials and counters of sign-in. */
export type UserViewRow = Omit<UserRow, 'password_hash' | 'password_set_at' | 'failed_attempts'>;
export const VIEW_COLUMNS = [
  'users.id',
  'users.username',
  'users.name',
  'users.email',
  'users.state',
  'users.is_admin',
  'users.external',
  'users.bot',
  'users.user_type',
  'users.private_profile',
  'users.bio',
  'users.location',
  'users.public_email',
  'users.commit_email',
  'users.job_title',
  'users.pronouns',
  'users.website_url',
  'users.organization',
  'users.messenger_a',
  'users.network_a',
  'users.network_b',
  'users.chat_a',
  'users.note',
  'users.projects_limit',
  'users.can_create_group',
  'users.can_create_project',
  'users.two_factor_enabled',
  'users.theme_id',
  'users.color_scheme_id',
  'users.avatar_url',
  'users.created_by_id',
  'users.created_at',
  'users.updated_at',
  'users.confirmed_at',
  'users.last_sign_in_at',
  'users.current_sign_in_at',
  'users.last_sign_in_ip',
  'users.current_sign_in_ip',
  'users.sign_in_count',
  'users.last_activity_on',
  'users.locked_at',
] as const;
