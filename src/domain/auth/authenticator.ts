// Credentials → Actor (reference §3). Order: job token, bearer (OAuth, then personal token),
// private token, session cookie. A credential that is present but unknown is a 401, never anonymous.
import type { Db } from '../../db/connect.ts';
import type { OauthTokenRow, PatRow, UserRow } from '../../db/schema.ts';
import { stamp, type Versions } from '../../db/versions.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import { Errors } from '../../lib/errors.ts';
import { safeEqual } from '../../lib/secrets.ts';
import { ANONYMOUS, type Actor } from '../access/actor.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { effectiveScopes } from '../tokens/scopes.ts';
import { isExpired, type TokensService } from '../tokens/tokens.service.ts';
import type { OauthService } from './oauth.service.ts';
import type { SessionsService } from './sessions.service.ts';

export interface Credentials {
  privateToken?: string;
  bearer?: string;
  accessToken?: string; // OAuth `access_token` parameter
  jobToken?: string;
  sessionId?: string;
  csrfToken?: string;
  sudo?: string;
  method: string;
  path: string;
  /** the request's snapshot of table versions; when given, credential lookups are cached against it */
  versions?: () => Promise<Versions>;
  /** called after the authenticator wrote (last_used_at), so the snapshot can be taken again */
  onWrite?: () => void;
}

const PAT_TABLES = ['personal_access_tokens', 'users'] as const;
const OAUTH_TABLES = ['oauth_tokens', 'users'] as const;

export const EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';
export const REVOKED = 'Token was revoked. You have to re-authorize from the user.';
export const IMPERSONATION_DISABLED = 'Token is an impersonation token but impersonation was disabled.';
const ROTATE_PATH = /access_tokens\/(\d+|self)\/rotate$/;

/** Resolves CI job tokens; the CI issue provides the real one. */
export interface JobTokenResolver {
  resolve(token: string): Promise<{ user: UserRow; jobId: number } | null>;
}

export function deniedReason(user: UserRow): string | null {
  switch (user.state) {
    case 'blocked':
      return 'Your account has been blocked.';
    case 'blocked_pending_approval':
      return 'Your account is pending approval from your administrator and hence blocked.';
    case 'deactivated':
      return 'Your account has been deactivated by your administrator. Please log back in from a web browser to reactivate your account';
    default:
      return null;
  }
}

export class Authenticator {
  jobTokens: JobTokenResolver = { resolve: async () => null };
  /** secret digest → the token row and its user, valid for the table versions they were read at */
  private readonly credentialCache = new VersionedCache<{ pat?: PatRow; oauth?: OauthTokenRow; user: UserRow | undefined } | null>(10_000, 10_000);

  constructor(
    private readonly db: Db,
    private readonly settings: SettingsService,
    private readonly tokens: TokensService,
    private readonly oauth: OauthService,
    private readonly sessions: SessionsService,
    private readonly impersonationEnabled: boolean,
  ) {}

