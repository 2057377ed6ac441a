// buildApp(container) → the Fastify instance serving both APIs. What tests import.
import { ciRoutes } from './http/platform/ci/index.ts';
import { protectedRefsRoutes } from './http/platform/protected-refs.routes.ts';
import { importExportRoutes } from './http/platform/import-export/index.ts';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import qs from 'qs';
import querystring from 'node:querystring';
import crypto from 'node:crypto';
import type { Container } from './container.ts';
import './http/types.ts';
import { conventions } from './http/plugins/conventions.ts';
import { compilersFactory } from './http/plugins/schema-compilers.ts';
import { isInt32 } from './db/sql.ts';
import { errorHandling } from './http/plugins/errors.ts';
import { requestBodies } from './http/plugins/malformed.ts';
import { authPlugin } from './http/plugins/auth.ts';
import { rateLimitPlugin } from './http/plugins/rate-limit.ts';
import { readsClientPlugin } from './http/plugins/reads-client.ts';
import { responseCache } from './http/plugins/response-cache.ts';
import { metricsPlugin } from './http/plugins/metrics.ts';
import { metaRoutes } from './http/platform/meta.routes.ts';
import { usersRoutes } from './http/platform/users.routes.ts';
import { tokensRoutes } from './http/platform/personal-access-tokens.routes.ts';
import { impersonationTokensRoutes } from './http/platform/impersonation-tokens.routes.ts';
import { settingsRoutes } from './http/platform/application-settings.routes.ts';
import { uploadsRoutes } from './http/platform/uploads.routes.ts';
import { keysRoutes } from './http/platform/keys.routes.ts';
import { deployKeysRoutes } from './http/platform/deploy-keys.routes.ts';
import { deployTokensRoutes } from './http/platform/deploy-tokens.routes.ts';
import { accessTokensRoutes } from './http/platform/access-tokens.routes.ts';
import { markdownRoutes } from './http/platform/markdown.routes.ts';
import { groupsRoutes } from './http/platform/groups.routes.ts';
import { projectsRoutes } from './http/platform/projects.routes.ts';
import { membersRoutes } from './http/platform/members.routes.ts';
import { labelsRoutes } from './http/platform/labels.routes.ts';
import { milestonesRoutes } from './http/platform/milestones.routes.ts';
import { forksRoutes } from './http/platform/forks.routes.ts';
import { deploymentsRoutes } from './http/platform/deployments.routes.ts';
import { mergeRequestRoutes } from './http/platform/merge-requests/index.ts';
import { issuesRoutes } from './http/platform/issues.routes.ts';
import { notesRoutes } from './http/platform/notes.routes.ts';
import { timeTrackingRoutes } from './http/platform/time-tracking.routes.ts';
import { boardsRoutes } from './http/platform/boards.routes.ts';
import { todosRoutes } from './http/platform/todos.routes.ts';
import { repositoryRoutes } from './http/platform/repository/index.ts';
import { smartHttpRoutes } from './http/git/smart-http.routes.ts';
import { systemHooksRoutes } from './http/platform/system-hooks.routes.ts';
import { webHooksRoutes } from './http/platform/web-hooks.routes.ts';
import { translationRootRoutes } from './http/translation/root.routes.ts';
import { languagesRoutes } from './http/translation/languages.routes.ts';
import { translationUsersRoutes } from './http/translation/users.routes.ts';
import { translationProjectsRoutes } from './http/translation/projects.routes.ts';
import { componentsRoutes } from './http/translation/components.routes.ts';
import { translationsRoutes } from './http/translation/translations.routes.ts';
import { unitsRoutes } from './http/translation/units.routes.ts';
import { changesRoutes } from './http/translation/changes.routes.ts';
import { unitWritesRoutes } from './http/translation/unit-writes.routes.ts';
import { suggestionsRoutes } from './http/translation/suggestions.routes.ts';
import { filesRoutes } from './http/translation/files.routes.ts';
import { translationWritesRoutes } from './http/translation/translation-writes.routes.ts';
import { browsableApi } from './http/translation/browsable.ts';
import { memberRolesRoutes } from './http/platform/member-roles.routes.ts';
import { oauthRoutes } from './http/web/oauth.routes.ts';
import { signInRoutes } from './http/web/sign-in.routes.ts';
import { Web, webPlumbing, webRoutes } from './http/web/index.ts';
import { housekeepingRoutes } from './http/platform/housekeeping.routes.ts';
import { customAttributesRoutes } from './http/platform/custom-attributes.routes.ts';
import { namespacesRoutes } from './http/platform/namespaces.routes.ts';
import { avatarsRoutes } from './http/platform/avatars.routes.ts';
import { eventsRoutes } from './http/platform/events.routes.ts';
import { starsRoutes } from './http/platform/stars.routes.ts';
import { searchRoutes } from './http/platform/search.routes.ts';

export const QS_OPTIONS = { arrayLimit: 1000, depth: 5, parameterLimit: 2000, allowDots: false } as const;

