// Wire shapes of namespaces: GitLab's Entities::Namespace (NamespaceBasic + the counts shown to a
// group's administrators) and Entities::PublicGroupDetails (GET /projects/:id/groups).
import { Type, type Static } from 'typebox';
import type { NamespaceRow } from '../../../db/schema.ts';
import type { NamespaceView } from '../../../domain/groups/namespaces.service.ts';
import { NullableInteger, NullableString } from '../schemas/common.ts';

export const NamespaceSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  path: Type.String(),
  kind: Type.String(),
  full_path: Type.String(),
  parent_id: NullableInteger,
  avatar_url: NullableString,
  web_url: Type.String(),
  members_count_with_descendants: Type.Optional(Type.Integer()),
  root_repository_size: Type.Optional(NullableInteger),
  projects_count: Type.Optional(Type.Integer()),
});
export type NamespaceEntity = Static<typeof NamespaceSchema>;

export function toNamespace(view: NamespaceView, externalUrl: string): NamespaceEntity {
  const ns = view.namespace;
  const user = ns.type === 'User';
  const out: NamespaceEntity = {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: user ? 'user' : 'group',
    full_path: ns.full_path,
    parent_id: ns.parent_id,
    avatar_url: user ? view.ownerAvatarUrl : ns.avatar_url,
    // user_url(owner) for a personal namespace, the group's page otherwise
    web_url: user ? `${externalUrl}/${ns.path}` : `${externalUrl}/groups/${ns.full_path}`,
  };
  if (view.admin) {
    out.members_count_with_descendants = view.admin.membersCountWithDescendants;
    // root_storage_statistics are not computed: GitLab answers null until they are
    out.root_repository_size = null;
    out.projects_count = view.admin.projectsCount;
  }
  return out;
}

export const PublicGroupDetailsSchema = Type.Object({
  id: Type.Integer(),
  web_url: Type.String(),
  name: Type.String(),
  avatar_url: NullableString,
  full_name: Type.String(),
  full_path: Type.String(),
});

export function toPublicGroupDetails(g: NamespaceRow, fullName: string, externalUrl: string): Static<typeof PublicGroupDetailsSchema> {
  return { id: g.id, web_url: `${externalUrl}/groups/${g.full_path}`, name: g.name, avatar_url: g.avatar_url, full_name: fullName, full_path: g.full_path };
}
