// The web interface: every HTML page is registered from here, one module per area. Routes live in
// `src/http/web/`, views in `src/web/views/`; both use the domain services with the viewer's actor.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { EventsQuery } from '../../domain/events/events-query.ts';
import { assets } from '../../web/assets.ts';
import { adminPages } from './admin.pages.ts';
import { dashboardPages } from './dashboard.routes.ts';
import { deployKeysPages } from './deploy-keys.pages.ts';
import { explorePages } from './explore.routes.ts';
import { groupPages } from './groups.pages.ts';
import { issuePages } from './issues.pages.ts';
import { boardPages } from './boards.pages.ts';
import { ciSettingsPages } from './ci-settings.pages.ts';
import { mergeRequestPages } from './merge-requests.pages.ts';
import { milestonePages } from './milestones.pages.ts';
import { newProjectPages } from './new-project.routes.ts';
import { pipelinePages } from './pipelines.pages.ts';
import { pipelineSchedulesPages } from './pipeline-schedules.pages.ts';
import { profilePages } from './profile.pages.ts';
import { projectSettingsPages } from './project-settings.pages.ts';
import { repositoryPages } from './repository.pages.ts';
import { resourceTokensPages } from './resource-tokens.pages.ts';
import { runnerPages } from './runners.pages.ts';
import { searchPages } from './search.pages.ts';
import { translationEditorPages } from './translation-editor.pages.ts';
import { translationPages } from './translation.pages.ts';
import { userPages } from './users.pages.ts';
import { HIDDEN, type Web } from './web.ts';

export function webRoutes(app: FastifyInstance, c: Container, web: Web): void {
  app.get('/-/assets/:name', { config: { api: 'web' }, schema: HIDDEN }, async (req, reply) => {
    const asset = assets().byName.get((req.params as { name: string }).name);
    if (!asset) return web.notFound(req, reply);
    const accept = String(req.headers['accept-encoding'] ?? '');
    reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('etag', asset.etag)
      .header('vary', 'Accept-Encoding')
      .header('x-content-type-options', 'nosniff')
      .type(asset.type);
    if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    if (/\bbr\b/.test(accept)) return reply.header('content-encoding', 'br').send(asset.br);
    if (/\bgzip\b/.test(accept)) return reply.header('content-encoding', 'gzip').send(asset.gzip);
    return reply.send(asset.body);
  });

  // the forge: dashboard, explore, groups, users, new project and group
  const events = new EventsQuery(c.db, c.policy);
  dashboardPages(app, c, web, events);
  explorePages(app, c, web);
  // users before groups: the namespace paths a user and a group share are told apart by the user first
  userPages(app, c, web, events);
  groupPages(app, c, web);
  newProjectPages(app, c, web);
  // project home, tree, blob, raw, blame, history, commit, compare, branches, tags
  repositoryPages(app, c, web);
  mergeRequestPages(app, c, web);
  issuePages(app, c, web);
  boardPages(app, c, web);
  pipelinePages(app, c, web);
  pipelineSchedulesPages(app, c, web);
  milestonePages(app, c, web);
  // profile, tokens, project settings (deploy keys among them), the admin area
  profilePages(app, c, web);
  deployKeysPages(app, c, web);
  resourceTokensPages(app, c, web);
  projectSettingsPages(app, c, web);
  ciSettingsPages(app, c, web);
  runnerPages(app, c, web);
  adminPages(app, c, web);
  // the search page (the header's search box; /search/ with the slash is the translation units' search)
  searchPages(app, c, web);
  // translation: projects, components, languages, translations, repository, files; the editor
  translationPages(app, c, web);
  translationEditorPages(app, c, web);
}

export { Web, webPlumbing } from './web.ts';
