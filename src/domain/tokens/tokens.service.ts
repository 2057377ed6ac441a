// Personal access tokens and impersonation tokens: creation, lookup by secret, listing, rotation,
// revocation and who may do which (reference §4; GitLab's PersonalAccessTokenPolicy and finders).
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, PatRow, UserRow } from '../../db/schema.ts';
import { ciContains } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { randomToken, routableToken, tokenDigest } from '../../lib/secrets.ts';
import { addDays, currentDate, isDate, nowIso, todayDate } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { Settings } from '../core/settings-definitions.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { ALL_SCOPES, availableScopes } from './scopes.ts';

export interface TokenView {
  row: PatRow;
  scopes: string[];
  active: boolean;
  /** the secret, only right after creation or rotation */
  token?: string;
}

export interface CreateTokenInput {
  name: string;
  scopes: string[];
  expires_at?: string | null;
  description?: string | null;
  impersonation?: boolean;
}

/** Filters of GET /personal_access_tokens, already validated; times as ISO text, dates as YYYY-MM-DD. */
export interface TokenListFilters {
  /** as given: '' means the key was present but blank */
  user_id?: string;
  revoked?: boolean;
  state?: 'active' | 'inactive';
  created_before?: string;
  created_after?: string;
  last_used_before?: string;
  last_used_after?: string;
  expires_before?: string;
  expires_after?: string;
  search?: string;
  sort?: string;
}

export type TokenQuery = SelectQueryBuilder<Database, 'personal_access_tokens', PatRow>;

/** last_used_at is written at most this often per token. */
const LAST_USED_RESOLUTION_MS = 10 * 60 * 1000;
const MAX_LIFETIME_DAYS = 365;
/** GitLab's RotateService::EXPIRATION_PERIOD */
const ROTATED_LIFETIME_DAYS = 7;
const MAX_ID = 2 ** 31 - 1;

export const NOT_PAT = 'This endpoint requires token type to be a personal access token';

/**
 * The longest lifetime a new token may have, in days: PersonalAccessToken::MAX_PERSONAL_ACCESS_TOKEN_
 * LIFETIME_IN_DAYS, or less when max_personal_access_token_lifetime says so.
 */
export function maxLifetimeDays(s: Pick<Settings, 'max_personal_access_token_lifetime'>): number {
  const cap = s.max_personal_access_token_lifetime;
  return typeof cap === 'number' && cap > 0 && cap < MAX_LIFETIME_DAYS ? cap : MAX_LIFETIME_DAYS;
}

/** GitLab's default expiry of a token created without one: the maximum allowed lifetime from today. */
export function defaultExpiry(s: Pick<Settings, 'max_personal_access_token_lifetime'>): string {
  return addDays(todayDate(), maxLifetimeDays(s));
}

/** A token that would be expired on creation (a date before tomorrow): 400 {"message":{"expires_at":["must be in the future"]}}. */
export function pastExpiryErrors(expiresAt: string | null | undefined): Record<string, string[]> | null {
  return expiresAt && isDate(expiresAt) && expiresAt <= todayDate() ? { expires_at: ['must be in the future'] } : null;
}

export function isExpired(row: Pick<PatRow, 'expires_at'>, today = currentDate()): boolean {
  return row.expires_at !== null && row.expires_at <= today;
}

export function toView(row: PatRow, token?: string): TokenView {
  return { row, scopes: JSON.parse(row.scopes), active: row.revoked === 0 && !isExpired(row), ...(token ? { token } : {}) };
}

