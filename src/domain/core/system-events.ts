// System events (GitLab's system-hook payloads), written to the outbox (the jobs table) in the same
// transaction as the change that causes them. The hooks issue delivers them.
import { queuedJob } from '../../jobs/job-row.ts';
import type { Kysely } from 'kysely';
import type { Database, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { ACCESS_LEVEL_NAMES } from './roles.ts';
import { type ActivityMeta, recordActivity } from './activity.ts';

export const SYSTEM_EVENT_JOB = 'system_event';

export type SystemEventName =
  | 'project_create'
  | 'project_destroy'
  | 'project_rename'
  | 'project_transfer'
  | 'project_update'
  | 'group_create'
  | 'group_destroy'
  | 'group_rename'
  | 'user_add_to_team'
  | 'user_remove_from_team'
  | 'user_update_for_team'
  | 'user_add_to_group'
  | 'user_remove_from_group'
  | 'user_update_for_group'
  | 'user_create'
  | 'user_destroy'
  | 'user_rename'
  | 'push'
  | 'tag_push'
  | 'repository_update'
  | 'key_create'
  | 'key_destroy';

/**
 * Payloads that GitLab names by object_kind rather than event_name (the merge request hook; notes,
 * pipelines and jobs go to project and group hooks only, never to system hooks).
 */
export type SystemObjectKind = 'merge_request' | 'issue' | 'note' | 'pipeline' | 'build';

export async function recordSystemEvent(
  trx: Kysely<Database>,
  payload: ({ event_name: SystemEventName } | { object_kind: SystemObjectKind; event_name?: undefined }) & Record<string, unknown>,
  meta: ActivityMeta = {},
): Promise<void> {
  await trx.insertInto('jobs').values(queuedJob(SYSTEM_EVENT_JOB, payload)).execute();
  await recordActivity(trx, payload, meta);
}

type Owner = Pick<UserRow, 'name' | 'email'>;
const ts = (row: { created_at: string; updated_at: string }) => ({ created_at: row.created_at, updated_at: row.updated_at });

export function projectPayload(
  event_name: 'project_create' | 'project_destroy' | 'project_rename' | 'project_transfer' | 'project_update',
  project: ProjectRow,
  namespace: NamespaceRow,
  owners: Owner[],
  oldPathWithNamespace?: string,
) {
  return {
    ...ts(project),
    event_name,
    name: project.name,
    owner_email: owners[0]?.email ?? null,
    owner_name: owners[0]?.name ?? null,
    owners: owners.map((o) => ({ name: o.name, email: o.email })),
    path: project.path,
    path_with_namespace: `${namespace.full_path}/${project.path}`,
    project_id: project.id,
    project_namespace_id: namespace.id,
    project_visibility: project.visibility,
    ...(oldPathWithNamespace !== undefined ? { old_path_with_namespace: oldPathWithNamespace } : {}),
  };
}

export function groupPayload(event_name: 'group_create' | 'group_destroy' | 'group_rename', group: NamespaceRow, old?: { path: string; full_path: string }) {
  return {
    ...ts(group),
    event_name,
    name: group.name,
    owner_email: null,
    owner_name: null,
    path: group.path,
    full_path: group.full_path,
    group_id: group.id,
    ...(old ? { old_path: old.path, old_full_path: old.full_path } : {}),
  };
}

export function projectMemberPayload(
  event_name: 'user_add_to_team' | 'user_remove_from_team' | 'user_update_for_team',
  member: { created_at: string; updated_at: string; access_level: number; expires_at: string | null },
  project: ProjectRow,
  namespace: NamespaceRow,
  user: UserRow,
) {
  return {
    ...ts(member),
    event_name,
    access_level: ACCESS_LEVEL_NAMES[member.access_level] ?? String(member.access_level),
    expires_at: member.expires_at,
    project_id: project.id,
    project_name: project.name,
    project_path: project.path,
    project_path_with_namespace: `${namespace.full_path}/${project.path}`,
    project_visibility: project.visibility,
    user_email: user.email,
    user_name: user.name,
    user_username: user.username,
    user_id: user.id,
  };
}

export function groupMemberPayload(
  event_name: 'user_add_to_group' | 'user_remove_from_group' | 'user_update_for_group',
  member: { created_at: string; updated_at: string; access_level: number; expires_at: string | null },
  group: NamespaceRow,
  user: UserRow,
) {
  return {
    ...ts(member),
    event_name,
    group_access: ACCESS_LEVEL_NAMES[member.access_level] ?? String(member.access_level),
    expires_at: member.expires_at,
    group_id: group.id,
    group_name: group.name,
    group_path: group.path,
    full_path: group.full_path,
    user_email: user.email,
    user_name: user.name,
    user_username: user.username,
    user_id: user.id,
  };
}

export function userPayload(event_name: 'user_create' | 'user_destroy' | 'user_rename', user: UserRow, oldUsername?: string) {
  return {
    ...ts(user),
    event_name,
    email: user.email,
    name: user.name,
    username: user.username,
    user_id: user.id,
    ...(oldUsername !== undefined ? { old_username: oldUsername } : {}),
  };
}
