// User profiles at `/<username>` (the users' web_url), through the namespace dispatcher: avatar, name,
// bio, the personal projects the viewer may see (GET /users/:id/projects) and recent activity
// (GET /users/:id/events, with the events' visibility rules). As GET /users/:id refuses the anonymous,
// they are sent to sign in; a private profile or a blocked account shows only the name (but to the
// user themself and to administrators).
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import type { EventsQuery } from '../../domain/events/events-query.ts';
import { UserPage } from '../../web/views/users/user-page.tsx';
import { eventPage, projectPage } from './lists.ts';
import { SignInRequired, type Web } from './web.ts';

const USERNAME_RE = /^\/([A-Za-z0-9_.][A-Za-z0-9_.-]*)$/;

export function userPages(_app: FastifyInstance, c: Container, web: Web, events: EventsQuery): void {
  web.namespacePage(async (_req, reply, ctx, path) => {
    const m = USERNAME_RE.exec(path);
    if (!m) return null;
    const user = await c.users.byUsername(m[1]);
    if (!user) return null;
    // a renamed user keeps no old URL (GitLab's redirect routes of users are not kept here)
    if (!ctx.user) throw new SignInRequired();
    const self = ctx.actor.isAdmin || ctx.user.id === user.id;
    const reason = user.state.startsWith('blocked') ? 'blocked' : user.private_profile === 1 ? 'private' : null;
    if (reason && !self) return web.page(reply, UserPage({ ctx, user, details: null, reason }));
    const ns = await c.users.personalNamespaceId(user.id);
    const [projects, activity] = await Promise.all([
      ns === undefined
        ? { views: [] }
        : projectPage(c, ctx.actor, { kind: 'namespace', namespaceId: ns }, {}, { page: 1, search: '', sort: 'latest_activity_desc' }),
      eventPage(c, events, ctx.actor, { kind: 'user', user }, 1),
    ]);
    return web.page(reply, UserPage({ ctx, user, reason, details: { projects: projects.views, events: activity.views, eventProjects: activity.projects } }));
  });
}
