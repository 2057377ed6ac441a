// Who may read a project's code: read_code, narrowed by the repository feature's access level.
import type { ProjectRow } from '../../db/schema.ts';
import type { Actor } from '../access/actor.ts';
import type { ProjectAccess } from '../access/policy.ts';
import { settingsOf } from '../core/project-settings.ts';

export function canReadCode(actor: Actor, project: ProjectRow, access: ProjectAccess): boolean {
  if (!access.abilities.has('read_code')) return false;
  if (actor.isAdmin) return true;
  const level = settingsOf(project).repository_access_level;
  if (level === 'disabled') return false;
  if (level === 'private') return access.level >= 20;
  return true;
}
