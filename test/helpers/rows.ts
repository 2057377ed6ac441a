// Whole rows for bulk inserts where the services would be too slow or would refuse the state a test
// needs (pagination over thousands of users, the benchmarks' seeds). Every column is written, so a new
// column without a default shows up here once.
import type { Insertable, Kysely } from 'kysely';
import type { Database, MembersTable, NamespacesTable, NewUser, ProjectsTable } from '../../src/db/schema.ts';
import { nowIso } from '../../src/lib/time.ts';

/** A confirmed, active human user named `username` (name and e-mail derived), with `attrs` on top. */
export function userRow(username: string, attrs: Partial<NewUser> = {}, now = nowIso()): NewUser {
  return {
    username,
    name: username,
    email: `${username}@example.com`,
    state: 'active',
    password_hash: null,
    password_set_at: null,
    is_admin: 0,
    external: 0,
    bot: 0,
    user_type: 'human',
    private_profile: 0,
    bio: '',
    location: '',
    public_email: null,
    commit_email: null,
    job_title: '',
    pronouns: null,
    website_url: '',
    organization: '',
    messenger_a: '',
    network_a: '',
    network_b: '',
    chat_a: '',
    note: null,
    projects_limit: 100000,
    can_create_group: 1,
    can_create_project: 1,
    two_factor_enabled: 0,
    theme_id: 3,
    color_scheme_id: 1,
    avatar_url: null,
    created_by_id: null,
    created_at: now,
    updated_at: now,
    confirmed_at: now,
    last_sign_in_at: null,
    current_sign_in_at: null,
    last_sign_in_ip: null,
    current_sign_in_ip: null,
    sign_in_count: 0,
    last_activity_on: null,
    failed_attempts: 0,
    locked_at: null,
    ...attrs,
  };
}

type NewNamespace = Insertable<NamespacesTable>;
type NewProject = Insertable<ProjectsTable>;

/**
 * A group named `path` under `parent` (top level without), private unless `attrs` say otherwise.
 * `traversal_ids` is left empty: it holds the row's own id, set once the row exists.
 */
export function groupRow(path: string, parent: { id: number; full_path: string } | null, attrs: Partial<NewNamespace> = {}, now = nowIso()): NewNamespace {
  return {
    type: 'Group',
    name: path,
    path,
    full_path: parent ? `${parent.full_path}/${path}` : path,
    parent_id: parent?.id ?? null,
    traversal_ids: '',
    owner_id: null,
    visibility: 'private',
    description: '',
    avatar_url: null,
    request_access_enabled: 1,
    project_creation_level: 'developer',
    subgroup_creation_level: 'maintainer',
    share_with_group_lock: 0,
    settings: '{}',
    created_by_id: null,
    created_at: now,
    updated_at: now,
    ...attrs,
  };
}

/** A private project named `path` in namespace `namespaceId` (default branch main), with `attrs` on top. */
export function projectRow(namespaceId: number, path: string, attrs: Partial<NewProject> = {}, now = nowIso()): NewProject {
  return {
    namespace_id: namespaceId,
    creator_id: null,
    name: path,
    path,
    description: null,
    visibility: 'private',
    default_branch: 'main',
    archived: 0,
    repository_storage: 'default',
    topics: '[]',
    settings: '{}',
    created_at: now,
    updated_at: now,
    last_activity_at: now,
    ...attrs,
  };
}

/** A direct membership of `userId` at `level` in a project (`Project`) or group (`Namespace`), no expiry, no custom role. */
export function memberRow(type: 'Project' | 'Namespace', sourceId: number, userId: number, level: number, now = nowIso()): Insertable<MembersTable> {
  return {
    source_type: type,
    source_id: sourceId,
    user_id: userId,
    access_level: level,
    expires_at: null,
    member_role_id: null,
    created_by_id: null,
    created_at: now,
    updated_at: now,
  };
}

/** Inserts `rows` into `table` in batches of `size` (one statement each). */
export async function insertAll(k: Kysely<Database>, table: keyof Database, rows: readonly unknown[], size = 500): Promise<void> {
  for (let i = 0; i < rows.length; i += size)
    await k
      .insertInto(table)
      .values(rows.slice(i, i + size) as never)
      .execute();
}
