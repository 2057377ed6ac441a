// Users: creation with GitLab's validations, lookups, state changes.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, UserRow, UserUpdate } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { hashPassword } from '../../lib/secrets.ts';
import { nowIso } from '../../lib/time.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import type { Settings } from '../settings/definitions.ts';

export interface CreateUserInput {
  username: string;
  name: string;
  email: string;
  password?: string | null;
  is_admin?: boolean;
  external?: boolean;
  private_profile?: boolean;
  projects_limit?: number;
  can_create_group?: boolean;
  skip_confirmation?: boolean;
  created_by_id?: number | null;
  extra?: Partial<UserUpdate>;
  identity?: { provider: string; extern_uid: string } | null;
}

const USERNAME_RE = /^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$/;
const EMAIL_RE = /^[^@\s]+@[^@\s]+$/;
/** Paths GitLab keeps for itself at the top level. */
const RESERVED = new Set(['-', 'api', 'assets', 'admin', 'users', 'groups', 'help', 'oauth', 'dashboard', 'explore', 'search', 'projects', 'public', 'uploads', 'health_check', 'favicon.ico', 'robots.txt']);

export function validateUsername(username: string, errors: Record<string, string[]>): void {
  const push = (m: string): void => void (errors.username ??= []).push(m);
  if (!username) return push("can't be blank");
  if (username.length > 255) push('is too long (maximum is 255 characters)');
  if (!USERNAME_RE.test(username) || /[._-]$/.test(username) || /\.(git|atom)$/i.test(username) || /[._-]{2,}/.test(username)) {
    push("can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'");
  }
  if (RESERVED.has(username.toLowerCase())) push(`${username} is a reserved name`);
}

/** email_restrictions (a regex), domain allow/deny lists (reference §12; GitLab's messages). */
export function checkEmailPolicy(email: string, s: Settings, errors: Record<string, string[]>): void {
  const push = (m: string) => (errors.email ??= []).push(m);
  const domain = email.split('@').pop()!.toLowerCase();
  const matches = (pattern: string) => {
    const p = pattern.trim().toLowerCase();
    if (!p) return false;
    const re = new RegExp('^' + p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*') + '$');
    return re.test(domain);
  };
  if (s.domain_allowlist?.length && !s.domain_allowlist.some(matches)) push('domain is not authorized for sign-up.');
  if (s.domain_denylist_enabled && s.domain_denylist?.some(matches)) push('domain is not authorized for sign-up.');
  if (s.email_restrictions_enabled && s.email_restrictions) {
    try {
      if (new RegExp(s.email_restrictions).test(email)) push('is not allowed. Please use your regular email address.');
    } catch {
      /* an invalid pattern is refused when saved */
    }
  }
}

export class UsersService {
  constructor(private readonly db: Db, private readonly settings: SettingsService) {}

  async byId(id: number): Promise<UserRow | undefined> {
    return this.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async byUsername(username: string): Promise<UserRow | undefined> {
    return this.db.kysely.selectFrom('users').selectAll().where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase())).executeTakeFirst();
  }

  async byLogin(login: string): Promise<UserRow | undefined> {
    const l = login.toLowerCase();
    return this.db.kysely
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', l), eb(eb.fn('lower', ['email']), '=', l)]))
      .executeTakeFirst();
  }

  /** Validates and creates; duplicates → 409 with GitLab's messages; other problems → 400 {message:{field:[…]}}. */
  async create(input: CreateUserInput, trx?: Kysely<Database>): Promise<UserRow> {
    const s = await this.settings.get();
    const errors: Record<string, string[]> = {};
    validateUsername(input.username, errors);
    if (!input.name?.trim()) (errors.name ??= []).push("can't be blank");
    else if (input.name.length > 255) (errors.name ??= []).push('is too long (maximum is 255 characters)');
    if (!EMAIL_RE.test(input.email ?? '')) (errors.email ??= []).push('is invalid');
    else checkEmailPolicy(input.email, s, errors);
    if (input.password != null && input.password.length < 8) (errors.password ??= []).push('is too short (minimum is 8 characters)');
    if (input.password != null && input.password.length > 128) (errors.password ??= []).push('is too long (maximum is 128 characters)');
    if (Object.keys(errors).length) throw Errors.invalid(errors);

    if (await this.byUsername(input.username)) throw Errors.conflict('Username has already been taken');
    const emailTaken = await this.db.kysely.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', input.email.toLowerCase())).executeTakeFirst();
    if (emailTaken) throw Errors.conflict('Email has already been taken');

    const now = nowIso();
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    const run = async (k: Kysely<Database>) => {
      const user = await k
        .insertInto('users')
        .values({
          username: input.username,
          name: input.name,
          email: input.email,
          state: 'active',
          password_hash: passwordHash,
          password_set_at: passwordHash ? now : null,
          is_admin: input.is_admin ? 1 : 0,
          external: input.external ? 1 : 0,
          bot: 0,
          user_type: 'human',
          private_profile: (input.private_profile ?? s.user_defaults_to_private_profile) ? 1 : 0,
          bio: '',
          location: '',
          public_email: null,
          commit_email: null,
          job_title: '',
          pronouns: null,
          website_url: '',
          organization: '',
          messenger_a: '',
          network_a: '',
          network_b: '',
          chat_a: '',
          note: null,
          projects_limit: input.projects_limit ?? s.default_projects_limit,
          can_create_group: (input.can_create_group ?? s.can_create_group) ? 1 : 0,
          can_create_project: 1,
          two_factor_enabled: 0,
          theme_id: 3,
          color_scheme_id: 1,
          avatar_url: null,
          created_by_id: input.created_by_id ?? null,
          created_at: now,
          updated_at: now,
          confirmed_at: input.skip_confirmation === false ? null : now,
          last_sign_in_at: null,
          current_sign_in_at: null,
          last_sign_in_ip: null,
          current_sign_in_ip: null,
          sign_in_count: 0,
          last_activity_on: null,
          failed_attempts: 0,
          locked_at: null,
          ...(input.extra ?? {}),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (input.identity) {
        await k.insertInto('identities').values({ user_id: user.id, provider: input.identity.provider, extern_uid: input.identity.extern_uid, saml_provider_id: null, created_at: now }).execute();
      }
      return user;
    };
    try {
      return trx ? await run(trx) : await this.db.kysely.transaction().execute(run);
    } catch (err) {
      if (isUniqueViolation(err)) {
        const msg = String((err as Error).message);
        if (/identities/.test(msg)) throw Errors.conflict('Identity has already been taken');
        throw Errors.conflict(/email/.test(msg) ? 'Email has already been taken' : 'Username has already been taken');
      }
      throw err;
    }
  }

  async setPassword(user: UserRow, password: string): Promise<void> {
    if (password.length < 8) throw Errors.invalid({ password: ['is too short (minimum is 8 characters)'] });
    const now = nowIso();
    await this.db.kysely
      .updateTable('users')
      .set({ password_hash: await hashPassword(password), password_set_at: now, updated_at: now, failed_attempts: 0, locked_at: null })
      .where('id', '=', user.id)
      .execute();
  }
}
