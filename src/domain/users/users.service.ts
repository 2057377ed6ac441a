// Users: creation and updates with GitLab's validations, lookups, the list for a viewer, state changes
// (block, unblock, deactivate, activate), deletion and custom attributes.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database, IdentityRow, UserRow, UserUpdate } from '../../db/schema.ts';
import { ciEquals, isInt32, isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { recordSystemEvent, userPayload } from '../core/system-events.ts';
import { removeRepositories } from '../projects/project-destroy.ts';
import { keepDeployKeysOf } from '../keys/deploy-keys.service.ts';
import { recordKeyDestroyEventsOf } from '../keys/key-events.ts';
import type { RepositoryStore } from '../../git/storage.ts';
import { createPersonalNamespace, deletePersonalProjects, personalNamespaceIds, renamePersonalNamespace } from './personal-namespace.ts';
import { hashPassword, randomToken } from '../../lib/secrets.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import type { Settings } from '../core/settings-definitions.ts';
import {
  filterUsers,
  isBlocked,
  isInternal,
  orderBySearchRelevance,
  orderUsers,
  type SortDirection,
  type UserFilters,
  type UserOrder,
  type UserOrderColumn,
  type UserQuery,
} from './users-query.ts';
import { basicByIds, type UserBasicRow } from '../core/user-columns.ts';

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
/** Paths GitLab keeps for itself at the top level, and `git` (the translation API's repository exports). */
const RESERVED = new Set([
  '-',
  'git',
  'api',
  'assets',
  'admin',
  'users',
  'groups',
  'help',
  'oauth',
  'dashboard',
  'explore',
  'search',
  'projects',
  'public',
  'uploads',
  'health_check',
  'favicon.ico',
  'robots.txt',
  // the translation pages (Weblate's URLs)
  'translate',
  'languages',
  'engage',
]);

export function validateUsername(username: string, errors: Record<string, string[]>): void {
  const push = (m: string): void => void (errors.username ??= []).push(m);
  if (!username) {
    push("can't be blank");
    return;
  }
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

const INT_MAX = 2_147_483_647;
/** deactivate_dormant_users_period: GitLab's default; not an application setting here yet. */
export const DORMANT_DAYS = 90;

const present = (v: string | undefined | null): v is string => typeof v === 'string' && v.trim() !== '';

/** User#no_recent_activity?: the later of last_activity_on and current_sign_in_at is old enough (or absent). */
export function isDormant(user: UserRow, now = Date.now()): boolean {
  const times: number[] = [];
  if (user.last_activity_on) times.push(Date.parse(`${user.last_activity_on}T00:00:00.000Z`));
  if (user.current_sign_in_at) times.push(Date.parse(user.current_sign_in_at));
  return !times.length || Math.max(...times) <= now - DORMANT_DAYS * 86_400_000;
}

/** The parameters GitLab removes from GET /users for non-administrators. */
/** created_after and created_before are filters for everyone (spec "Filters for everyone"). */
export const ADMIN_ONLY_LIST_PARAMS = ['order_by', 'sort', 'two_factor', 'without_projects'] as const;

export interface ListUsersInput extends UserFilters {
  order_by?: UserOrderColumn;
  sort?: SortDirection;
  with_custom_attributes?: boolean;
}

export interface UserList {
  /** filtered and ordered; the caller picks the columns its shape needs */
  query: UserQuery;
  /** the ordering a cursor can walk; null when the list is ordered by search relevance */
  order: UserOrder | null;
  admin: boolean;
  withCustomAttributes: boolean;
}

/** The writable profile fields of POST and PUT /users, as the API names them. */
export interface UserProfileInput {
  bio?: string;
  location?: string;
  public_email?: string;
  commit_email?: string;
  job_title?: string;
  pronouns?: string;
  website_url?: string;
  organization?: string;
  note?: string;
  theme_id?: number;
  color_scheme_id?: number;
  messenger_a?: string;
  network_a?: string;
  network_b?: string;
  chat_a?: string;
}

export interface AdminCreateUserInput extends UserProfileInput {
  email: string;
  username: string;
  name: string;
  password?: string;
  reset_password?: boolean;
  force_random_password?: boolean;
  skip_confirmation?: boolean;
  admin?: boolean;
  external?: boolean;
  private_profile?: boolean | null;
  projects_limit?: number;
  can_create_group?: boolean;
  extern_uid?: string;
  provider?: string;
}

export interface UpdateUserInput extends UserProfileInput {
  email?: string;
  username?: string;
  name?: string;
  password?: string;
  admin?: boolean;
  external?: boolean;
  private_profile?: boolean | null;
  projects_limit?: number;
  can_create_group?: boolean;
  extern_uid?: string;
  provider?: string;
}

const PROFILE_TEXT = ['bio', 'location', 'job_title', 'website_url', 'organization', 'messenger_a', 'network_a', 'network_b', 'chat_a'] as const;

/** API profile fields → column values; blank optional addresses and pronouns are stored as null. */
function profileChanges(input: UserProfileInput): UserUpdate {
  const out: UserUpdate = {};
  for (const k of PROFILE_TEXT) if (input[k] !== undefined) out[k] = input[k];
  for (const k of ['public_email', 'commit_email', 'pronouns'] as const) if (input[k] !== undefined) out[k] = input[k] || null;
  if (input.note !== undefined) out.note = input.note;
  if (input.theme_id !== undefined) out.theme_id = input.theme_id;
  if (input.color_scheme_id !== undefined) out.color_scheme_id = input.color_scheme_id;
  return out;
}

export function validateName(name: string | undefined, errors: Record<string, string[]>): void {
  if (!name?.trim()) (errors.name ??= []).push("can't be blank");
  else if (name.length > 255) (errors.name ??= []).push('is too long (maximum is 255 characters)');
}

/**
 * A password change signs the user out everywhere: their web sessions end (Devise's session is bound to
 * the password, so GitLab's do too). Access tokens stay: they are credentials of their own.
 */
async function endSessions(trx: Kysely<Database>, userId: number): Promise<void> {
  await trx.deleteFrom('web_sessions').where('user_id', '=', userId).execute();
}

export function validatePassword(password: string, errors: Record<string, string[]>): void {
  if (password.length < 8) (errors.password ??= []).push('is too short (minimum is 8 characters)');
  if (password.length > 128) (errors.password ??= []).push('is too long (maximum is 128 characters)');
}

/** Length limits of GitLab's user_details columns. */
const MAX_LENGTH: Partial<Record<keyof UserUpdate, number>> = {
  bio: 255,
  job_title: 200,
  pronouns: 50,
  location: 500,
  organization: 500,
  website_url: 500,
  messenger_a: 500,
  network_a: 500,
  network_b: 500,
  chat_a: 500,
};
/** Gitlab::Themes and Gitlab::ColorSchemes ids. */
const THEME_IDS = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
const COLOR_SCHEME_IDS = new Set([1, 2, 3, 4, 5, 6]);

/**
 * Profile and limit fields, with GitLab's model messages. `email` is the user's (new) primary address:
 * public and commit email must be an address the user owns, and only the primary one is known here.
 */
export function validateProfile(v: Partial<UserUpdate>, email: string | undefined, errors: Record<string, string[]>): void {
  const push = (field: string, msg: string) => (errors[field] ??= []).push(msg);
  for (const [field, max] of Object.entries(MAX_LENGTH)) {
    const value = (v as Record<string, unknown>)[field];
    if (typeof value === 'string' && value.length > max!) push(field, `is too long (maximum is ${max} characters)`);
  }
  if (v.projects_limit !== undefined) {
    if (v.projects_limit! < 0) push('projects_limit', 'must be greater than or equal to 0');
    else if (v.projects_limit! > INT_MAX) push('projects_limit', `must be less than or equal to ${INT_MAX}`);
  }
  if (v.theme_id !== undefined && !THEME_IDS.has(v.theme_id!)) push('theme_id', `${v.theme_id} is not a valid theme`);
  if (v.color_scheme_id !== undefined && !COLOR_SCHEME_IDS.has(v.color_scheme_id!)) push('color_scheme_id', `${v.color_scheme_id} is not a valid color scheme`);
  const owned = (address: string) => !!email && address.toLowerCase() === email.toLowerCase();
  if (v.public_email && !owned(v.public_email)) push('public_email', 'is not an email you own');
  if (v.commit_email && !owned(v.commit_email)) push('commit_email', 'is not an email you own');
}

export class UsersService {
  constructor(
    private readonly db: Db,
    private readonly settings: SettingsService,
    private readonly repos: RepositoryStore,
  ) {}

  async byId(id: number): Promise<UserRow | undefined> {
    if (!isInt32(id)) return undefined; // no such id (PostgreSQL would refuse to compare it)
    return this.db.kysely.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The id of the user's personal namespace (undefined for a user without one). */
  async personalNamespaceId(userId: number): Promise<number | undefined> {
    return (await personalNamespaceIds(this.db.kysely, [userId])).get(userId);
  }

  async byUsername(username: string): Promise<UserRow | undefined> {
    return this.db.kysely
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
      .executeTakeFirst();
  }

  async byLogin(login: string): Promise<UserRow | undefined> {
    const l = login.toLowerCase();
    return this.db.kysely
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.or([eb(eb.fn('lower', ['username']), '=', l), eb(eb.fn('lower', ['email']), '=', l)]))
      .executeTakeFirst();
  }

  /**
   * Validates and creates. As GitLab's POST /users: a duplicate email or username → 409 with GitLab's
   * message (checked first); other problems → 400 {message:{field:[…]}}, profile fields included.
   */
  async create(input: CreateUserInput, trx?: Kysely<Database>): Promise<UserRow> {
    const s = await this.settings.get();
    if (input.email && (await this.emailTaken(input.email))) throw Errors.conflict('Email has already been taken');
    if (input.username && (await this.byUsername(input.username))) throw Errors.conflict('Username has already been taken');
    const errors: Record<string, string[]> = {};
    validateUsername(input.username, errors);
    validateName(input.name, errors);
    if (!EMAIL_RE.test(input.email ?? '')) (errors.email ??= []).push('is invalid');
    else checkEmailPolicy(input.email, s, errors);
    if (input.password != null) validatePassword(input.password, errors);
    if (input.projects_limit !== undefined) validateProfile({ projects_limit: input.projects_limit }, input.email, errors);
    if (input.extra) validateProfile(input.extra, input.email, errors);
    if (input.identity) await this.checkIdentityFree(input.identity, null, errors);
    if (Object.keys(errors).length) throw Errors.invalid(errors);

    const now = nowIso();
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    const run = (k: Kysely<Database>) => this.insertUser(k, input, s, passwordHash, now);
    try {
      return trx ? await run(trx) : await this.db.kysely.transaction().execute(run);
    } catch (err) {
      throw uniqueViolationError(err);
    }
  }

  /** The rows of a new user (the user, an identity, the personal namespace) and the user_create event. */
  private async insertUser(k: Kysely<Database>, input: CreateUserInput, s: Settings, passwordHash: string | null, now: string): Promise<UserRow> {
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
      await k
        .insertInto('identities')
        .values({ user_id: user.id, provider: input.identity.provider, extern_uid: input.identity.extern_uid, saml_provider_id: null, created_at: now })
        .execute();
    }
    await createPersonalNamespace(k, user, now);
    await recordSystemEvent(k, userPayload('user_create', user));
    return user;
  }

  /**
   * A project or group access token's bot user (user_type project_bot, confirmed, no password), inside the
   * caller's transaction. Its username and e-mail address are random, so they need no prior checks.
   */
  async createBot(trx: Kysely<Database>, input: { username: string; name: string; email: string; external: boolean }): Promise<UserRow> {
    const s = await this.settings.get();
    try {
      return await this.insertUser(
        trx,
        { ...input, skip_confirmation: true, projects_limit: 0, can_create_group: false, private_profile: false, extra: { bot: 1, user_type: 'project_bot' } },
        s,
        null,
        nowIso(),
      );
    } catch (err) {
      throw uniqueViolationError(err);
    }
  }

  /** `hearth admin reset-password`: the new password, and the user's web sessions end (as any password change). */
  async setPassword(user: UserRow, password: string): Promise<void> {
    if (password.length < 8) throw Errors.invalid({ password: ['is too short (minimum is 8 characters)'] });
    const now = nowIso();
    const hash = await hashPassword(password);
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set({ password_hash: hash, password_set_at: now, updated_at: now, failed_attempts: 0, locked_at: null })
        .where('id', '=', user.id)
        .execute();
      await endSessions(trx, user.id);
    });
  }

  async emailTaken(email: string, exceptId?: number): Promise<boolean> {
    let q = this.db.kysely.selectFrom('users').select('id').where(ciEquals('email', email));
    if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
    return !!(await q.executeTakeFirst());
  }

  private async usernameTaken(username: string, exceptId: number): Promise<boolean> {
    return !!(await this.db.kysely.selectFrom('users').select('id').where(ciEquals('username', username)).where('id', '!=', exceptId).executeTakeFirst());
  }

  /** Identity extern_uid is unique per provider, case-insensitively (GitLab's Identity validation). */
  private async checkIdentityFree(identity: { provider: string; extern_uid: string }, userId: number | null, errors: Record<string, string[]>): Promise<void> {
    let q = this.db.kysely.selectFrom('identities').select('id').where('provider', '=', identity.provider).where(ciEquals('extern_uid', identity.extern_uid));
    if (userId !== null) q = q.where('user_id', '!=', userId);
    if (await q.executeTakeFirst()) (errors['identities.extern_uid'] ??= []).push('has already been taken');
  }

  /** The user, or 404 "User Not Found"; ids beyond the integer column range simply do not exist. */
  async mustFind(id: number): Promise<UserRow> {
    const user = id >= 1 && id <= INT_MAX ? await this.byId(id) : undefined;
    if (!user) throw Errors.notFound('User');
    return user;
  }

  // ---- lists -------------------------------------------------------------------------------

  /**
   * GET /users for this viewer (lib/api/users.rb): the access rules, the parameters GitLab strips for
   * non-administrators, then the filtered and ordered query.
   */
  list(actor: Actor, input: ListUsersInput): UserList {
    const admin = actor.isAdmin;
    if (present(input.extern_uid) && present(input.provider)) {
      if (!actor.user) throw Errors.unauthorized();
      if (!admin) throw Errors.forbidden();
    }
    const f: ListUsersInput = { ...input };
    if (!admin) {
      for (const k of ADMIN_ONLY_LIST_PARAMS) delete f[k];
      // Ignored for non-administrators by UsersFinder (admins) and the custom attribute ability.
      delete f.admins;
      delete f.custom_attributes;
      delete f.with_custom_attributes;
    }
    if (!actor.user && !present(f.username)) throw Errors.forbidden('Not authorized to access /api/v4/users');
    let query = filterUsers(this.db.kysely, this.db.dialect, f, admin);
    let order: UserOrder | null = null;
    if (admin) order = { column: f.order_by ?? 'id', direction: f.sort ?? 'desc' };
    else if (!present(f.search)) order = { column: 'id', direction: 'desc' };
    query = order ? orderUsers(query, order) : orderBySearchRelevance(query, f.search!);
    return { query, order, admin, withCustomAttributes: admin && !!f.with_custom_attributes };
  }

  /** GET /users/:id: signed-in callers only (403 "Not authorized!" otherwise, as GitLab). */
  async findForViewer(actor: Actor, id: number): Promise<UserRow> {
    if (!actor.user) throw Errors.forbidden('Not authorized!');
    return this.mustFind(id);
  }

  /** Identities of these users, one query. */
  async identitiesOf(userIds: number[]): Promise<Map<number, IdentityRow[]>> {
    const out = new Map<number, IdentityRow[]>();
    if (!userIds.length) return out;
    const rows = await this.db.kysely.selectFrom('identities').selectAll().where('user_id', 'in', userIds).orderBy('id').execute();
    for (const r of rows) {
      const list = out.get(r.user_id);
      if (list) list.push(r);
      else out.set(r.user_id, [r]);
    }
    return out;
  }

  /** Users by id with the basic columns (creators, authors, deployers …), one query. */
  basicByIds(ids: Iterable<number | null>): Promise<Map<number, UserBasicRow>> {
    return basicByIds(this.db.kysely, ids);
  }

  // ---- administrator writes ----------------------------------------------------------------

  /** POST /users by an administrator (Users::AuthorizedCreateService). */
  async createByAdmin(actor: Actor, input: AdminCreateUserInput): Promise<UserRow> {
    const random = input.reset_password || input.force_random_password;
    const password = random ? randomToken(32) : input.password;
    const identity = present(input.extern_uid) && present(input.provider) ? { provider: input.provider!, extern_uid: input.extern_uid! } : null;
    return this.create({
      username: input.username,
      name: input.name,
      email: input.email,
      password,
      is_admin: input.admin,
      external: input.external,
      private_profile: input.private_profile ?? undefined,
      projects_limit: input.projects_limit,
      can_create_group: input.can_create_group,
      skip_confirmation: input.skip_confirmation,
      created_by_id: actor.user?.id ?? null,
      extra: profileChanges(input),
      identity,
    });
  }

  /** PUT /users/:id (Users::UpdateService): every field optional; identity upserted by provider. */
  async update(actor: Actor, id: number, input: UpdateUserInput): Promise<UserRow> {
    void actor;
    const user = await this.mustFind(id);
    if (input.email !== undefined && (await this.emailTaken(input.email, user.id))) throw Errors.conflict('Email has already been taken');
    if (input.username !== undefined && (await this.usernameTaken(input.username, user.id))) throw Errors.conflict('Username has already been taken');

    const errors: Record<string, string[]> = {};
    const changes: UserUpdate = profileChanges(input);
    if (input.username !== undefined) {
      validateUsername(input.username, errors);
      changes.username = input.username;
    }
    if (input.name !== undefined) {
      validateName(input.name, errors);
      changes.name = input.name;
    }
    if (input.email !== undefined) {
      if (!EMAIL_RE.test(input.email)) (errors.email ??= []).push('is invalid');
      changes.email = input.email;
    }
    if (input.password !== undefined) validatePassword(input.password, errors);
    if (input.admin !== undefined) changes.is_admin = input.admin ? 1 : 0;
    if (input.external !== undefined) changes.external = input.external ? 1 : 0;
    if (input.can_create_group !== undefined) changes.can_create_group = input.can_create_group ? 1 : 0;
    if (input.private_profile !== undefined) {
      const value = input.private_profile ?? (await this.settings.get()).user_defaults_to_private_profile;
      changes.private_profile = value ? 1 : 0;
    }
    if (input.projects_limit !== undefined) changes.projects_limit = input.projects_limit;
    validateProfile(changes, changes.email ?? user.email, errors);
    const identity = present(input.extern_uid) && present(input.provider) ? { provider: input.provider!, extern_uid: input.extern_uid! } : null;
    if (identity) await this.checkIdentityFree(identity, user.id, errors);
    if (Object.keys(errors).length) throw Errors.invalid(errors);

    const now = nowIso();
    if (input.password !== undefined) {
      changes.password_hash = await hashPassword(input.password);
      changes.password_set_at = now;
    }
    changes.updated_at = now;
    try {
      return await this.db.kysely.transaction().execute(async (trx) => {
        const updated = await trx.updateTable('users').set(changes).where('id', '=', user.id).returningAll().executeTakeFirstOrThrow();
        if (changes.password_hash !== undefined) await endSessions(trx, user.id);
        if (changes.username !== undefined && changes.username !== user.username) {
          await renamePersonalNamespace(trx, updated, user.username, now);
          await recordSystemEvent(trx, userPayload('user_rename', updated, user.username));
        }
        if (changes.name !== undefined)
          await trx.updateTable('namespaces').set({ name: changes.name, updated_at: now }).where('owner_id', '=', user.id).execute();
        if (identity) {
          const existing = await trx
            .selectFrom('identities')
            .select('id')
            .where('user_id', '=', user.id)
            .where('provider', '=', identity.provider)
            .executeTakeFirst();
          if (existing) await trx.updateTable('identities').set({ extern_uid: identity.extern_uid }).where('id', '=', existing.id).execute();
          else
            await trx
              .insertInto('identities')
              .values({ user_id: user.id, provider: identity.provider, extern_uid: identity.extern_uid, saml_provider_id: null, created_at: now })
              .execute();
        }
        return updated;
      });
    } catch (err) {
      // A concurrent writer took the value between the check and the write.
      throw uniqueViolationError(err);
    }
  }

  /**
   * DELETE /users/:id. GitLab deletes in a background job; here the row goes at once. Tokens, sessions,
   * identities and custom attributes go with it (foreign keys); users it created keep created_by null.
   * `hard_delete` is accepted: there are no contributions to move to a ghost user yet.
   */
  async remove(actor: Actor, user: UserRow): Promise<void> {
    void actor;
    const projects = await this.db.kysely.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ created_by_id: null }).where('created_by_id', '=', user.id).execute();
      await keepDeployKeysOf(trx, user.id);
      await recordKeyDestroyEventsOf(trx, user.id);
      const deleted = await deletePersonalProjects(trx, user.id);
      await trx.deleteFrom('users').where('id', '=', user.id).execute();
      await recordSystemEvent(trx, userPayload('user_destroy', user));
      return deleted;
    });
    removeRepositories(this.repos, projects);
  }

  private async setState(user: UserRow, state: string): Promise<void> {
    await this.db.kysely.updateTable('users').set({ state, updated_at: nowIso() }).where('id', '=', user.id).execute();
  }

  /** POST /users/:id/block → true; null when already blocked (GitLab's `break`). Tokens stop working at once. */
  async block(actor: Actor, id: number): Promise<boolean | null> {
    const user = await this.mustFind(id);
    if (user.state === 'ldap_blocked') throw Errors.forbidden('LDAP blocked users cannot be modified by the API');
    if (actor.user?.id === user.id) throw Errors.forbidden('The API initiating user cannot be blocked by the API');
    if (isBlocked(user)) return null;
    if (isInternal(user)) throw Errors.refused('An internal user cannot be blocked', 403);
    await this.setState(user, 'blocked');
    return true;
  }

  /** POST /users/:id/unblock → true, or false when the user was not blocked (the state transition fails). */
  async unblock(actor: Actor, id: number): Promise<boolean> {
    void actor;
    const user = await this.mustFind(id);
    if (user.state === 'ldap_blocked') throw Errors.forbidden('LDAP blocked users cannot be unblocked by the API');
    if (user.state === 'deactivated') throw Errors.forbidden('Deactivated users cannot be unblocked by the API');
    if (!isBlocked(user)) return false;
    await this.setState(user, 'active');
    return true;
  }

  /** POST /users/:id/deactivate (Users::DeactivateService) → true; null when already deactivated. */
  async deactivate(actor: Actor, id: number, now = Date.now()): Promise<boolean | null> {
    void actor;
    const user = await this.mustFind(id);
    if (user.state === 'deactivated') return null;
    if (isBlocked(user)) throw Errors.refused('Error occurred. A blocked user cannot be deactivated', 403);
    if (isInternal(user)) throw Errors.refused('Internal users cannot be deactivated', 403);
    if (!isDormant(user, now)) {
      throw Errors.refused(`The user you are trying to deactivate has been active in the past ${DORMANT_DAYS} days and cannot be deactivated`, 403);
    }
    await this.setState(user, 'deactivated');
    return true;
  }

  /** POST /users/:id/activate → true; false when the user was not deactivated. */
  async activate(actor: Actor, id: number): Promise<boolean> {
    void actor;
    const user = await this.mustFind(id);
    if (isBlocked(user)) throw Errors.forbidden('A blocked user must be unblocked to be activated');
    if (user.state !== 'deactivated') return false;
    await this.setState(user, 'active');
    return true;
  }

  /**
   * POST /users/:id/ban and /unban (Users::BanService, Users::UnbanService): only an active user can be
   * banned and only a banned one unbanned — otherwise 403 "You cannot ban blocked users." with the
   * user's state. A banned user is blocked: their credentials are refused as a blocked user's are.
   */
  async ban(actor: Actor, id: number, action: 'ban' | 'unban'): Promise<true> {
    void actor;
    const user = await this.mustFind(id);
    const from = action === 'ban' ? 'active' : 'banned';
    if (user.state !== from) throw Errors.refused(`You cannot ${action} ${user.state} users.`, 403);
    await this.setState(user, action === 'ban' ? 'banned' : 'active');
    return true;
  }

  /** DELETE /users/:id/identities/:provider: 404 User or Identity Not Found. */
  async removeIdentity(actor: Actor, id: number, provider: string): Promise<void> {
    void actor;
    const user = await this.mustFind(id);
    const res = await this.db.kysely.deleteFrom('identities').where('user_id', '=', user.id).where('provider', '=', provider).executeTakeFirst();
    if (!Number(res.numDeletedRows)) throw Errors.notFound('Identity');
  }
}

/** A unique index that refused a write (a concurrent writer won the race) → GitLab's answer; anything else unchanged. */
function uniqueViolationError(err: unknown): unknown {
  if (!isUniqueViolation(err)) return err;
  const msg = String((err as Error).message);
  if (/identities/.test(msg)) return Errors.invalid({ 'identities.extern_uid': ['has already been taken'] });
  return Errors.conflict(/email/.test(msg) ? 'Email has already been taken' : 'Username has already been taken');
}