/** Rack-style nesting (`ids[]=1`, `not[author_id]=2`) through qs; flat strings take Node's faster parser. */
function parseQuery(s: string): Record<string, unknown> {
  if (s.includes('[') || s.includes('%5B') || s.includes('%5b')) return qs.parse(s, QS_OPTIONS) as Record<string, unknown>;
  return flatQuery(s);
}

/** Django's QueryDict (the translation API): names as written, `q[a]=1` names `q[a]`, not `q`. */
function flatQuery(s: string): Record<string, unknown> {
  return { ...querystring.parse(s, '&', '=', { maxKeys: QS_OPTIONS.parameterLimit }) };
}

/** `extend` registers extra routes before the app is sealed (the benchmark's static floor). */
export async function buildApp(c: Container, extend?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: c.log as unknown as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: c.config.logLevel !== 'debug' && c.config.logLevel !== 'trace' }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w-]{1,64}$/.test(given) ? given : crypto.randomUUID();
    },
    routerOptions: {
      querystringParser: parseQuery,
      ignoreTrailingSlash: true,
      maxParamLength: 1000,
    },
    bodyLimit: 10 * 1024 * 1024,
    trustProxy: true,
    schemaController: { compilersFactory },
    ajv: {
      customOptions: {
        allErrors: true,
        coerceTypes: 'array',
        useDefaults: true,
        removeAdditional: true,
        // what an integer column holds (conventions.ts marks the query and body integers); a keyword rather than a
        // format or `maximum`, which Ajv skips for the Infinity its coercion makes of `1e999`
        keywords: [
          { keyword: 'x-int32', schemaType: 'boolean', errors: false, validate: (on: boolean, n: unknown) => !on || typeof n !== 'number' || isInt32(n) },
        ],
      },
    },
  });

  conventions(app);
  metricsPlugin(app, c); // GET /-/metrics, request figures, request ids in log lines, slow requests
  app.addHook('onRequest', (req, _reply, done) => {
    if ((req.routeOptions.config as { api?: string } | undefined)?.api === 'translation') {
      const i = req.url.indexOf('?');
      if (i >= 0 && /\[|%5b/i.test(req.url.slice(i))) req.query = flatQuery(req.url.slice(i + 1));
    }
    done();
  });
  const web = new Web(c);
  errorHandling(app, c.config.externalUrl, web);
  await app.register(cookie);
  await app.register(formbody, { parser: (s: string) => qs.parse(s, QS_OPTIONS) });
  await requestBodies(app); // multipart fields as the body; unreadable requests are 400s
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Hearth API',
        version: c.config.version,
        description: 'GitLab REST v4 compatible development-platform API and Weblate compatible translation API.',
      },
      servers: [{ url: c.config.externalUrl }],
      components: {
        securitySchemes: {
          privateToken: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ privateToken: [] }, { bearer: [] }],
    },
  });
  authPlugin(app, c);
  webPlumbing(app, web);
  responseCache(app);
  rateLimitPlugin(app, c);
  readsClientPlugin(app); // whose searches with regular expressions a request's are (fair slots)
  browsableApi(app, c.config.externalUrl); // before the translation routes: it hooks onRoute

  metaRoutes(app, c);
  usersRoutes(app, c);
  tokensRoutes(app, c);
  impersonationTokensRoutes(app, c);
  settingsRoutes(app, c);
  groupsRoutes(app, c);
  projectsRoutes(app, c);
  membersRoutes(app, c);
  repositoryRoutes(app, c);
  labelsRoutes(app, c);
  milestonesRoutes(app, c);
  forksRoutes(app, c);
  deploymentsRoutes(app, c);
  mergeRequestRoutes(app, c);
  issuesRoutes(app, c);
  notesRoutes(app, c);
  timeTrackingRoutes(app, c);
  boardsRoutes(app, c);
  todosRoutes(app, c);
  memberRolesRoutes(app, c);
  oauthRoutes(app, c);
  signInRoutes(app, c);
  systemHooksRoutes(app, c);
  translationRootRoutes(app);
  languagesRoutes(app, c);
  translationUsersRoutes(app, c);
  translationProjectsRoutes(app, c);
  componentsRoutes(app, c);
  translationsRoutes(app, c);
  unitsRoutes(app, c);
  unitWritesRoutes(app, c);
  suggestionsRoutes(app, c);
  filesRoutes(app, c);
  translationWritesRoutes(app, c);
  changesRoutes(app, c);
  ciRoutes(app, c);
  importExportRoutes(app, c);
  webHooksRoutes(app, c);
  protectedRefsRoutes(app, c);
  customAttributesRoutes(app, c);
  namespacesRoutes(app, c);
  avatarsRoutes(app, c);
  housekeepingRoutes(app, c);
  eventsRoutes(app, c);
  starsRoutes(app, c);
  searchRoutes(app, c);
  uploadsRoutes(app, c);
  markdownRoutes(app, c);
  // SSH keys, deploy keys
  keysRoutes(app, c);
  deployKeysRoutes(app, c);
  deployTokensRoutes(app, c);
  accessTokensRoutes(app, c);
  smartHttpRoutes(app, c);
  webRoutes(app, c, web);
  extend?.(app);

  await app.ready();
  return app;
}
