// OAuth 2 token endpoints as GitLab serves them through Doorkeeper: POST /oauth/token (password and
// refresh_token grants), GET /oauth/token/info, POST /oauth/revoke. Errors use Doorkeeper's JSON
// bodies and texts (config/locales/en.yml). Hearth has no OAuth applications: client_id and
// client_secret are ignored, and token info reports application.uid as null.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Container } from '../../container.ts';
import { deniedReason } from '../../domain/auth/authenticator.ts';
import { OAUTH_DEFAULT_SCOPES, scopeList } from '../../domain/auth/oauth.service.ts';
import { PasswordSignIn } from '../../domain/auth/password-sign-in.ts';
import { availableScopes, OAUTH_ONLY_SCOPES } from '../../domain/tokens/scopes.ts';
import { send } from '../plugins/errors.ts';

const MESSAGES = {
  invalid_grant:
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  invalid_token: 'The access token is invalid',
} as const;
const missingParam = (name: string) => `Missing required parameter: ${name}.`;

/** RFC 6749 §5.1: token responses must not be cached. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** Doorkeeper's ErrorResponse: 400 (401 for invalid_token), realm "Doorkeeper". */
function oauthError(reply: FastifyReply, error: string, description: string, status = 400, extra: Record<string, string> = {}): FastifyReply {
  return send(
    reply,
    status,
    { error, error_description: description, ...extra },
    {
      ...NO_STORE,
      'www-authenticate': `Bearer realm="Doorkeeper", error="${error}", error_description="${description}"`,
    },
  );
}

/** Rails params: query and body together, the body winning; only plain strings count. */
function params(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const src of [req.query, req.body]) {
    if (!src || typeof src !== 'object' || Buffer.isBuffer(src)) continue;
    for (const [k, v] of Object.entries(src as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** A space-separated scope string → unique scopes in order; blank → null. */
function parseScopes(raw: string | undefined): string[] | null {
  const list = (raw ?? '').split(/\s+/).filter(Boolean);
  return list.length ? [...new Set(list)] : null;
}

const TokenSchema = Type.Object({
  access_token: Type.String(),
  token_type: Type.String(),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
  scope: Type.String(),
  created_at: Type.Integer(),
});
const TokenInfoSchema = Type.Object({
  resource_owner_id: Type.Integer(),
  scope: Type.Array(Type.String()),
  expires_in: Type.Integer(),
  application: Type.Object({ uid: Type.Union([Type.String(), Type.Null()]) }),
  created_at: Type.Integer(),
  scopes: Type.Array(Type.String()),
  expires_in_seconds: Type.Integer(),
});
const OauthErrorSchema = Type.Object({ error: Type.String(), error_description: Type.String() });

export function oauthRoutes(app: FastifyInstance, c: Container): void {
  const passwords = new PasswordSignIn(c.db, c.settings);
  const web = { api: 'web' as const };

  app.post(
    '/oauth/token',
    {
      config: web,
      schema: {
        tags: ['oauth'],
        summary: 'Issue an access token (grant_type password or refresh_token)',
        response: { 200: TokenSchema, 400: OauthErrorSchema },
      },
    },
    async (req, reply) => {
      const p = params(req);
      if (!p.grant_type) return oauthError(reply, 'invalid_request', missingParam('grant_type'));

      if (p.grant_type === 'password') {
        if (!p.username) return oauthError(reply, 'invalid_request', missingParam('username'));
        if (!p.password) return oauthError(reply, 'invalid_request', missingParam('password'));
        // GitLab's resource_owner_from_credentials goes through Gitlab::Auth.find_with_user_password,
        // which is gated by password_authentication_enabled_for_git (not the web setting).
        const s = await c.settings.get();
        if (!s.password_authentication_enabled_for_git) return oauthError(reply, 'invalid_grant', MESSAGES.invalid_grant);
        const outcome = await passwords.attempt(p.username, p.password, { reactivate: false });
        if (!outcome.ok) {
          req.log.info({ userId: outcome.user?.id ?? null, reason: outcome.reason }, 'oauth password grant refused');
          return oauthError(reply, 'invalid_grant', MESSAGES.invalid_grant);
        }
        const user = outcome.user;
        const scopes = parseScopes(p.scope) ?? OAUTH_DEFAULT_SCOPES;
        const allowed = new Set<string>([...availableScopes(user.is_admin === 1), ...OAUTH_ONLY_SCOPES]);
        if (!scopes.every((sc) => allowed.has(sc))) return oauthError(reply, 'invalid_scope', MESSAGES.invalid_scope);
        const issued = await c.oauth.issue(user, scopes);
        return reply.code(200).headers(NO_STORE).send(issued);
      }

      if (p.grant_type === 'refresh_token') {
        if (!p.refresh_token) return oauthError(reply, 'invalid_request', missingParam('refresh_token'));
        const row = await c.oauth.findRefresh(p.refresh_token);
        if (!row || row.revoked_at) return oauthError(reply, 'invalid_grant', MESSAGES.invalid_grant);
        const user = await c.users.byId(row.user_id);
        if (!user || deniedReason(user)) return oauthError(reply, 'invalid_grant', MESSAGES.invalid_grant);
        // Doorkeeper: a narrower scope may be asked for; anything beyond the old grant is invalid_scope.
        const old = scopeList(row);
        const scopes = parseScopes(p.scope) ?? old;
        if (!scopes.every((sc) => old.includes(sc))) return oauthError(reply, 'invalid_scope', MESSAGES.invalid_scope);
        const issued = await c.oauth.refresh(row, user, scopes);
        if (!issued) return oauthError(reply, 'invalid_grant', MESSAGES.invalid_grant);
        return reply.code(200).headers(NO_STORE).send(issued);
      }

      return oauthError(reply, 'unsupported_grant_type', MESSAGES.unsupported_grant_type);
    },
  );

  app.get(
    '/oauth/token/info',
    {
      config: web,
      schema: { tags: ['oauth'], summary: 'Information about the access token used', response: { 200: TokenInfoSchema } },
    },
    async (req, reply) => {
      const p = params(req);
      const authz = req.headers.authorization;
      const bearer = typeof authz === 'string' && /^bearer\s+/i.test(authz) ? authz.replace(/^bearer\s+/i, '').trim() : '';
      const token = p.access_token || bearer || p.bearer_token;
      const row = token ? await c.oauth.findAccess(token) : undefined;
      // GitLab answers every unusable token (unknown, expired, revoked) with the same "invalid" text.
      if (!row || !c.oauth.isAccessible(row)) return oauthError(reply, 'invalid_token', MESSAGES.invalid_token, 401, { state: 'unauthorized' });
      return reply.code(200).headers(NO_STORE).send(c.oauth.info(row));
    },
  );

  // RFC 7009: the answer is 200 {} whether or not the token existed.
  app.post('/oauth/revoke', { config: web, schema: { tags: ['oauth'], summary: 'Revoke an access or refresh token' } }, async (req, reply) => {
    const p = params(req);
    if (p.token) await c.oauth.revoke(p.token);
    return send(reply, 200, {}, NO_STORE);
  });
}
