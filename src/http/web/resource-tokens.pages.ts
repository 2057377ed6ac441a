// Settings → Access tokens and Deploy tokens of a project (`/<project>/-/settings/access_tokens`, `…/deploy_tokens`)
// and of a group (`/groups/<group>/-/settings/access_tokens`, `…/deploy_tokens`), forms posting to
// /-/p/:project_id/… and /-/g/:group_id/…: the API's services with the viewer's actor, so who may (404 invisible,
// 403 visible but not allowed: project access tokens and deploy tokens for Maintainers, group access tokens for
// Owners, group deploy tokens for Maintainers), the validation, the bot user and the secret shown once are the
// API's. Revoking a deploy token here keeps it listed as revoked (GitLab's page); the API's DELETE removes it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { ACCESS_LEVEL_NAMES } from '../../domain/core/roles.ts';
import type { MemberSource } from '../../domain/members/members.service.ts';
import {
  DEPLOY_TOKEN_SCOPES,
  type DeployTokenHolder,
  deployTokenScopesError,
  deployTokenUsername,
  toDeployTokenView,
} from '../../domain/tokens/deploy-tokens.service.ts';
import { RESOURCE_ACCESS_LEVELS, RESOURCE_BOT_SCOPES, resourceTokenParamError } from '../../domain/tokens/resource-access-tokens.service.ts';
import { maxLifetimeDays } from '../../domain/tokens/tokens.service.ts';
import { Errors } from '../../lib/errors.ts';
import { addDays, parseDateTime, todayDate } from '../../lib/time.ts';
import { bodyOf, errorsOf, list, str } from '../../web/views/settings/form-input.ts';
import { placeUrl, type SettingsPlace } from '../../web/views/settings/place.tsx';
import { AccessTokensPage, type DeployTokenFormValues, DeployTokensPage } from '../../web/views/settings/resource-tokens.tsx';
import type { CreatedToken, TokenFormValues } from '../../web/views/settings/token-form.tsx';
import { groupSettingsPlace } from './group-ancestors.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const ID_RE = /^\d{1,10}$/;
const LIST_LIMIT = 200;
/** The two places, as the form routes and the services name them. */
const KINDS = [
  { kind: 'project', base: '/-/p/:project_id', param: 'project_id', what: 'Project' },
  { kind: 'group', base: '/-/g/:group_id', param: 'group_id', what: 'Group' },
] as const;
type Kind = (typeof KINDS)[number]['kind'];

interface PageOpts<V> {
  values?: V;
  errors?: string[] | null;
  created?: CreatedToken;
  status?: number;
}

