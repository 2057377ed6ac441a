// Project#owners, as GitLab's system-hook payloads name them.
import type { Kysely } from 'kysely';
import type { Database, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { todayDate } from '../../lib/time.ts';
import { traversalIds } from '../access/policy.ts';
import { ACCESS_LEVELS } from '../core/roles.ts';

const OWNER = ACCESS_LEVELS.OWNER;

/** Project#owners for system hooks: the personal namespace's owner, or the Owners of the project and its groups. */
export async function projectOwners(trx: Kysely<Database>, project: ProjectRow, namespace: NamespaceRow): Promise<Pick<UserRow, 'name' | 'email'>[]> {
  if (namespace.type === 'User') {
    return namespace.owner_id === null ? [] : trx.selectFrom('users').select(['name', 'email']).where('id', '=', namespace.owner_id).execute();
  }
  const today = todayDate();
  return trx
    .selectFrom('members')
    .innerJoin('users', 'users.id', 'members.user_id')
    .select(['users.name', 'users.email'])
    .distinct()
    .where('members.access_level', '>=', OWNER)
    .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', today)]))
    .where((eb) =>
      eb.or([
        eb.and([eb('members.source_type', '=', 'Project'), eb('members.source_id', '=', project.id)]),
        eb.and([eb('members.source_type', '=', 'Namespace'), eb('members.source_id', 'in', traversalIds(namespace))]),
      ]),
    )
    .orderBy('users.name')
    .execute();
}
