// GET /api/users/:username/: the target of the `user`/`author` links of change records. Administrators
// see Weblate's full user object; others the public part (name and username).
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { view, wireFor } from './common.ts';
import { drfTime, sendJson } from './serializers.ts';

export function translationUsersRoutes(app: FastifyInstance, c: Container): void {
  app.get<{ Params: { username: string } }>(
    '/api/users/:username/',
    view('GET, PUT, PATCH, DELETE, HEAD, OPTIONS', 'User Instance', 'Users API.'),
    async (req, reply) => {
      const user = await c.translation.queries.user(req.actor, req.params.username);
      const wire = wireFor(c, req);
      const base = `/api/users/${encodeURIComponent(user.username)}/`;
      const pub = { full_name: user.name, username: user.username, id: user.id, url: wire.api(base) };
      if (!req.actor.isAdmin) return sendJson(reply, pub);
      return sendJson(reply, {
        email: user.email,
        full_name: user.name,
        username: user.username,
        groups: [],
        notifications: [],
        is_superuser: Boolean(user.is_admin),
        is_active: user.state === 'active',
        is_bot: Boolean(user.bot),
        date_joined: drfTime(user.created_at),
        last_login: drfTime(user.last_sign_in_at ?? null),
        id: user.id,
        url: wire.api(base),
        statistics_url: wire.api(`${base}statistics/`),
        contributions_url: wire.api(`${base}contributions/`),
      });
    },
  );
}
