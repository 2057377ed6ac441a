// The signed-in start page and the dashboard: `/` (your projects, as GitLab's root), your projects and
// starred projects, your groups, and the activity of your projects. Lists come from the same domain
// queries as the API (ProjectsQuery, GroupsService.listQuery, EventsQuery) with the viewer's actor.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { EventSource, EventsQuery } from '../../domain/events/events-query.ts';
import type { ProjectFilters } from '../../domain/projects/projects-query.ts';
import { ActivityPage, DashboardGroupsPage, DashboardProjectsPage } from '../../web/views/dashboard/pages.tsx';
import { eventPage, groupPage, listQuery, PROJECT_SORTS, projectPage } from './lists.ts';
import { HIDDEN, PAGE, type Web } from './web.ts';

export function dashboardPages(app: FastifyInstance, c: Container, web: Web, events: EventsQuery): void {
  async function projects(req: FastifyRequest, reply: FastifyReply, tab: 'projects' | 'starred') {
    const ctx = await web.requireUser(req);
    const q = listQuery(req);
    const filters: Partial<ProjectFilters> = tab === 'starred' ? { starred: true } : { membership: true };
    const { views, hasNext, sort } = await projectPage(c, ctx.actor, { kind: 'all' }, filters, q);
    return web.page(reply, DashboardProjectsPage({ ctx, tab, views, list: { page: q.page, hasNext, search: q.search, sort }, sorts: PROJECT_SORTS }));
  }

  // GitLab: the root is the dashboard for the signed in, the sign-in page for everybody else.
  app.get('/', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.context(req);
    if (!ctx.user) return reply.redirect('/users/sign_in', 302);
    return projects(req, reply, 'projects');
  });
  app.get('/dashboard', { config: PAGE, schema: HIDDEN }, async (_req, reply) => reply.redirect('/dashboard/projects', 302));
  app.get('/dashboard/projects', { config: PAGE, schema: HIDDEN }, (req, reply) => projects(req, reply, 'projects'));
  app.get('/dashboard/projects/starred', { config: PAGE, schema: HIDDEN }, (req, reply) => projects(req, reply, 'starred'));

  app.get('/dashboard/groups', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const q = listQuery(req);
    // the groups the user belongs to (with those their memberships make visible), even for administrators
    const { groups, fullNames, hasNext } = await groupPage(c, ctx.actor, { all_available: false }, q);
    return web.page(reply, DashboardGroupsPage({ ctx, groups, fullNames, list: { page: q.page, hasNext, search: q.search } }));
  });

  app.get('/dashboard/activity', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const q = listQuery(req);
    const own = (req.query as Record<string, unknown>).filter === 'own';
    // GET /events?scope=all (the events of your projects), or GET /events (your own)
    const source: EventSource = own ? { kind: 'user', user: ctx.user } : { kind: 'authorized', userId: ctx.user.id };
    const page = await eventPage(c, events, ctx.actor, source, q.page);
    return web.page(reply, ActivityPage({ ctx, views: page.views, projects: page.projects, own, list: { page: q.page, hasNext: page.hasNext, search: '' } }));
  });
}