export function resourceTokensPages(app: FastifyInstance, c: Container, web: Web): void {
  const access = c.resourceAccessTokens;
  const deploy = c.deployTokens;
  const emptyAccess: TokenFormValues = { name: '', description: '', expires_at: '', access_level: '40', scopes: [] };
  const emptyDeploy: DeployTokenFormValues = { name: '', username: '', expires_at: '', scopes: [] };
  const route = { config: PAGE, schema: HIDDEN };

  const idOf = (req: FastifyRequest, k: (typeof KINDS)[number]): string => {
    const id = (req.params as Record<string, string>)[k.param] ?? '';
    if (!ID_RE.test(id)) throw Errors.notFound(k.what);
    return id;
  };
  const tokenId = (req: FastifyRequest): string => {
    const id = (req.params as { token_id: string }).token_id;
    if (!ID_RE.test(id) || Number(id) > 2 ** 31 - 1) throw Errors.notFound('Token');
    return id;
  };
  const groupPlace = (r: Parameters<typeof groupSettingsPlace>[1]) => groupSettingsPlace(c, r);

  // ---- access tokens ----

  /** The project or group as a member source, if the viewer may manage its access tokens (403 otherwise), and its place. */
  const accessSource = async (ctx: WebCtx, kind: Kind, id: string | number): Promise<{ s: MemberSource; place: SettingsPlace }> => {
    const s = await access.resource(ctx.actor, kind, String(id));
    if (!access.mayManage(s)) throw Errors.forbidden();
    return { s, place: s.type === 'Project' ? { kind: 'project', ref: s } : await groupPlace(s) };
  };

  const accessPage = async (reply: FastifyReply, ctx: WebCtx, src: { s: MemberSource; place: SettingsPlace }, opts: PageOpts<TokenFormValues> = {}) => {
    const rows = await access.listQuery(src.s, { state: 'active' }).limit(LIST_LIMIT).execute();
    const settings = await c.settings.get();
    const own = ctx.actor.isAdmin ? 50 : src.s.access.level;
    return web.page(
      reply,
      AccessTokensPage({
        ctx,
        place: src.place,
        tokens: await access.views(src.s, rows),
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

  web.projectPage('/-/settings/access_tokens', async (req, reply, { resolved }) => {
    const ctx = await web.requireUser(req);
    return accessPage(reply, ctx, await accessSource(ctx, 'project', resolved.project.id));
  });
  web.groupPage('/-/settings/access_tokens', async (req, reply, { resolved }) => {
    const ctx = await web.requireUser(req);
    return accessPage(reply, ctx, await accessSource(ctx, 'group', resolved.group.id));
  });

  for (const k of KINDS) {
    app.post(`${k.base}/access_tokens`, route, async (req, reply) => {
      const ctx = await web.requireUser(req);
      const src = await accessSource(ctx, k.kind, idOf(req, k));
      const b = bodyOf(req.body);
      const values: TokenFormValues = {
        name: str(b.name),
        description: str(b.description),
        expires_at: str(b.expires_at).trim(),
        access_level: str(b.access_level),
        scopes: list(b.scopes),
      };
      try {
        const level = values.access_level ? Number(values.access_level) : undefined;
        const refused = resourceTokenParamError({ scopes: values.scopes, access_level: level });
        if (refused) throw Errors.param(refused);
        if (values.expires_at && !/^\d{4}-\d{2}-\d{2}$/.test(values.expires_at)) throw Errors.param('expires_at is invalid');
        const view = await access.create(ctx.actor, src.s, {
          name: values.name,
          description: values.description || undefined,
          scopes: values.scopes,
          access_level: level,
          expires_at: values.expires_at || undefined,
        });
        // the secret is on this answer only
        return accessPage(reply, ctx, src, { created: { name: view.row.name, token: view.token! } });
      } catch (e) {
        const errors = errorsOf(e);
        if (!errors) throw e;
        return accessPage(reply, ctx, src, { values, errors, status: 422 });
      }
    });

    app.post(`${k.base}/access_tokens/:token_id/revoke`, route, async (req, reply) => {
      const ctx = await web.requireUser(req);
      const src = await accessSource(ctx, k.kind, idOf(req, k));
      const id = tokenId(req);
      const row = await access.find(src.s, id);
      if (!row) throw Errors.notFound(`${k.kind} Access Token`);
      await access.revoke(ctx.actor, src.s, id);
      return web.redirect(reply, `${placeUrl(src.place)}/-/settings/access_tokens`, { kind: 'notice', text: `Revoked ${k.kind} access token ${row.name}!` });
    });
  }

  // ---- deploy tokens ----

  /** The holder of the tokens, if the viewer may manage them (the deploy token service's 404/403), and its place. */
  const deploySource = async (ctx: WebCtx, kind: Kind, id: string | number): Promise<{ holder: DeployTokenHolder; place: SettingsPlace }> => {
    if (kind === 'project') {
      const r = await deploy.project(ctx.actor, String(id));
      return { holder: { kind: 'project', project: r.project, namespace: r.namespace }, place: { kind: 'project', ref: r } };
    }
    const r = await deploy.group(ctx.actor, String(id));
    return { holder: { kind: 'group', group: r.group }, place: await groupPlace(r) };
  };

  const deployPage = async (
    reply: FastifyReply,
    ctx: WebCtx,
    src: { holder: DeployTokenHolder; place: SettingsPlace },
    opts: PageOpts<DeployTokenFormValues> = {},
  ) => {
    const rows = await deploy.listQuery(src.holder, true).limit(LIST_LIMIT).execute();
    return web.page(
      reply,
      DeployTokensPage({
        ctx,
        place: src.place,
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

  web.projectPage('/-/settings/deploy_tokens', async (req, reply, { resolved }) => {
    const ctx = await web.requireUser(req);
    return deployPage(reply, ctx, await deploySource(ctx, 'project', resolved.project.id));
  });
  web.groupPage('/-/settings/deploy_tokens', async (req, reply, { resolved }) => {
    const ctx = await web.requireUser(req);
    return deployPage(reply, ctx, await deploySource(ctx, 'group', resolved.group.id));
  });

  for (const k of KINDS) {
    app.post(`${k.base}/deploy_tokens`, route, async (req, reply) => {
      const ctx = await web.requireUser(req);
      const src = await deploySource(ctx, k.kind, idOf(req, k));
      const b = bodyOf(req.body);
      const values: DeployTokenFormValues = {
        name: str(b.name),
        username: str(b.username).trim(),
        expires_at: str(b.expires_at).trim(),
        scopes: list(b.scopes),
      };
      try {
        const refused = deployTokenScopesError(values.scopes);
        if (refused) throw Errors.param(refused);
        const expiresAt = values.expires_at ? parseDateTime(values.expires_at) : null;
        if (values.expires_at && !expiresAt) throw Errors.param('expires_at is invalid');
        const view = await deploy.create(ctx.actor, src.holder, {
          name: values.name,
          scopes: values.scopes,
          expires_at: expiresAt,
          username: values.username || null,
        });
        return deployPage(reply, ctx, src, { created: { name: view.row.name, token: view.token!, username: deployTokenUsername(view.row) } });
      } catch (e) {
        const errors = errorsOf(e);
        if (!errors) throw e;
        return deployPage(reply, ctx, src, { values, errors, status: 422 });
      }
    });

    app.post(`${k.base}/deploy_tokens/:token_id/revoke`, route, async (req, reply) => {
      const ctx = await web.requireUser(req);
      const src = await deploySource(ctx, k.kind, idOf(req, k));
      const row = await deploy.get(src.holder, Number(tokenId(req)));
      await deploy.revoke(src.holder, row.id);
      return web.redirect(reply, `${placeUrl(src.place)}/-/settings/deploy_tokens`, { kind: 'notice', text: `Revoked deploy token ${row.name}!` });
    });
  }
}
