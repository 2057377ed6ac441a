// Credentials → Actor (reference §3). Order: job token, bearer (OAuth, then personal token),
// private token, session cookie. A credential that is present but unknown is a 401, never anonymous.
import { isInt32 } from '../../db/sql.ts';
import type { Db } from '../../db/connect.ts';
import type { PatRow, UserRow } from '../../db/schema.ts';
import { stamp, type Versions } from '../../db/versions.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import { Errors } from '../../lib/errors.ts';
import { safeEqual } from '../../lib/secrets.ts';
import { ANONYMOUS, type Actor } from '../access/actor.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { effectiveScopes } from '../tokens/scopes.ts';
import { isExpired, type TokensService } from '../tokens/tokens.service.ts';
import type { Settings } from '../core/settings-definitions.ts';
import { currentDate } from '../../lib/time.ts';
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
  /** the request's snapshot of table versions; when given, token credentials are cached against it */
  snapshot?: VersionSnapshot;
}

/** A request's table versions, read once on first use (the HTTP request implements it). */
export interface VersionSnapshot {
  versions(): Promise<Versions>;
  /** after the authenticator wrote (last_used_at): the snapshot is taken again, so the request reads its write */
  forgetVersions(): void;
}

/**
 * What a token resolves to while its row, its user and the settings are unchanged: the actor (shared
 * between requests, so never mutated) and what each request still checks against the clock.
 */
interface Principal {
  actor: Actor;
  pat: PatRow | null;
  /** the settings values it was resolved with (admin mode, disabled tokens) */
  settings: Settings;
  /** a personal token's expiry date (YYYY-MM-DD, expired on that day), or null */
  expiresOn: string | null;
  /** an OAuth token's end of life (ms since the epoch), or Infinity */
  expiresAtMs: number;
}

