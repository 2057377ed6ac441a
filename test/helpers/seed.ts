// Seed factories: each test shows its preconditions.
import type { Container } from '../../src/container.ts';
import type { MemberRoleRow, NamespaceRow, ProjectRow, UserRow } from '../../src/db/schema.ts';
import { groupRow, projectRow } from './rows.ts';
import { nowIso } from '../../src/lib/time.ts';
import type { CreateTokenInput } from '../../src/domain/tokens/tokens.service.ts';
import { protectionDefaultsOf } from '../../src/domain/repository/branch-protection.ts';
import { protectDefaultBranch } from '../../src/domain/repository/default-branch.ts';

let counter = 0;

export interface Seed {
  user(
    attrs?: Partial<{
      username: string;
      name: string;
      email: string;
      password: string;
      is_admin: boolean;
      external: boolean;
      state: string;
      private_profile: boolean;
    }>,
  ): Promise<UserRow>;
  /** creates a personal access token and returns its secret and row id */
  token(user: UserRow, attrs?: Partial<CreateTokenInput>): Promise<{ token: string; id: number; headers: Record<string, string> }>;
  /** a group (rows only, no events), optionally under `parent` */
  group(attrs?: Partial<{ path: string; name: string; visibility: string; parent: NamespaceRow }>): Promise<NamespaceRow>;
  /** a project (rows only, no events, no repository) in a group or a user's personal namespace */
  project(attrs?: Partial<{ path: string; name: string; visibility: string; namespace: NamespaceRow; owner: UserRow; archived: boolean }>): Promise<ProjectRow>;
  /** a membership row */
  member(
    source: { project?: ProjectRow; group?: NamespaceRow },
    user: UserRow,
    accessLevel: number,
    attrs?: Partial<{ expires_at: string; member_role: MemberRoleRow }>,
  ): Promise<void>;
  /** a custom role with the given permissions on (instance-wide unless `group`) */
  memberRole(baseAccessLevel: number, permissions: string[], attrs?: Partial<{ name: string; group: NamespaceRow }>): Promise<MemberRoleRow>;
  /** a project with a bare repository on disk (empty unless `files` are given: then one commit on main) */
  repoProject(
    attrs?: Partial<{ path: string; name: string; visibility: string; namespace: NamespaceRow; owner: UserRow; archived: boolean }>,
  ): Promise<{ project: ProjectRow; dir: string }>;
  /** the personal namespace of a user */
  namespaceOf(user: UserRow): Promise<NamespaceRow>;
}

export function makeSeed(c: Container): Seed {
  return {
    async user(attrs = {}) {
      const n = ++counter;
      const username = attrs.username ?? `user${n}_${Math.random().toString(36).slice(2, 6)}`;
      let u = await c.users.create({
        username,
        name: attrs.name ?? `User ${n}`,
        email: attrs.email ?? `${username}@example.com`,
        password: attrs.password ?? 'password-123',
        is_admin: attrs.is_admin,
        external: attrs.external,
        private_profile: attrs.private_profile,
      });
      if (attrs.state && attrs.state !== 'active') {
        await c.db.kysely.updateTable('users').set({ state: attrs.state }).where('id', '=', u.id).execute();
        u = (await c.users.byId(u.id))!;
      }
      return u;
    },
    async group(attrs = {}) {
      const n = ++counter;
      const path = attrs.path ?? `group${n}-${Math.random().toString(36).slice(2, 6)}`;
      const now = nowIso();
      const parent = attrs.parent;
      const row = await c.db.kysely
        .insertInto('namespaces')
        .values(groupRow(path, parent ?? null, { name: attrs.name ?? path, visibility: attrs.visibility ?? 'private' }, now))
        .returningAll()
        .executeTakeFirstOrThrow();
      return c.db.kysely
        .updateTable('namespaces')
        .set({ traversal_ids: `${parent ? parent.traversal_ids : '/'}${row.id}/` })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    async project(attrs = {}) {
      const n = ++counter;
      const path = attrs.path ?? `project${n}-${Math.random().toString(36).slice(2, 6)}`;
      const namespace = attrs.namespace ?? (attrs.owner ? await this.namespaceOf(attrs.owner) : await this.group());
      const now = nowIso();
      const project = await c.db.kysely
        .insertInto('projects')
        .values(
          projectRow(
            namespace.id,
            path,
            { creator_id: attrs.owner?.id ?? null, name: attrs.name ?? path, visibility: attrs.visibility ?? 'private', archived: attrs.archived ? 1 : 0 },
            now,
          ),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      // as after its first push: the default branch protected as the defaults say (ProtectDefaultBranchService)
      const defaults = (await c.settings.get()).default_branch_protection_defaults as never;
      await protectDefaultBranch(c.db.kysely, project, protectionDefaultsOf(namespace, defaults));
      return project;
    },
    async member(source, user, accessLevel, attrs = {}) {
      const now = nowIso();
      await c.db.kysely
        .insertInto('members')
        .values({
          source_type: source.project ? 'Project' : 'Namespace',
          source_id: source.project ? source.project.id : source.group!.id,
          user_id: user.id,
          access_level: accessLevel,
          expires_at: attrs.expires_at ?? null,
          member_role_id: attrs.member_role?.id ?? null,
          created_by_id: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    },
    async memberRole(base, permissions, attrs = {}) {
      const now = nowIso();
      return c.db.kysely
        .insertInto('member_roles')
        .values({
          namespace_id: attrs.group?.id ?? null,
          name: attrs.name ?? `role ${++counter}`,
          description: null,
          base_access_level: base,
          permissions: JSON.stringify(Object.fromEntries(permissions.map((p) => [p, true]))),
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },
    async repoProject(attrs = {}) {
      const project = await this.project(attrs);
      await c.repos.create(project, { defaultBranch: project.default_branch ?? 'main' });
      return { project, dir: c.repos.pathOf(project) };
    },
    async namespaceOf(user) {
      return c.db.kysely.selectFrom('namespaces').selectAll().where('owner_id', '=', user.id).where('type', '=', 'User').executeTakeFirstOrThrow();
    },
    async token(user, attrs = {}) {
      const t = await c.tokens.create(user, {
        name: attrs.name ?? 'test',
        scopes: attrs.scopes ?? ['api'],
        expires_at: attrs.expires_at ?? null,
        impersonation: attrs.impersonation,
        description: attrs.description,
      });
      return { token: t.token!, id: t.row.id, headers: { 'private-token': t.token! } };
    },
  };
}
