// Seed factories: each test shows its preconditions.
import type { Container } from '../../src/container.ts';
import type { UserRow } from '../../src/db/schema.ts';
import type { CreateTokenInput } from '../../src/domain/tokens/tokens.service.ts';

let counter = 0;

export interface Seed {
  user(attrs?: Partial<{ username: string; name: string; email: string; password: string; is_admin: boolean; external: boolean; state: string; private_profile: boolean }>): Promise<UserRow>;
  /** creates a personal access token and returns its secret and row id */
  token(user: UserRow, attrs?: Partial<CreateTokenInput>): Promise<{ token: string; id: number; headers: Record<string, string> }>;
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
    async token(user, attrs = {}) {
      const t = await c.tokens.create(user, { name: attrs.name ?? 'test', scopes: attrs.scopes ?? ['api'], expires_at: attrs.expires_at ?? null, impersonation: attrs.impersonation, description: attrs.description });
      return { token: t.token!, id: t.row.id, headers: { 'private-token': t.token! } };
    },
  };
}
