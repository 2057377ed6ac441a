// Whether any webhook of a project or of a group above it hears its job or pipeline events (GitLab's
// project.has_active_hooks?(:job_hooks) and (:pipeline_hooks), asked before a build or pipeline runs its hooks):
// only then is the event's payload built and recorded. System hooks never hear these events. A hook disabled
// for its failures still counts (the dispatcher skips it): at worst an event is recorded that nobody receives.
// The answer is kept per project and group path until the webhooks' table version moves.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, NamespaceRow } from '../../db/schema.ts';
import { readVersions, stamp, type Versions } from '../../db/versions.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';

export type CiHookEvent = 'job_events' | 'pipeline_events';

const answers = new WeakMap<Db, VersionedCache<boolean>>();

/**
 * `k` is the connection to ask through (the caller's transaction, if it holds one: on SQLite another
 * statement outside it would wait for it); the versions are read first, so an answer is never older than them.
 */
export async function hasCiHooks(
  db: Db,
  k: Kysely<Database>,
  projectId: number,
  namespace: Pick<NamespaceRow, 'type' | 'traversal_ids'>,
  event: CiHookEvent,
  versions?: Versions,
): Promise<boolean> {
  let cache = answers.get(db);
  if (!cache) answers.set(db, (cache = new VersionedCache<boolean>(5000, 60_000)));
  const groupIds = namespace.type === 'Group' ? namespace.traversal_ids.split('/').filter(Boolean).map(Number) : [];
  const key = `${event}:${projectId}:${groupIds.join(',')}`;
  const at = stamp(versions ?? (await readVersions(db)), ['web_hooks']);
  const known = cache.get(key, at);
  if (known !== undefined) return known;
  const hook = await k
    .selectFrom('web_hooks')
    .select('id')
    .where((eb) => eb.or([eb('project_id', '=', projectId), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])]))
    .where(event, '=', 1)
    .limit(1)
    .executeTakeFirst();
  cache.set(key, at, hook !== undefined);
  return hook !== undefined;
}
