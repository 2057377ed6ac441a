// Explore (GitLab's /explore): the public and internal projects and groups the viewer may see,
// with search, sort and pagination. The anonymous see the public ones. Private projects and groups
// are left out even for their members (those are on the dashboard).
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { ExploreGroupsPage, ExploreProjectsPage } from '../../web/views/dashboard/pages.tsx';
import { groupPage, listQuery, PROJECT_SORTS, projectPage } from './lists.ts';
import { HIDDEN, PAGE, type Web } from './web.ts';

export function explorePages(app: FastifyInstance, c: Container, web: Web): void {
  app.get('/explore', { config: PAGE, schema: HIDDEN }, async (_req, reply) => reply.redirect('/explore/projects', 302));

  app.get('/explore/projects', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.context(req);
    const q = listQuery(req);
    // everything the viewer may see (the API's GET /projects), less the private projects
    const { views, hasNext, sort } = await projectPage(c, ctx.actor, { kind: 'explore' }, {}, q);
    return web.page(reply, ExploreProjectsPage({ ctx, views, list: { page: q.page, hasNext, search: q.search, sort }, sorts: PROJECT_SORTS }));
  });

  app.get('/explore/groups', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.context(req);
    const q = listQuery(req);
    // GET /groups?all_available=true, less the private groups
    const { groups, fullNames, hasNext } = await groupPage(c, ctx.actor, { all_available: true, explore: true }, q);
    return web.page(reply, ExploreGroupsPage({ ctx, groups, fullNames, list: { page: q.page, hasNext, search: q.search } }));
  });
}
