// Every user has a personal namespace named after them: created, renamed and removed with the user.
import type { Kysely } from 'kysely';
import type { Database, ProjectRow, UserRow } from '../../db/schema.ts';
import { projectPayload, recordSystemEvent } from '../core/system-events.ts';
import { deleteProjectRows } from '../projects/project-destroy.ts';
import { projectOwners } from '../projects/project-owners.ts';

export async function createPersonalNamespace(k: Kysely<Database>, user: UserRow, now: string): Promise<void> {
  const ns = await k
    .insertInto('namespaces')
    .values({
      type: 'User',
      name: user.name,
      path: user.username,
      full_path: user.username,
      parent_id: null,
      traversal_ids: '',
      owner_id: user.id,
      visibility: 'public',
      description: '',
      avatar_url: null,
      request_access_enabled: 0,
      project_creation_level: 'developer',
      subgroup_creation_level: 'owner',
      share_with_group_lock: 0,
      settings: '{}',
      created_by_id: user.id,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await k
    .updateTable('namespaces')
    .set({ traversal_ids: `/${ns.id}/` })
    .where('id', '=', ns.id)
    .execute();
}

/** The personal namespace id of each user (one query for a page of users). */
export async function personalNamespaceIds(k: Kysely<Database>, userIds: number[]): Promise<Map<number, number>> {
  if (!userIds.length) return new Map();
  const rows = await k.selectFrom('namespaces').select(['id', 'owner_id']).where('type', '=', 'User').where('owner_id', 'in', userIds).execute();
  return new Map(rows.map((r) => [r.owner_id!, r.id]));
}

/** The namespace follows the username; the old paths of it and its projects keep redirecting. */
export async function renamePersonalNamespace(k: Kysely<Database>, user: UserRow, oldUsername: string, now: string): Promise<void> {
  const ns = await k.selectFrom('namespaces').select(['id', 'full_path']).where('owner_id', '=', user.id).where('type', '=', 'User').executeTakeFirst();
  if (!ns) return;
  await k.updateTable('namespaces').set({ path: user.username, full_path: user.username, updated_at: now }).where('id', '=', ns.id).execute();
  // a new owner of an old path takes it over: drop redirects that now point elsewhere
  await k
    .deleteFrom('redirect_routes')
    .where((eb) => eb(eb.fn('lower', ['path']), '=', user.username.toLowerCase()))
    .execute();
  await k.insertInto('redirect_routes').values({ source_type: 'Namespace', source_id: ns.id, path: oldUsername, created_at: now }).execute();
  const projects = await k.selectFrom('projects').select(['id', 'path']).where('namespace_id', '=', ns.id).execute();
  for (const p of projects) {
    await k
      .deleteFrom('redirect_routes')
      .where((eb) => eb(eb.fn('lower', ['path']), '=', `${oldUsername}/${p.path}`.toLowerCase()))
      .execute();
    await k
      .insertInto('redirect_routes')
      .values({ source_type: 'Project', source_id: p.id, path: `${oldUsername}/${p.path}`, created_at: now })
      .execute();
  }
}

/** Personal projects go with their owner (project_destroy events each); returns them for removeRepositories. */
export async function deletePersonalProjects(k: Kysely<Database>, userId: number): Promise<ProjectRow[]> {
  const ns = await k.selectFrom('namespaces').selectAll().where('owner_id', '=', userId).where('type', '=', 'User').executeTakeFirst();
  if (!ns) return [];
  const projects = await k.selectFrom('projects').selectAll().where('namespace_id', '=', ns.id).orderBy('id').execute();
  for (const p of projects) await recordSystemEvent(k, projectPayload('project_destroy', p, ns, await projectOwners(k, p, ns)));
  await deleteProjectRows(k, projects);
  return projects;
}
