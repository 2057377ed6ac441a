// Password check shared by the web sign-in form and the OAuth password grant, with Devise's
// lockable rules as GitLab configures them (config/initializers/devise.rb: lock after
// maximum_attempts = 10 failures, unlock by time after unlock_in = 10 minutes; the settings
// max_login_attempts and failed_login_attempts_unlock_period_in_minutes override both).
import type { Db } from '../../db/connect.ts';
import type { UserRow } from '../../db/schema.ts';
import { hashPassword, verifyPassword } from '../../lib/secrets.ts';
import { nowIso } from '../../lib/time.ts';
import type { Settings } from '../core/settings-definitions.ts';
import type { SettingsService } from '../settings/settings.service.ts';

export const DEFAULT_MAX_LOGIN_ATTEMPTS = 10;
export const DEFAULT_UNLOCK_MINUTES = 10;
/** Longer inputs are refused without hashing them (GitLab passwords are at most 128 characters). */
const MAX_PASSWORD_LENGTH = 1024;

export type SignInRefusal =
  | 'invalid' // unknown login or wrong password: one generic answer
  | 'locked' // too many failures; also with the right password until the unlock period ends
  | 'blocked'
  | 'pending_approval'
  | 'deactivated'
  | 'two_factor'; // a second factor is required and this server cannot check one

export type SignInOutcome = { ok: true; user: UserRow } | { ok: false; reason: SignInRefusal; user: UserRow | null };

export interface LockPolicy {
  maxAttempts: number;
  unlockMinutes: number;
}

export function lockPolicy(s: Pick<Settings, 'max_login_attempts' | 'failed_login_attempts_unlock_period_in_minutes'>): LockPolicy {
  return {
    maxAttempts: s.max_login_attempts ?? DEFAULT_MAX_LOGIN_ATTEMPTS,
    unlockMinutes: s.failed_login_attempts_unlock_period_in_minutes ?? DEFAULT_UNLOCK_MINUTES,
  };
}

/** Devise's access_locked?: a lock older than the unlock period no longer counts. */
export function accessLocked(user: Pick<UserRow, 'locked_at'>, policy: LockPolicy, now = Date.now()): boolean {
  return !!user.locked_at && Date.parse(user.locked_at) + policy.unlockMinutes * 60_000 > now;
}

let dummyHash: Promise<string> | null = null;
/** Unknown logins still cost one scrypt run, so timing does not tell which logins exist. */
function burnPasswordCheck(password: string): Promise<boolean> {
  dummyHash ??= hashPassword('hearth-dummy-password');
  return dummyHash.then((h) => verifyPassword(password, h)).then(() => false);
}

export class PasswordSignIn {
  constructor(
    private readonly db: Db,
    private readonly settings: SettingsService,
  ) {}

  /** Username or email, both case-insensitive (GitLab's User.find_by_login). */
  private async byLogin(login: string): Promise<UserRow | undefined> {
    const l = login.trim().toLowerCase();
    return this.db.kysely
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', l), eb(eb.fn('lower', ['email']), '=', l)]))
      .orderBy('id')
      .executeTakeFirst();
  }

  /**
   * One sign-in attempt. The password is checked before the account state, as Devise does, so a
   * blocked account is revealed only to someone who knows its password.
   * @param reactivate web sign-in reactivates a deactivated account (GitLab); the OAuth grant refuses it
   */
  async attempt(login: string, password: string, opts: { reactivate: boolean }): Promise<SignInOutcome> {
    const policy = lockPolicy(await this.settings.get());
    let user = await this.byLogin(login);
    if (!user) {
      if (password.length <= MAX_PASSWORD_LENGTH) await burnPasswordCheck(password);
      return { ok: false, reason: 'invalid', user: null };
    }
    if (user.locked_at && !accessLocked(user, policy)) user = await this.unlock(user);

    let passwordOk = false;
    if (password.length <= MAX_PASSWORD_LENGTH) {
      passwordOk = user.password_hash ? await verifyPassword(password, user.password_hash) : await burnPasswordCheck(password);
    }
    if (!passwordOk || user.locked_at) {
      // Devise counts every refused attempt, also those against an account that is already locked.
      const locked = await this.countFailure(user, policy);
      return { ok: false, reason: locked ? 'locked' : 'invalid', user };
    }

    if (user.failed_attempts !== 0) {
      user =
        (await this.db.kysely
          .updateTable('users')
          .set({ failed_attempts: 0, updated_at: nowIso() })
          .where('id', '=', user.id)
          .returningAll()
          .executeTakeFirst()) ?? user;
    }
    switch (user.state) {
      case 'blocked':
        return { ok: false, reason: 'blocked', user };
      case 'blocked_pending_approval':
        return { ok: false, reason: 'pending_approval', user };
      case 'deactivated':
        if (!opts.reactivate) return { ok: false, reason: 'deactivated', user };
        break;
      case 'active':
        break;
      default:
        return { ok: false, reason: 'blocked', user };
    }
    if (user.two_factor_enabled) return { ok: false, reason: 'two_factor', user };
    if (user.state === 'deactivated') {
      user =
        (await this.db.kysely
          .updateTable('users')
          .set({ state: 'active', updated_at: nowIso() })
          .where('id', '=', user.id)
          .where('state', '=', 'deactivated')
          .returningAll()
          .executeTakeFirst()) ?? user;
    }
    return { ok: true, user };
  }

  /** Devise trackable: sign-in count, current and previous sign-in time and IP. */
  async recordSignIn(user: UserRow, ip: string | null): Promise<UserRow> {
    const now = nowIso();
    const row = await this.db.kysely
      .updateTable('users')
      .set((eb) => ({
        sign_in_count: eb('sign_in_count', '+', 1),
        last_sign_in_at: user.current_sign_in_at ?? now,
        current_sign_in_at: now,
        last_sign_in_ip: user.current_sign_in_ip ?? ip,
        current_sign_in_ip: ip,
        updated_at: now,
      }))
      .where('id', '=', user.id)
      .returningAll()
      .executeTakeFirst();
    return row ?? user;
  }

  private async unlock(user: UserRow): Promise<UserRow> {
    const row = await this.db.kysely
      .updateTable('users')
      .set({ locked_at: null, failed_attempts: 0, updated_at: nowIso() })
      .where('id', '=', user.id)
      .where('locked_at', '=', user.locked_at)
      .returningAll()
      .executeTakeFirst();
    return row ?? (await this.db.kysely.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow());
  }

  /** Counts a failure atomically; locks at the limit. Returns whether the account is now locked. */
  private async countFailure(user: UserRow, policy: LockPolicy): Promise<boolean> {
    const row = await this.db.kysely
      .updateTable('users')
      .set((eb) => ({ failed_attempts: eb('failed_attempts', '+', 1), updated_at: nowIso() }))
      .where('id', '=', user.id)
      .returningAll()
      .executeTakeFirst();
    if (!row) return false;
    if (row.locked_at) return true;
    if (row.failed_attempts < policy.maxAttempts) return false;
    await this.db.kysely
      .updateTable('users')
      .set({ locked_at: nowIso(), updated_at: nowIso() })
      .where('id', '=', user.id)
      .where('locked_at', 'is', null)
      .execute();
    return true;
  }
}