const TOKEN_TABLES = ['personal_access_tokens', 'oauth_tokens', 'users'] as const;

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
    case 'banned': // a banned user is blocked (User::BLOCKED_STATES)
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
  /** credential kind + secret digest → what it resolved to, valid for the table versions it was read at */
  private readonly principals = new VersionedCache<Principal>(10_000, 10_000);

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
    if (/^\d+$/.test(ident) && isInt32(Number(ident))) {
      const byId = await q.where('id', '=', Number(ident)).executeTakeFirst();
      if (byId) return byId;
    }
    return this.db.kysely
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['username']), '=', ident.toLowerCase()))
      .executeTakeFirst();
  }

  /** last_used_at, at most every few minutes; awaited so that this request reads its own write */
  private async recordUse(pat: PatRow, c: Credentials): Promise<void> {
    const write = this.tokens.touch(pat);
    if (!write) return;
    await write;
    c.snapshot?.forgetVersions();
  }

  /**
   * A token (private token, bearer, OAuth access_token) → its principal. Served from the cache while
   * the token, OAuth and user tables and the settings are unchanged and the token has not expired; a
   * token that fails a check throws every time (failures are not cached).
   */
  private async tokenPrincipal(c: Credentials, value: string, settings: Settings): Promise<Principal> {
    // A private token is a personal token; a bearer may be an OAuth token first.
    const key = (c.privateToken ? 'p:' : 'b:') + this.tokens.digest(value);
    const st = c.snapshot ? stamp(await c.snapshot.versions(), TOKEN_TABLES) : null;
    const hit = st === null ? undefined : this.principals.get(key, st);
    if (hit && hit.settings === settings && !(hit.expiresOn !== null && hit.expiresOn <= currentDate()) && hit.expiresAtMs > Date.now()) return hit;
    const p = await this.resolveToken(c, value, settings);
    if (st !== null) this.principals.set(key, st, p);
    return p;
  }

  private async resolveToken(c: Credentials, value: string, settings: Settings): Promise<Principal> {
    if (!c.privateToken) {
      const o = await this.oauth.findAccess(value);
      if (o) {
        if (o.revoked_at) throw Errors.invalidToken(REVOKED);
        if (this.oauth.isExpired(o)) throw Errors.invalidToken(EXPIRED);
        const user = await this.user(o.user_id);
        if (!user) throw Errors.unauthorized();
        const scopes = o.scopes.split(' ').filter(Boolean);
        const actor = checked({ ...ANONYMOUS, kind: 'user', user, isAdmin: user.is_admin === 1, scopes, credential: 'oauth' }, settings);
        return { actor, pat: null, settings, expiresOn: null, expiresAtMs: Date.parse(o.created_at) + o.expires_in * 1000 };
      }
    }
    const pat = await this.tokens.findBySecret(value);
    if (!pat || settings.disable_personal_access_tokens) throw Errors.unauthorized();
    if (pat.impersonation && !this.impersonationEnabled) throw Errors.invalidToken(IMPERSONATION_DISABLED);
    if (isExpired(pat)) throw Errors.invalidToken(EXPIRED);
    if (pat.revoked) {
      if (ROTATE_PATH.test(c.path)) await this.tokens.revokeFamily(pat);
      throw Errors.invalidToken(REVOKED);
    }
    const user = await this.user(pat.user_id);
    if (!user) throw Errors.unauthorized();
    const actor = checked(
      {
        ...ANONYMOUS,
        kind: 'user',
        user,
        isAdmin: user.is_admin === 1,
        scopes: effectiveScopes(JSON.parse(pat.scopes)),
        credential: pat.impersonation ? 'impersonation_token' : 'personal_access_token',
        tokenId: pat.id,
        impersonated: pat.impersonation === 1,
      },
      settings,
    );
    return { actor, pat, settings, expiresOn: pat.expires_at, expiresAtMs: Infinity };
  }

  /**
   * @param allowedScopes scopes that grant access to this route
   */
  async authenticate(c: Credentials, allowedScopes: readonly string[]): Promise<Actor> {
    const settings = this.settings.cached() ?? (await this.settings.get());
    let actor: Actor | null = null;
    let pat: PatRow | null = null;

    if (c.jobToken) {
      const job = await this.jobTokens.resolve(c.jobToken);
      if (!job) throw Errors.unauthorized();
      actor = checked({ ...ANONYMOUS, kind: 'job', user: job.user, isAdmin: false, scopes: ['api'], credential: 'job_token', jobId: job.jobId }, settings);
    } else if (c.bearer || c.accessToken || c.privateToken) {
      const principal = await this.tokenPrincipal(c, (c.privateToken ?? c.bearer ?? c.accessToken)!, settings);
      actor = principal.actor;
      pat = principal.pat;
    } else if (c.sessionId) {
      const s = await this.sessions.find(c.sessionId);
      // GET/HEAD by cookie alone; other methods need the session's CSRF token.
      const safe = c.method === 'GET' || c.method === 'HEAD';
      if (s && (safe || (c.csrfToken && safeEqual(c.csrfToken, s.csrf)))) {
        const user = await this.user(s.userId);
        if (user) actor = checked({ ...ANONYMOUS, kind: 'user', user, isAdmin: user.is_admin === 1, scopes: null, credential: 'session' }, settings);
      }
    }

    if (!actor) {
      if (c.sudo !== undefined) throw Errors.unauthorized();
      return ANONYMOUS;
    }

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
        sudoFrom: actor.user,
      };
    }

    if (actor.scopes && actor.credential !== 'job_token' && !actor.scopes.some((s) => allowedScopes.includes(s))) {
      throw Errors.insufficientScope(allowedScopes as string[]);
    }
    if (pat) await this.recordUse(pat, c);
    return actor;
  }
}

/**
 * The checks every signed-in actor passes, whatever the credential: a blocked or deactivated user is
 * refused; with the admin_mode setting on, an administrator's token needs the admin_mode scope.
 */
function checked(actor: Actor, settings: Settings): Actor {
  const reason = deniedReason(actor.user!);
  if (reason) throw Errors.forbidden(reason);
  if (actor.isAdmin && settings.admin_mode && actor.scopes && !actor.scopes.includes('admin_mode')) actor.isAdmin = false;
  return actor;
}
