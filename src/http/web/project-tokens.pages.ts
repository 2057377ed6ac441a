// Project settings → Access tokens (/-/settings/access_tokens) and Deploy tokens (/-/settings/deploy_tokens),
// forms posting to /-/p/:project_id/access_tokens… and /-/p/:project_id/deploy_tokens…: the API's services with
// the viewer's actor, so who may (404 invisible, 403 visible but not a Maintainer), the validation, the bot user
// and the secret shown once are the API's. Revoking a deploy token here keeps it listed as revoked (GitLab's
// page); the API's DELETE removes it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import { ACCESS_LEVEL_NAMES } from '../../domain/core/roles.ts';
import type { MemberSource } from '../../domain/members/members.service.ts';
import {
  DEPLOY_TOKEN_SCOPES,
  deployTokenScopesError,
  deployTokenUsername,
  toDeployTokenView,
  type DeployTokenHolder,
} from '../../domain/tokens/deploy-tokens.service.ts';
import { RESOURCE_ACCESS_LEVELS, RESOURCE_BOT_SCOPES, resourceTokenParamError } from '../../domain/tokens/resource-access-tokens.service.ts';
import { maxLifetimeDays } from '../../domain/tokens/tokens.service.ts';
import { Errors } from '../../lib/errors.ts';
import { addDays, parseDateTime, todayDate } from '../../lib/time.ts';
import { bodyOf, errorsOf, list, str } from '../../web/views/settings/form-input.ts';
import { projectUrl } from '../../web/views/settings/project.tsx';
import {
  AccessTokensPage,
  DeployTokensPage,
  type AccessTokenFormValues,
  type CreatedToken,
  type DeployTokenFormValues,
} from '../../web/views/settings/project-tokens.tsx';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const ID_RE = /^\d{1,10}$/;
const LIST_LIMIT = 200;

interface PageOpts<V> {
  values?: V;
  errors?: string[] | null;
  created?: CreatedToken;
  status?: number;
}