  private async user(id: number): Promise<UserRow | undefined> {
    return this.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async findUserByIdOrUsername(ident: string): Promise<UserRow | undefined> {
    const q = this.db.kysely.selectFrom('users').selectAll();
    if (/^\d+$/.test(ident)) {
      const byId = await q.where('id', '=', Number(ident)).executeTakeFirst();
      if (byId) return byId;
    }
    return this.db.kysely.selectFrom('users').selectAll().where((eb) => eb(eb.fn('lower', ['username']), '=', ident.toLowerCase())).executeTakeFirst();
  }

  /** last_used_at, at most every few minutes; awaited so that this request reads its own write */
  private async recordUse(pat: PatRow, c: Credentials): Promise<void> {
    const write = this.tokens.touch(pat);
    if (!write) return;
    await write;
    c.onWrite?.();
  }

  private async cachedLookup<T>(
    c: Credentials,
    key: string,
    tables: readonly string[],
    load: () => Promise<T>,
  ): Promise<T> {
    if (!c.versions) return load();
    const st = stamp(await c.versions(), tables);
    const hit = this.credentialCache.get(key, st);
    if (hit !== undefined) return hit as T;
    const value = await load();
    this.credentialCache.set(key, st, value as any);
    return value;
  }

  private lookupOauth(c: Credentials, value: string) {
    return this.cachedLookup(c, 'o:' + this.oauth.digestOf(value), OAUTH_TABLES, async () => {
      const o = await this.oauth.findAccess(value);
      return o ? { oauth: o, user: await this.user(o.user_id) } : null;
    });
  }

  private lookupPat(c: Credentials, value: string) {
    return this.cachedLookup(c, 'p:' + this.tokens.digest(value), PAT_TABLES, async () => {
      const pat = await this.tokens.findBySecret(value);
      return pat ? { pat, user: await this.user(pat.user_id) } : null;
    });
  }

  /**
   * @param allowedScopes scopes that grant access to this route
   */
  async authenticate(c: Credentials, allowedScopes: string[]): Promise<Actor> {
    const settings = await this.settings.get();
    let actor: Actor | null = null;
    let pat: PatRow | null = null;

    if (c.jobToken) {
      const job = await this.jobTokens.resolve(c.jobToken);
      if (!job) throw Errors.unauthorized();
      actor = { ...ANONYMOUS, kind: 'job', user: job.user, isAdmin: false, scopes: ['api'], credential: 'job_token', jobId: job.jobId };
    } else if (c.bearer || c.accessToken || c.privateToken) {
      const value = (c.privateToken ?? c.bearer ?? c.accessToken)!;
      if (!c.privateToken) {
        const found = await this.lookupOauth(c, value);
        if (found) {
          const o = found.oauth!;
          if (o.revoked_at) throw Errors.invalidToken(REVOKED);
          if (this.oauth.isExpired(o)) throw Errors.invalidToken(EXPIRED);
          const user = found.user;
          if (!user) throw Errors.unauthorized();
          const scopes = o.scopes.split(' ').filter(Boolean);
          actor = { ...ANONYMOUS, kind: 'user', user, isAdmin: user.is_admin === 1, scopes, credential: 'oauth' };
        }
      }
      if (!actor) {
        const found = await this.lookupPat(c, value);
        pat = found?.pat ?? null;
        if (!pat || settings.disable_personal_access_tokens) throw Errors.unauthorized();
        if (pat.impersonation && !this.impersonationEnabled) throw Errors.invalidToken(IMPERSONATION_DISABLED);
        if (isExpired(pat)) throw Errors.invalidToken(EXPIRED);
        if (pat.revoked) {
          if (ROTATE_PATH.test(c.path)) await this.tokens.revokeFamily(pat);
          throw Errors.invalidToken(REVOKED);
        }
        const user = found!.user;
        if (!user) throw Errors.unauthorized();
        actor = {
          ...ANONYMOUS,
          kind: 'user',
          user,
          isAdmin: user.is_admin === 1,
          scopes: effectiveScopes(JSON.parse(pat.scopes)),
          credential: pat.impersonation ? 'impersonation_token' : 'personal_access_token',
          tokenId: pat.id,
          impersonated: pat.impersonation === 1,
        };
      }
    } else if (c.sessionId) {
      const s = await this.sessions.find(c.sessionId);
      // GET/HEAD by cookie alone; other methods need the session's CSRF token.
      const safe = c.method === 'GET' || c.method === 'HEAD';
      if (s && (safe || (c.csrfToken && safeEqual(c.csrfToken, s.csrf)))) {
        const user = await this.user(s.userId);
        if (user) actor = { ...ANONYMOUS, kind: 'user', user, isAdmin: user.is_admin === 1, scopes: null, credential: 'session' };
      }
    }

    if (!actor) {
      if (c.sudo !== undefined) throw Errors.unauthorized();
      return ANONYMOUS;
    }

    const user = actor.user!;
    const reason = deniedReason(user);
    if (reason) throw Errors.forbidden(reason);

    // With the admin_mode setting on, an administrator's token needs the admin_mode scope.
    if (actor.isAdmin && settings.admin_mode && actor.scopes && !actor.scopes.includes('admin_mode')) actor.isAdmin = false;

    if (c.sudo !== undefined && c.sudo !== '') {
      if (!actor.isAdmin) throw Errors.forbidden('Must be admin to use sudo');
      if (actor.credential === 'session' || actor.credential === 'job_token') {
        throw Errors.forbidden('Must be authenticated using an OAuth or personal access token to use sudo');
      }
      if (!actor.scopes!.includes('sudo')) throw Errors.insufficientScope(['sudo']);
      const target = await this.findUserByIdOrUsername(c.sudo);
      if (!target) throw Errors.notFound(`User with ID or username '${c.sudo}'`);
      if (pat) await this.recordUse(pat, c);
      return {
        ...actor,
        user: target,
        isAdmin: target.is_admin === 1 && (!settings.admin_mode || actor.scopes!.includes('admin_mode')),
        sudoFrom: user,
      };
    }

    if (actor.scopes && actor.credential !== 'job_token' && !actor.scopes.some((s) => allowedScopes.includes(s))) {
      throw Errors.insufficientScope(allowedScopes);
    }
    if (pat) await this.recordUse(pat, c);
    return actor;
  }
}
