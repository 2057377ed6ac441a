// OAuth 2 password and refresh-token grants (Doorkeeper-like): 2-hour access tokens, refreshable.
import type { Db } from '../../db/connect.ts';
import type { OauthTokenRow, UserRow } from '../../db/schema.ts';
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

export class OauthService {
  constructor(private readonly db: Db, private readonly salt: () => string) {}

  private digest(v: string): string {
    return tokenDigest(this.salt(), 'oauth:' + v);
  }

  async issue(user: UserRow, scopes: string[], previousRefreshDigest: string | null = null): Promise<IssuedOauthToken> {
    const access = randomToken(32);
    const refresh = randomToken(32);
    const created = new Date();
    await this.db.kysely
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

  /** Refresh: the old pair is revoked, a new pair issued (refresh tokens are single use). */
  async refresh(row: OauthTokenRow, user: UserRow): Promise<IssuedOauthToken | null> {
    const res = await this.db.kysely
      .updateTable('oauth_tokens')
      .set({ revoked_at: nowIso() })
      .where('id', '=', row.id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) return null;
    return this.issue(user, row.scopes.split(' ').filter(Boolean), row.refresh_token_digest);
  }

  async revoke(token: string): Promise<void> {
    const row = (await this.findAccess(token)) ?? (await this.findRefresh(token));
    if (!row || row.revoked_at) return;
    await this.db.kysely.updateTable('oauth_tokens').set({ revoked_at: nowIso() }).where('id', '=', row.id).execute();
  }

  digestOf(v: string): string {
    return this.digest(v);
  }
}
