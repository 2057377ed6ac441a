// What every group page shows above its content: the group's ancestors for the breadcrumbs (the group page, the
// group's issues and boards, its settings), and a settings page's place (its ancestors and the settings tabs the
// viewer may open).
import type { Container } from '../../container.ts';
import type { NamespaceRow } from '../../db/schema.ts';
import { groupSettingsNav } from '../../web/views/groups/group-settings.tsx';
import type { SettingsPlace } from '../../web/views/settings/place.tsx';

/** The group's ancestors, root first, with their paths and names (full_path and the full name have one part per level). */
export async function groupAncestors(c: Container, group: NamespaceRow): Promise<NamespaceRow[]> {
  const names = (await c.groups.fullNames([group])).get(group.id)?.split(' / ') ?? [];
  const parts = group.full_path.split('/');
  if (names.length !== parts.length) return [];
  return parts.slice(0, -1).map((_, i) => ({ ...group, name: names[i]!, full_path: parts.slice(0, i + 1).join('/') }));
}

/** A group's settings pages' place, for the viewer whose access to it this is. */
export async function groupSettingsPlace(
  c: Container,
  r: { group: NamespaceRow; access: { abilities: ReadonlySet<string> } },
): Promise<SettingsPlace & { kind: 'group' }> {
  return { kind: 'group', group: r.group, ancestors: await groupAncestors(c, r.group), nav: groupSettingsNav(r.access.abilities) };
}
