// Milestone pages (the web_url of project milestones `/<project>/-/milestones/<iid>` and of group milestones
// `/groups/<group>/-/milestones/<iid>`), and the export's download link `/<project>/download_export`, which
// leads to the API's download (it decides who may have the archive).
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { MilestonePage } from '../../web/views/milestones/milestone.tsx';
import { encodePath, type Web } from './web.ts';

export function milestonePages(_app: FastifyInstance, c: Container, web: Web): void {
  web.projectPage('/-/milestones/:iid', async (_req, reply, { ctx, resolved, params }) => {
    const milestone = await c.milestones.byIid({ type: 'Project', ...resolved }, Number(params.iid));
    const fullPath = `${resolved.namespace.full_path}/${resolved.project.path}`;
    const crumbs = [
      {
        text: resolved.namespace.name,
        href: resolved.namespace.type === 'Group' ? `/groups/${encodePath(resolved.namespace.full_path)}` : `/${encodePath(resolved.namespace.path)}`,
      },
      { text: resolved.project.name, href: `/${encodePath(fullPath)}` },
    ];
    return web.page(reply, MilestonePage({ ctx, milestone, crumbs, project: { fullPath, defaultBranch: resolved.project.default_branch ?? 'main' } }));
  });

  web.groupPage('/-/milestones/:iid', async (_req, reply, { ctx, resolved, params }) => {
    const milestone = await c.milestones.byIid({ type: 'Group', ...resolved }, Number(params.iid));
    const crumbs = [{ text: resolved.group.name, href: `/groups/${encodePath(resolved.group.full_path)}` }];
    return web.page(reply, MilestonePage({ ctx, milestone, crumbs }));
  });

  web.projectPage('/-/download_export', async (_req, reply, { resolved }) => reply.redirect(`/api/v4/projects/${resolved.project.id}/export/download`, 302));
}