export function projectTokensPages(app: FastifyInstance, c: Container, web: Web): void {
  const access = c.resourceAccessTokens;
  const deploy = c.deployTokens;
  const emptyAccess: AccessTokenFormValues = { name: '', expires_at: '', access_level: '40', scopes: [] };
  const emptyDeploy: DeployTokenFormValues = { name: '', username: '', expires_at: '', scopes: [] };

  const projectId = (req: FastifyRequest): string => {
    const id = (req.params as { project_id: string }).project_id;
    if (!ID_RE.test(id)) throw Errors.notFound('Project');
    return id;
  };
  const tokenId = (req: FastifyRequest): string => {
    const id = (req.params as { token_id: string }).token_id;
    if (!ID_RE.test(id) || Number(id) > 2 ** 31 - 1) throw Errors.notFound('Token');
    return id;
  };

  // ---- access tokens ----

  /** The project as a member source, if the viewer may manage its access tokens (403 otherwise). */
  const accessSource = async (ctx: WebCtx, id: string | number): Promise<MemberSource & { type: 'Project' }> => {
    const s = await access.resource(ctx.actor, 'project', String(id));
    if (!access.mayManage(s) || s.type !== 'Project') throw Errors.forbidden();
    return s;
  };
  const accessBack = (s: ResolvedProject) => `${projectUrl(s)}/-/settings/access_tokens`;

  const accessPage = async (reply: FastifyReply, ctx: WebCtx, s: MemberSource & { type: 'Project' }, opts: PageOpts<AccessTokenFormValues> = {}) => {
    const rows = await access.listQuery(s, { state: 'active' }).limit(LIST_LIMIT).execute();
    const settings = await c.settings.get();
    const own = ctx.actor.isAdmin ? 50 : s.access.level;
    return web.page(
      reply,
      AccessTokensPage({
        ctx,
        ref: s,
        tokens: await access.views(s, rows),
        available: RESOURCE_BOT_SCOPES,
        levels: RESOURCE_ACCESS_LEVELS.filter((l) => l <= own).map((l) => ({ value: String(l), text: ACCESS_LEVEL_NAMES[l] })),
        levelNames: ACCESS_LEVEL_NAMES,
        values: opts.values ?? emptyAccess,
        minDate: addDays(todayDate(), 1),
        maxDate: addDays(todayDate(), maxLifetimeDays(settings)),
        expiryRequired: settings.require_personal_access_token_expiry,
        errors: opts.errors,
        created: opts.created,
      }),
      opts.status,
    );
  };

  web.projectPage('/-/settings/access_tokens', async (_req, reply, { ctx, resolved }) => {
    return accessPage(reply, ctx, await accessSource(ctx, resolved.project.id));
  });

  app.post('/-/p/:project_id/access_tokens', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const s = await accessSource(ctx, projectId(req));
    const b = bodyOf(req.body);
    const values: AccessTokenFormValues = {
      name: str(b.name),
      expires_at: str(b.expires_at).trim(),
      access_level: str(b.access_level),
      scopes: list(b.scopes),
    };
    try {
      const level = values.access_level ? Number(values.access_level) : undefined;
      const refused = resourceTokenParamError({ scopes: values.scopes, access_level: level });
      if (refused) throw Errors.param(refused);
      if (values.expires_at && !/^\d{4}-\d{2}-\d{2}$/.test(values.expires_at)) throw Errors.param('expires_at is invalid');
      const view = await access.create(ctx.actor, s, {
        name: values.name,
        scopes: values.scopes,
        access_level: level,
        expires_at: values.expires_at || undefined,
      });
      // the secret is on this answer only
      return accessPage(reply, ctx, s, { created: { name: view.row.name, token: view.token! } });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return accessPage(reply, ctx, s, { values, errors, status: 422 });
    }
  });

  app.post('/-/p/:project_id/access_tokens/:token_id/revoke', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const s = await accessSource(ctx, projectId(req));
    const id = tokenId(req);
    const row = await access.find(s, id);
    if (!row) throw Errors.notFound('project Access Token');
    await access.revoke(ctx.actor, s, id);
    return web.redirect(reply, accessBack(s), { kind: 'notice', text: `Revoked project access token ${row.name}!` });
  });

  // ---- deploy tokens ----

  const deployHolder = (r: ResolvedProject): DeployTokenHolder => ({ kind: 'project', project: r.project, namespace: r.namespace });
  const deployBack = (r: ResolvedProject) => `${projectUrl(r)}/-/settings/deploy_tokens`;

  const deployPage = async (reply: FastifyReply, ctx: WebCtx, r: ResolvedProject, opts: PageOpts<DeployTokenFormValues> = {}) => {
    const rows = await deploy.listQuery(deployHolder(r), true).limit(LIST_LIMIT).execute();
    return web.page(
      reply,
      DeployTokensPage({
        ctx,
        ref: r,
        tokens: rows.map((row) => ({ ...toDeployTokenView(row), username: deployTokenUsername(row) })),
        available: DEPLOY_TOKEN_SCOPES,
        values: opts.values ?? emptyDeploy,
        minDate: todayDate(),
        errors: opts.errors,
        created: opts.created,
      }),
      opts.status,
    );
  };

  web.projectPage('/-/settings/deploy_tokens', async (_req, reply, { ctx, resolved }) => {
    if (!resolved.access.abilities.has('manage_deploy_tokens')) throw Errors.forbidden();
    return deployPage(reply, ctx, resolved);
  });

  app.post('/-/p/:project_id/deploy_tokens', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const r = await deploy.project(ctx.actor, projectId(req));
    const b = bodyOf(req.body);
    const values: DeployTokenFormValues = { name: str(b.name), username: str(b.username).trim(), expires_at: str(b.expires_at).trim(), scopes: list(b.scopes) };
    try {
      const refused = deployTokenScopesError(values.scopes);
      if (refused) throw Errors.param(refused);
      const expiresAt = values.expires_at ? parseDateTime(values.expires_at) : null;
      if (values.expires_at && !expiresAt) throw Errors.param('expires_at is invalid');
      const view = await deploy.create(ctx.actor, deployHolder(r), {
        name: values.name,
        scopes: values.scopes,
        expires_at: expiresAt,
        username: values.username || null,
      });
      return deployPage(reply, ctx, r, { created: { name: view.row.name, token: view.token!, username: deployTokenUsername(view.row) } });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return deployPage(reply, ctx, r, { values, errors, status: 422 });
    }
  });

  app.post('/-/p/:project_id/deploy_tokens/:token_id/revoke', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const r = await deploy.project(ctx.actor, projectId(req));
    const row = await deploy.get(deployHolder(r), Number(tokenId(req)));
    await deploy.revoke(deployHolder(r), row.id);
    return web.redirect(reply, deployBack(r), { kind: 'notice', text: `Revoked deploy token ${row.name}!` });
  });
}
