// Personal access tokens and impersonation tokens: creation, lookup by secret, rotation, revocation.
import { sql, type Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, PatRow, UserRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { randomToken, routableToken, tokenDigest } from '../../lib/secrets.ts';
import { addDays, isDate, nowIso, todayDate } from '../../lib/time.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { availableScopes } from './scopes.ts';

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

/** last_used_at is written at most this often per token. */
const LAST_USED_RESOLUTION_MS = 10 * 60 * 1000;
const MAX_LIFETIME_DAYS = 365;

export function isExpired(row: Pick<PatRow, 'expires_at'>, today = todayDate()): boolean {
  return row.expires_at !== null && row.expires_at <= today;
}

export function toView(row: PatRow, token?: string): TokenView {
  return { row, scopes: JSON.parse(row.scopes), active: row.revoked === 0 && !isExpired(row), ...(token ? { token } : {}) };
}

export class TokensService {
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
  touch(row: PatRow): void {
    const last = row.last_used_at ? Date.parse(row.last_used_at) : 0;
    if (Date.now() - last < LAST_USED_RESOLUTION_MS) return;
    const now = nowIso();
    row.last_used_at = now;
    this.db.kysely.updateTable('personal_access_tokens').set({ last_used_at: now }).where('id', '=', row.id).execute().catch(() => {});
  }

  validateInput(user: UserRow, input: CreateTokenInput, requireExpiry: boolean): Record<string, string[]> {
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
        const max = addDays(todayDate(), MAX_LIFETIME_DAYS);
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
        user_id: user.id, name, description: null, token_digest: digest, scopes: JSON.stringify(scopes), impersonation: 0,
        revoked: 0, expires_at: null, last_used_at: null, previous_personal_access_token_id: null, created_at: now, updated_at: now,
      })
      .execute();
  }

  async byId(id: number): Promise<PatRow | undefined> {
    return this.db.kysely.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async revoke(row: PatRow): Promise<void> {
    if (row.revoked) throw Errors.badRequest('Not permitted to revoke');
    await this.db.kysely.updateTable('personal_access_tokens').set({ revoked: 1, updated_at: nowIso() }).where('id', '=', row.id).execute();
  }

  /** Revokes the old token and creates its successor in one transaction. */
  async rotate(row: PatRow, user: UserRow, expiresAt: string | undefined): Promise<TokenView> {
    if (row.revoked) throw Errors.badRequest('Token already revoked');
    const s = await this.settings.get();
    let expires: string | null;
    if (expiresAt !== undefined) {
      if (!isDate(expiresAt)) throw Errors.param('expires_at is invalid');
      const max = addDays(todayDate(), MAX_LIFETIME_DAYS);
      if (expiresAt > max) throw Errors.badRequest(`Expires at must be before ${max}`);
      expires = expiresAt;
    } else expires = s.require_personal_access_token_expiry ? addDays(todayDate(), 7) : null;
    return this.db.kysely.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('personal_access_tokens')
        .set({ revoked: 1, updated_at: nowIso() })
        .where('id', '=', row.id)
        .where('revoked', '=', 0)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw Errors.badRequest('Token already revoked');
      const view = await this.create(user, { name: row.name, description: row.description, scopes: JSON.parse(row.scopes), expires_at: expires, impersonation: row.impersonation === 1 }, trx);
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
}
