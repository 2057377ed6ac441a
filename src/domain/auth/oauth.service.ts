// OAuth 2 password and refresh-token grants (Doorkeeper-like): 2-hour access tokens, refreshable.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, OauthTokenRow, UserRow } from '../../db/schema.ts';
import { randomToken, tokenDigest } from '../../lib/secrets.ts';
import { nowIso } from '../../lib/time.ts';

export const OAUTH_TTL_SECONDS = 7200;
export const OAUTH_DEFAULT_SCOPES = ['api'];

export interface IssuedOauthToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  created_at: number;
}

/** Doorkeeper's AccessToken#as_json plus GitLab's two legacy keys (Oauth::TokenInfoController). */
export interface OauthTokenInfo {
  resource_owner_id: number;
  scope: string[];
  expires_in: number;
  application: { uid: string | null };
  created_at: number;
  scopes: string[];
  expires_in_seconds: number;
}

export function scopeList(row: Pick<OauthTokenRow, 'scopes'>): string[] {
  return row.scopes.split(' ').filter(Boolean);
}

export class OauthService {
  constructor(
    private readonly db: Db,
    private readonly salt: () => string,
  ) {}

  private digest(v: string): string {
    return tokenDigest(this.salt(), 'oauth:' + v);
  }

  async issue(user: UserRow, scopes: string[], previousRefreshDigest: string | null = null, k: Kysely<Database> = this.db.kysely): Promise<IssuedOauthToken> {
    const access = randomToken(32);
    const refresh = randomToken(32);
    const created = new Date();
    await k
      .insertInto('oauth_tokens')
      .values({
        user_id: user.id,
        token_digest: this.digest(access),
        refresh_token_digest: this.digest(refresh),
        previous_refresh_token_digest: previousRefreshDigest,
        scopes: scopes.join(' '),
        expires_in: OAUTH_TTL_SECONDS,
        created_at: created.toISOString(),
        revoked_at: null,
      })
      .returningAll()
      .execute();
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: OAUTH_TTL_SECONDS,
      refresh_token: refresh,
      scope: scopes.join(' '),
      created_at: Math.floor(created.getTime() / 1000),
    };
  }

  async findAccess(token: string): Promise<OauthTokenRow | undefined> {
    return this.db.kysely.selectFrom('oauth_tokens').selectAll().where('token_digest', '=', this.digest(token)).executeTakeFirst();
  }

  async findRefresh(token: string): Promise<OauthTokenRow | undefined> {
    return this.db.kysely.selectFrom('oauth_tokens').selectAll().where('refresh_token_digest', '=', this.digest(token)).executeTakeFirst();
  }

  isExpired(row: OauthTokenRow, now = Date.now()): boolean {
    return Date.parse(row.created_at) + row.expires_in * 1000 <= now;
  }

  /** Usable on the API: neither revoked nor past its lifetime (Doorkeeper's accessible?). */
  isAccessible(row: OauthTokenRow, now = Date.now()): boolean {
    return !row.revoked_at && !this.isExpired(row, now);
  }

  info(row: OauthTokenRow, now = Date.now()): OauthTokenInfo {
    const scopes = scopeList(row);
    const remaining = Math.max(0, Math.round((Date.parse(row.created_at) + row.expires_in * 1000 - now) / 1000));
    return {
      resource_owner_id: row.user_id,
      scope: scopes,
      expires_in: remaining,
      application: { uid: null },
      created_at: Math.floor(Date.parse(row.created_at) / 1000),
      scopes,
      expires_in_seconds: remaining,
    };
  }

  /**
   * Refresh: in one transaction the old pair is revoked and a new pair issued, so a refresh token
   * works once; a concurrent second use finds it revoked and gets null.
   * @param scopes a subset of the old token's scopes (the caller checks), or the old scopes
   */
  async refresh(row: OauthTokenRow, user: UserRow, scopes: string[] = scopeList(row)): Promise<IssuedOauthToken | null> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('oauth_tokens')
        .set({ revoked_at: nowIso() })
        .where('id', '=', row.id)
        .where('revoked_at', 'is', null)
        .returningAll()
        .execute();
      if (revoked.length !== 1) return null;
      return this.issue(user, scopes, row.refresh_token_digest, trx);
    });
  }

  async revoke(token: string): Promise<void> {
    const row = (await this.findAccess(token)) ?? (await this.findRefresh(token));
    if (!row || row.revoked_at) return;
    await this.db.kysely.updateTable('oauth_tokens').set({ revoked_at: nowIso() }).where('id', '=', row.id).execute();
  }
}
