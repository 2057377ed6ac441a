// The web interface: every HTML page is registered from here, one module per area. Routes live in
// `src/http/web/`, views in `src/web/views/`; both use the domain services with the viewer's actor.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';
import { assets } from '../../web/assets.ts';
import { dashboardPages } from './dashboard.routes.ts';
import { mergeRequestPages } from './merge-requests.pages.ts';
import { pipelinePages } from './pipelines.pages.ts';
import { forgeSettingsPages } from './profile.pages.ts';
import { repositoryPages } from './repository.pages.ts';
import { translationEditorPages } from './translation-editor.pages.ts';
import { translationPages } from './translation.pages.ts';
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

  // ---- forge: dashboard, explore, groups, users, new project (helper A) ----
  dashboardPages(app, c, web);
  // ---- forge: repository pages — project home, tree, blob, raw, blame, history, commit, compare, branches, tags (helper B) ----
  repositoryPages(app, c, web);
  // ---- forge: merge requests, pipelines, jobs (helper C) ----
  mergeRequestPages(app, c, web);
  pipelinePages(app, c, web);
  // ---- forge: settings — profile, tokens, project settings; admin area (helper D) ----
  forgeSettingsPages(app, c, web);
  // ---- translation: projects, components, languages, translations, repository, files (helper E) ----
  translationPages(app, c, web);
  // ---- translation: the editor (helper F) ----
  translationEditorPages(app, c, web);
  void c;
}

export { Web, webPlumbing } from './web.ts';