/** A database id from a path or query value; anything else (text, 0, beyond int4) finds nothing. */
export function parseId(value: string | number | undefined | null): number | null {
  const s = String(value ?? '');
  if (!/^\d{1,10}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= MAX_ID ? n : null;
}

/** Rails `full_messages.to_sentence`: {expires_at: ['must be …']} → "Expires at must be …". */
export function fullMessages(errors: Record<string, string[]>): string {
  const msgs = Object.entries(errors).flatMap(([k, list]) => {
    const attr = k.replace(/_/g, ' ');
    return list.map((m) => `${attr[0].toUpperCase()}${attr.slice(1)} ${m}`);
  });
  if (msgs.length <= 1) return msgs.join('');
  if (msgs.length === 2) return msgs.join(' and ');
  return `${msgs.slice(0, -1).join(', ')}, and ${msgs[msgs.length - 1]}`;
}

/** read_user_personal_access_tokens / manage_user_personal_access_token: the owner or an administrator. */
function mayManageTokensOf(actor: Actor, userId: number): boolean {
  return actor.isAdmin || actor.user?.id === userId;
}

/** revoke_personal_access_token: administrators, or the owner of a token that is not an impersonation token. */
function mayRevoke(actor: Actor, row: PatRow): boolean {
  return actor.isAdmin || (actor.user?.id === row.user_id && row.impersonation === 0);
}

function isPatCredential(actor: Actor): boolean {
  return (actor.credential === 'personal_access_token' || actor.credential === 'impersonation_token') && actor.tokenId !== null;
}

// Sort names of GitLab's PersonalAccessToken.simple_sorts; NULLs placed as PostgreSQL does by default.
const SORTS: Record<string, (q: TokenQuery) => TokenQuery> = {
  created_asc: (q) => q.orderBy('created_at', 'asc').orderBy('id', 'asc'),
  created_desc: (q) => q.orderBy('created_at', 'desc').orderBy('id', 'desc'),
  name_asc: (q) => q.orderBy(sql`lower(${sql.ref('name')})`, 'asc').orderBy('id', 'asc'),
  name_desc: (q) => q.orderBy(sql`lower(${sql.ref('name')})`, 'desc').orderBy('id', 'desc'),
  expires_asc: (q) => q.orderBy('expires_at', (ob) => ob.asc().nullsLast()).orderBy('id', 'desc'),
  expires_at_asc_id_desc: (q) => q.orderBy('expires_at', (ob) => ob.asc().nullsLast()).orderBy('id', 'desc'),
  expires_desc: (q) => q.orderBy('expires_at', (ob) => ob.desc().nullsFirst()).orderBy('id', 'desc'),
  last_used_asc: (q) => q.orderBy('last_used_at', (ob) => ob.asc().nullsLast()).orderBy('id', 'desc'),
  last_used_desc: (q) => q.orderBy('last_used_at', (ob) => ob.desc().nullsFirst()).orderBy('id', 'desc'),
};

export class TokensService {
  /** touch() writes in the background; reads of the same token wait for it (read-your-writes). */
  private readonly pendingTouches = new Map<number, Promise<void>>();
  /** last_used_at of a (cached) row as a number, parsed once: touch() runs on every request */
  private readonly lastUsedMs = new WeakMap<PatRow, number>();

  constructor(
    private readonly db: Db,
    private readonly settings: SettingsService,
    private readonly salt: () => string,
  ) {}

  digest(token: string): string {
    return tokenDigest(this.salt(), token);
  }

  async findBySecret(token: string): Promise<PatRow | undefined> {
    return this.db.kysely.selectFrom('personal_access_tokens').selectAll().where('token_digest', '=', this.digest(token)).executeTakeFirst();
  }

  /** Records use without a write on every request. */
  touch(row: PatRow): Promise<void> | undefined {
    let last = this.lastUsedMs.get(row);
    if (last === undefined) this.lastUsedMs.set(row, (last = row.last_used_at ? Date.parse(row.last_used_at) : 0));
    if (Date.now() - last < LAST_USED_RESOLUTION_MS) return undefined;
    const now = nowIso();
    row.last_used_at = now;
    this.lastUsedMs.set(row, Date.parse(now));
    const write = this.db.kysely
      .updateTable('personal_access_tokens')
      .set({ last_used_at: now })
      .where('id', '=', row.id)
      .execute()
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        if (this.pendingTouches.get(row.id) === write) this.pendingTouches.delete(row.id);
      });
    this.pendingTouches.set(row.id, write);
    return write;
  }

  validateInput(user: Pick<UserRow, 'is_admin'>, input: CreateTokenInput, requireExpiry: boolean, maxDays = MAX_LIFETIME_DAYS): Record<string, string[]> {
    const errors: Record<string, string[]> = {};
    const push = (k: string, m: string) => (errors[k] ??= []).push(m);
    if (!input.name || !input.name.trim()) push('name', "can't be blank");
    else if (input.name.length > 255) push('name', 'is too long (maximum is 255 characters)');
    if (!input.scopes.length) push('scopes', "can't be blank");
    const allowed = availableScopes(user.is_admin === 1);
    if (input.scopes.some((s) => !allowed.includes(s))) push('scopes', 'can only contain available scopes');
    if (input.expires_at) {
      if (!isDate(input.expires_at)) push('expires_at', 'is invalid');
      else {
        const max = addDays(todayDate(), maxDays);
        if (input.expires_at > max) push('expires_at', `must be before ${max}`);
      }
    } else if (requireExpiry) push('expires_at', "can't be blank");
    return errors;
  }

  async create(user: UserRow, input: CreateTokenInput, trx: Kysely<Database> = this.db.kysely): Promise<TokenView> {
    const s = await this.settings.get();
    const prefix = s.personal_access_token_prefix ?? '';
    const secret = routableToken(prefix, user.id);
    const now = nowIso();
    const row = await trx
      .insertInto('personal_access_tokens')
      .values({
        user_id: user.id,
        name: input.name,
        description: input.description ?? null,
        token_digest: this.digest(secret),
        scopes: JSON.stringify(input.scopes),
        impersonation: input.impersonation ? 1 : 0,
        revoked: 0,
        expires_at: input.expires_at ?? null,
        last_used_at: null,
        previous_personal_access_token_id: null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toView(row, secret);
  }

  /** A token with exactly this secret (HEARTH_ROOT_TOKEN). Idempotent. */
  async ensureFixed(user: UserRow, secret: string, name: string, scopes: string[]): Promise<void> {
    const digest = this.digest(secret);
    const existing = await this.db.kysely.selectFrom('personal_access_tokens').select('id').where('token_digest', '=', digest).executeTakeFirst();
    if (existing) return;
    const now = nowIso();
    await this.db.kysely
      .insertInto('personal_access_tokens')
      .values({
        user_id: user.id,
        name,
        description: null,
        token_digest: digest,
        scopes: JSON.stringify(scopes),
        impersonation: 0,
        revoked: 0,
        expires_at: null,
        last_used_at: null,
        previous_personal_access_token_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  async byId(id: number): Promise<PatRow | undefined> {
    if (parseId(id) === null) return undefined;
    await this.pendingTouches.get(id);
    return this.db.kysely.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  }

  private async userById(id: number | null): Promise<UserRow | undefined> {
    if (id === null) return undefined;
    return this.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The user whose tokens an administrator manages: 404 User Not Found. */
  async targetUser(id: string | number): Promise<UserRow> {
    const user = await this.userById(parseId(id));
    if (!user) throw Errors.notFound('User');
    return user;
  }

  /** GitLab's revoke!: idempotent, bumps updated_at. */
  async revoke(row: PatRow): Promise<void> {
    await this.db.kysely.updateTable('personal_access_tokens').set({ revoked: 1, updated_at: nowIso() }).where('id', '=', row.id).execute();
  }

  /** Revokes the old token and creates its successor in one transaction. */
  async rotate(row: PatRow, user: UserRow, expiresAt: string | undefined): Promise<TokenView> {
    if (row.revoked) throw Errors.badRequest('Token already revoked');
    const s = await this.settings.get();
    if (s.disable_personal_access_tokens) throw Errors.badRequest('Not permitted to create');
    let expires: string | null;
    if (expiresAt !== undefined) {
      if (!isDate(expiresAt)) throw Errors.param('expires_at is invalid');
      if (pastExpiryErrors(expiresAt)) throw Errors.badRequest('Expires at must be in the future');
      const max = addDays(todayDate(), maxLifetimeDays(s));
      if (expiresAt > max) throw Errors.badRequest(`Expires at must be before ${max}`);
      expires = expiresAt;
    } else expires = s.require_personal_access_token_expiry ? addDays(todayDate(), ROTATED_LIFETIME_DAYS) : null;
    return this.db.kysely.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('personal_access_tokens')
        .set({ revoked: 1, updated_at: nowIso() })
        .where('id', '=', row.id)
        .where('revoked', '=', 0)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw Errors.badRequest('Token already revoked');
      const view = await this.create(
        user,
        { name: row.name, description: row.description, scopes: JSON.parse(row.scopes), expires_at: expires, impersonation: row.impersonation === 1 },
        trx,
      );
      const linked = await trx
        .updateTable('personal_access_tokens')
        .set({ previous_personal_access_token_id: row.id })
        .where('id', '=', view.row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return toView(linked, view.token);
    });
  }

  /** Reuse detection: a revoked token used to rotate revokes every active descendant. */
  async revokeFamily(row: PatRow): Promise<number> {
    const res = await sql<{ id: number }>`
      with recursive family(id) as (
        select id from personal_access_tokens where previous_personal_access_token_id = ${row.id}
        union all
        select t.id from personal_access_tokens t join family f on t.previous_personal_access_token_id = f.id
      )
      update personal_access_tokens set revoked = 1, updated_at = ${nowIso()}
      where id in (select id from family) and revoked = 0`.execute(this.db.kysely);
    return Number(res.numAffectedRows ?? 0);
  }

  randomSecret(): string {
    return randomToken(32);
  }

  // ---- the personal access tokens API, with the caller's permissions ----

  /**
   * GET /personal_access_tokens: administrators see every token (optionally of one user), others only
   * their own non-impersonation tokens. Returns the ordered query for offset pagination.
   */
  async listQuery(actor: Actor, f: TokenListFilters): Promise<TokenQuery> {
    if (actor.tokenId !== null) await this.pendingTouches.get(actor.tokenId);
    let q: TokenQuery = this.db.kysely.selectFrom('personal_access_tokens').selectAll();
    if (actor.isAdmin) {
      if (f.user_id !== undefined) {
        // GitLab: `not_found!` for an unknown or blank user_id (no resource name).
        const user = await this.userById(parseId(f.user_id));
        if (!user) throw Errors.notFound();
        q = q.where('user_id', '=', user.id);
      }
    } else {
      if (f.user_id !== undefined && f.user_id !== '' && parseId(f.user_id) !== actor.user!.id) throw Errors.unauthorized();
      q = q.where('user_id', '=', actor.user!.id).where('impersonation', '=', 0);
    }
    q = this.filterState(q, f.state);
    if (f.revoked !== undefined) q = q.where('revoked', '=', f.revoked ? 1 : 0);
    if (f.created_before) q = q.where('created_at', '<=', f.created_before);
    if (f.created_after) q = q.where('created_at', '>=', f.created_after);
    if (f.last_used_before) q = q.where('last_used_at', '<=', f.last_used_before);
    if (f.last_used_after) q = q.where('last_used_at', '>=', f.last_used_after);
    if (f.expires_before) q = q.where('expires_at', '<', f.expires_before);
    if (f.expires_after) q = q.where('expires_at', '>=', f.expires_after);
    if (f.search) q = q.where(ciContains(this.db.dialect, 'name', f.search));
    // An unknown sort is ignored, as GitLab's finder does.
    const sort = f.sort !== undefined ? SORTS[f.sort] : undefined;
    return sort ? sort(q) : q.orderBy('id', 'asc');
  }

  /** `inactive` is the complement of the entity's `active` (revoked, or expired on or before today). */
  private filterState(q: TokenQuery, state: 'active' | 'inactive' | 'all' | undefined): TokenQuery {
    const today = todayDate();
    if (state === 'active') {
      return q.where((eb) => eb.and([eb('revoked', '=', 0), eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today)])]));
    }
    if (state === 'inactive') return q.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', today)]));
    return q;
  }

  /** GET /personal_access_tokens/:id and the rotate-by-id lookup: 401 for others, 404 for administrators. */
  async findAccessible(actor: Actor, id: string): Promise<PatRow> {
    const tokenId = parseId(id);
    const row = tokenId === null ? undefined : await this.byId(tokenId);
    if (row && mayManageTokensOf(actor, row.user_id)) return row;
    throw actor.isAdmin ? Errors.notFound() : Errors.unauthorized();
  }

  /** The token that authenticated this request (GET/DELETE …/self). */
  async current(actor: Actor): Promise<PatRow> {
    if (!isPatCredential(actor)) throw Errors.badRequest(NOT_PAT);
    const row = await this.byId(actor.tokenId!);
    if (!row) throw Errors.unauthorized();
    return row;
  }

  async rotateById(actor: Actor, id: string, expiresAt: string | undefined): Promise<TokenView> {
    const row = await this.findAccessible(actor, id);
    return this.rotate(row, await this.targetUser(row.user_id), expiresAt);
  }

  async rotateSelf(actor: Actor, expiresAt: string | undefined): Promise<TokenView> {
    if (!isPatCredential(actor)) throw Errors.notAllowed();
    const row = await this.byId(actor.tokenId!);
    if (!row) throw Errors.unauthorized();
    return this.rotate(row, await this.targetUser(row.user_id), expiresAt);
  }

  /** DELETE /personal_access_tokens/:id: a missing token is GitLab's RecordNotFound ("404 Not found"). */
  async revokeById(actor: Actor, id: string): Promise<void> {
    const tokenId = parseId(id);
    const row = tokenId === null ? undefined : await this.byId(tokenId);
    if (!row) throw Errors.recordNotFound();
    await this.revokeAs(actor, row);
  }

  async revokeSelf(actor: Actor): Promise<void> {
    await this.revokeAs(actor, await this.current(actor));
  }

  private async revokeAs(actor: Actor, row: PatRow): Promise<void> {
    if (!mayRevoke(actor, row)) throw Errors.badRequest('Not permitted to revoke');
    await this.revoke(row);
  }

  private async assertCreationAllowed(): Promise<void> {
    if ((await this.settings.get()).disable_personal_access_tokens) throw Errors.unprocessable('Not permitted to create');
  }

  /**
   * POST /users/:user_id/personal_access_tokens (administrators). Scopes must be known scopes (400);
   * model problems are GitLab's CreateService error: 422 {"message":"<full messages as a sentence>"}.
   * Without expires_at, the maximum lifetime when expiry is required (CreateService#pat_expiration); a
   * date that is not in the future is 400 {"message":{"expires_at":["must be in the future"]}}.
   */
  async createForUser(target: UserRow, input: CreateTokenInput): Promise<TokenView> {
    if (input.scopes.some((s) => !ALL_SCOPES.includes(s))) throw Errors.param('scopes does not have a valid value');
    const s = await this.settings.get();
    const expires_at = input.expires_at || (s.require_personal_access_token_expiry ? defaultExpiry(s) : null);
    return this.createChecked(target, { ...input, expires_at, impersonation: false }, s);
  }

  /**
   * POST /user/personal_access_tokens. GitLab allows only k8s_proxy here; Hearth allows every scope the
   * caller may hold (admin scopes only for an administrator acting as one). Without expires_at the token
   * expires tomorrow, GitLab's default for this endpoint.
   */
  async createForSelf(actor: Actor, input: CreateTokenInput): Promise<TokenView> {
    const allowed = availableScopes(actor.isAdmin);
    if (input.scopes.some((s) => !allowed.includes(s))) throw Errors.param('scopes does not have a valid value');
    const s = await this.settings.get();
    const expires_at = input.expires_at || addDays(todayDate(), 1);
    return this.createChecked(actor.user!, { ...input, expires_at, impersonation: false }, s);
  }

  private async createChecked(target: UserRow, input: CreateTokenInput, s: Settings): Promise<TokenView> {
    await this.assertCreationAllowed();
    const past = pastExpiryErrors(input.expires_at);
    if (past) throw Errors.invalid(past);
    const errors = this.validateInput(target, input, s.require_personal_access_token_expiry, maxLifetimeDays(s));
    if (Object.keys(errors).length) throw Errors.unprocessable(fullMessages(errors));
    return this.create(target, input);
  }

  // ---- impersonation tokens (administrators) ----

  impersonationListQuery(user: UserRow, state: 'all' | 'active' | 'inactive'): TokenQuery {
    const q = this.db.kysely.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', user.id).where('impersonation', '=', 1);
    return this.filterState(q, state).orderBy('id', 'asc');
  }

  async impersonationToken(user: UserRow, id: number): Promise<PatRow> {
    const row = await this.byId(id);
    if (!row || row.user_id !== user.id || row.impersonation !== 1) throw Errors.notFound('Impersonation Token');
    return row;
  }

  /**
   * Model validation as GitLab's `finder.build(...).save`: 400 {"message":{"field":[…]}}. Without expires_at
   * the maximum lifetime, as for personal access tokens (GitLab itself answers "can't be blank").
   */
  async createImpersonation(target: UserRow, input: Omit<CreateTokenInput, 'impersonation'>): Promise<TokenView> {
    await this.assertCreationAllowed();
    const s = await this.settings.get();
    const expires_at = input.expires_at || (s.require_personal_access_token_expiry ? defaultExpiry(s) : null);
    const full = { ...input, expires_at, impersonation: true };
    const errors = { ...this.validateInput(target, full, s.require_personal_access_token_expiry, maxLifetimeDays(s)), ...pastExpiryErrors(expires_at) };
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    return this.create(target, full);
  }
}
