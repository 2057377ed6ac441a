// The one routine that deletes projects (project delete, group delete, user delete): rows in the
// caller's transaction, repositories from disk once that transaction has committed.
import type { Kysely } from 'kysely';
import type { Database, ProjectRow } from '../../db/schema.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import { queueProjectBlobs } from '../blobs/blob-deletions.ts';
import { deleteResourceBots } from '../core/resource-bots.ts';
import { deleteWebHooksOf } from '../core/web-hook-rows.ts';

/** Deletes the projects' rows and what hangs on them (memberships, access token bots, old paths); their blobs are queued for removal. */
export async function deleteProjectRows(trx: Kysely<Database>, projects: Pick<ProjectRow, 'id'>[]): Promise<void> {
  const ids = projects.map((p) => p.id);
  if (!ids.length) return;
  await queueProjectBlobs(trx, ids);
  await deleteWebHooksOf(trx, { projectIds: ids });
  await deleteResourceBots(trx, 'Project', ids);
  await trx.deleteFrom('members').where('source_type', '=', 'Project').where('source_id', 'in', ids).execute();
  await trx.deleteFrom('redirect_routes').where('source_type', '=', 'Project').where('source_id', 'in', ids).execute();
  await trx.deleteFrom('projects').where('id', 'in', ids).execute();
}

/** After the commit: the repositories of deleted projects leave the disk. */
export function removeRepositories(repos: RepositoryStore, projects: Pick<ProjectRow, 'id' | 'repository_storage'>[]): void {
  for (const p of projects) repos.remove(p);
}
