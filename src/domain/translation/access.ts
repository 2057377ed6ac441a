// Who may see and change translation objects. Projects are public (0) or protected (1) — everyone
// reads them, anonymous callers included — or private (100): administrators only. A `restricted`
// component is seen by administrators only. Those rules are SQL in visibility.ts, one function per
// table, under every list and lookup: what cannot be seen is a plain 404 (querysets filter it out, as
// Weblate's do). Writes (projects, components, languages) are for administrators: Weblate's
// `project.add`, `project.edit` and `component.edit` belong to superusers until translation teams exist.
import { Errors } from '../../lib/errors.ts';
import type { Actor } from '../access/actor.ts';

export const ACCESS_PUBLIC = 0;
export const ACCESS_PROTECTED = 1;
export const ACCESS_PRIVATE = 100;
export const ACCESS_CONTROL_VALUES = [ACCESS_PUBLIC, ACCESS_PROTECTED, ACCESS_PRIVATE];

/** Writes: 401 for anonymous callers (DRF's IsAuthenticatedOrReadOnly), 403 with Weblate's reason otherwise. */
export function requireAdmin(actor: Actor, reason: string): void {
  if (!actor.user) throw Errors.unauthorized();
  if (!actor.isAdmin) throw Errors.forbidden(reason);
}

/** Repository status and operations need `vcs.view`; administrators here. */
export function canViewVcs(actor: Actor): boolean {
  return actor.isAdmin;
}
