// Web sessions behind the `_service_session` cookie: created only by the sign-in page.
import type { Db } from '../../db/connect.ts';
import type { UserRow } from '../../db/schema.ts';
import { randomToken, tokenDigest } from '../../lib/secrets.ts';
import { nowIso } from '../../lib/time.ts';

export const SESSION_COOKIE = '_service_session';
/** Double-submit CSRF cookie of the sign-in form (before a session exists). */
export const CSRF_COOKIE = '_service_csrf';

export class SessionsService {
  constructor(
    private readonly db: Db,
    private readonly salt: () => string,
  ) {}

  private digest(v: string): string {
    return tokenDigest(this.salt(), 'session:' + v);
  }

  async create(user: UserRow, ttlMinutes: number, ip: string | null): Promise<{ id: string; csrf: string; expiresAt: string }> {
    const id = randomToken(32);
    const csrf = randomToken(32);
    const expiresAt = new Date(Date.now() + ttlMinutes * 60_000).toISOString();
    // Housekeeping: this user's expired sessions go when a new one starts.
    await this.db.kysely.deleteFrom('web_sessions').where('user_id', '=', user.id).where('expires_at', '<=', nowIso()).execute();
    await this.db.kysely
      .insertInto('web_sessions')
      .values({ session_digest: this.digest(id), csrf_token: csrf, user_id: user.id, created_at: nowIso(), expires_at: expiresAt, ip })
      .returningAll()
      .execute();
    return { id, csrf, expiresAt };
  }

  async find(id: string): Promise<{ userId: number; csrf: string } | null> {
    const row = await this.db.kysely
      .selectFrom('web_sessions')
      .select(['user_id', 'csrf_token', 'expires_at'])
      .where('session_digest', '=', this.digest(id))
      .executeTakeFirst();
    if (!row || row.expires_at <= nowIso()) return null;
    return { userId: row.user_id, csrf: row.csrf_token };
  }

  async destroy(id: string): Promise<void> {
    await this.db.kysely.deleteFrom('web_sessions').where('session_digest', '=', this.digest(id)).execute();
  }

  async destroyForUser(userId: number): Promise<void> {
    await this.db.kysely.deleteFrom('web_sessions').where('user_id', '=', userId).execute();
  }
}
