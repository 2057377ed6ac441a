// How open each visibility level is (Gitlab::VisibilityLevel), and that nothing is more visible than the
// group it lives in. Who may use or see a level is the access rulebook's (access/visibility.ts).
import type { NamespaceRow } from '../../db/schema.ts';
import { VISIBILITY_LEVELS, type VisibilityName } from './settings-definitions.ts';

/** Gitlab::VisibilityLevel's number of a level name: private 0, internal 10, public 20 (anything else counts as private). */
export const levelOf = (v: string): number => VISIBILITY_LEVELS[v as VisibilityName] ?? 0;

/** Whether `v` is more open than the group `ns` (a personal namespace limits nothing). */
export function aboveNamespace(v: string, ns: Pick<NamespaceRow, 'type' | 'visibility'>): boolean {
  return ns.type === 'Group' && levelOf(v) > levelOf(ns.visibility);
}

/** `v`, lowered to its group's level when it is more open: nothing is more visible than the group it lives in. */
export function clampToNamespace(v: string, ns: Pick<NamespaceRow, 'type' | 'visibility'>): string {
  return aboveNamespace(v, ns) ? ns.visibility : v;
}
