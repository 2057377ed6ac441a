// Wire shapes of users (GitLab's Entities::UserBasic, User, UserPublic, UserWithAdmin,
// UserDetailsWithAdmin). Which shape a caller gets depends on who asks; the functions below build
// exactly the fields of one shape, and the response schemas are the allow-list of what may leave.
import { Type, type Static } from 'typebox';
import type { IdentityRow, UserRow } from '../../../db/schema.ts';
import { isBot } from '../../../domain/users/users-query.ts';
import type { UserBasicRow, UserViewRow } from '../../../domain/core/user-columns.ts';
import type { Settings } from '../../../domain/core/settings-definitions.ts';
import { NullableInteger, NullableString, optionalAll } from '../schemas/common.ts';

/** What every entity function needs besides the row; built once per request. */
export interface UserViewContext {
  externalUrl: string;
  /** milliseconds since the epoch, for `locked` */
  now: number;
  /** how long a lock lasts (failed_login_attempts_unlock_period_in_minutes; Devise's 10 minutes by default) */
  unlockMs: number;
}

export function userViewContext(externalUrl: string, settings: Settings, now = Date.now()): UserViewContext {
  return { externalUrl, now, unlockMs: (settings.failed_login_attempts_unlock_period_in_minutes ?? 10) * 60_000 };
}

// ---- schemas ---------------------------------------------------------------------------------

const basicProps = {
  id: Type.Integer(),
  username: Type.String(),
  name: Type.String(),
  state: Type.String(),
  locked: Type.Boolean(),
  avatar_url: NullableString,
  web_url: Type.String(),
};

/** The shared user reference (author, created_by …). */
export const UserRefSchema = Type.Object(basicProps);
export const UserBasicSchema = UserRefSchema;

/** Entities::User: readable profiles only. */
const profileProps = {
  created_at: Type.String(),
  bio: Type.String(),
  location: Type.String(),
  public_email: NullableString,
  messenger_a: Type.String(),
  network_a: Type.String(),
  network_b: Type.String(),
  chat_a: Type.String(),
  website_url: Type.String(),
  organization: Type.String(),
  job_title: Type.String(),
  pronouns: NullableString,
  bot: Type.Boolean(),
  work_information: NullableString,
  followers: Type.Integer(),
  following: Type.Integer(),
  is_followed: Type.Boolean(),
  local_time: NullableString,
};

export const IdentitySchema = Type.Object({ provider: Type.String(), extern_uid: Type.String(), saml_provider_id: NullableInteger });
export const CustomAttributeSchema = Type.Object({ key: Type.String(), value: Type.String() });

/** Entities::UserPublic: what users see of themselves. */
const selfProps = {
  last_sign_in_at: NullableString,
  confirmed_at: NullableString,
  last_activity_on: NullableString,
  email: Type.String(),
  theme_id: Type.Integer(),
  color_scheme_id: Type.Integer(),
  projects_limit: Type.Integer(),
  current_sign_in_at: NullableString,
  identities: Type.Array(IdentitySchema),
  can_create_group: Type.Boolean(),
  can_create_project: Type.Boolean(),
  two_factor_enabled: Type.Boolean(),
  external: Type.Boolean(),
  private_profile: Type.Boolean(),
  commit_email: NullableString,
};

/** Entities::UserWithAdmin / UserDetailsWithAdmin. */
const adminProps = {
  is_admin: Type.Boolean(),
  note: NullableString,
  namespace_id: NullableInteger,
  sign_in_count: Type.Integer(),
  current_sign_in_ip: NullableString,
  last_sign_in_ip: NullableString,
  // `type: ['object', 'null']` keeps the serialiser on its fast path (see schemas/common.ts).
  created_by: Type.Unsafe<UserRef | null>({ type: ['object', 'null'], properties: basicProps, required: Object.keys(basicProps) }),
  email_reset_offered_at: NullableString,
};

const ProfileSchema = Type.Object(profileProps);
const SelfSchema = Type.Object(selfProps);
const customAttributesProp = { custom_attributes: Type.Optional(Type.Array(CustomAttributeSchema)) };

/** Every field any viewer may get; the basic ones are always there. */
export const UserAnySchema = Type.Object({
  ...basicProps,
  ...optionalAll(profileProps),
  ...optionalAll(selfProps),
  ...optionalAll(adminProps),
  ...customAttributesProp,
});
export const UserAdminSchema = Type.Object({ ...basicProps, ...profileProps, ...selfProps, ...adminProps, ...customAttributesProp });

// ---- entity functions ------------------------------------------------------------------------

export interface UserRef {
  id: number;
  username: string;
  name: string;
  state: string;
  locked: boolean;
  avatar_url: string | null;
  web_url: string;
}

/** Any user shape (the viewer decides which fields are there). */
export type UserEntity = Static<typeof UserAnySchema>;
/** The administrator's shape: every field. */
export type UserAdminEntity = Static<typeof UserAdminSchema>;
type Profile = Static<typeof ProfileSchema>;
type SelfFields = Static<typeof SelfSchema>;

/** Devise's access_locked?: a lock that has not expired yet. */
function isLocked(row: Pick<UserRow, 'locked_at'>, ctx: UserViewContext): boolean {
  return row.locked_at !== null && Date.parse(row.locked_at) > ctx.now - ctx.unlockMs;
}

export function toUserRef(row: Omit<UserBasicRow, 'created_at' | 'updated_at'>, ctx: UserViewContext): UserRef {
  return {
    id: row.id,
    username: row.username,
    name: row.name,
    state: row.state,
    locked: isLocked(row, ctx),
    avatar_url: row.avatar_url,
    web_url: `${ctx.externalUrl}/${row.username}`,
  };
}

export const toUserBasic = toUserRef;

/** UsersHelper#work_information: "job title at organization", either alone, or null. */
export function workInformation(row: Pick<UserRow, 'job_title' | 'organization'>): string | null {
  if (row.job_title && row.organization) return `${row.job_title} at ${row.organization}`;
  return row.job_title || row.organization || null;
}

/**
 * Entities::User (GET /users/:id for non-administrators). `profile` is read_user_profile: false for a
 * private profile seen by someone else, who then gets only the basic fields.
 */
export function toUser(row: UserViewRow, ctx: UserViewContext, profile: boolean): UserRef | (UserRef & Profile) {
  return profile ? toUserProfile(row, ctx) : toUserRef(row, ctx);
}

/*
 * Each shape below is one object literal, not spreads of the smaller shapes: copying 40-odd properties
 * through spreads costs tens of microseconds per user, a flat literal well under one.
 */

function toUserProfile(row: UserViewRow, ctx: UserViewContext): UserRef & Profile {
  return {
    id: row.id,
    username: row.username,
    name: row.name,
    state: row.state,
    locked: isLocked(row, ctx),
    avatar_url: row.avatar_url,
    web_url: `${ctx.externalUrl}/${row.username}`,
    created_at: row.created_at,
    bio: row.bio,
    location: row.location,
    public_email: row.public_email,
    messenger_a: row.messenger_a,
    network_a: row.network_a,
    network_b: row.network_b,
    chat_a: row.chat_a,
    website_url: row.website_url,
    organization: row.organization,
    job_title: row.job_title,
    pronouns: row.pronouns,
    bot: isBot(row),
    work_information: workInformation(row),
    // Following users is not implemented: nobody follows anybody.
    followers: 0,
    following: 0,
    is_followed: false,
    // No time zone is stored for users.
    local_time: null,
  };
}

const toIdentity = (i: IdentityRow) => ({ provider: i.provider, extern_uid: i.extern_uid, saml_provider_id: i.saml_provider_id });

/** Entities::UserPublic (GET /user for oneself). */
export function toUserPublic(row: UserViewRow, ctx: UserViewContext, identities: IdentityRow[]): UserRef & Profile & SelfFields {
  return {
    id: row.id,
    username: row.username,
    name: row.name,
    state: row.state,
    locked: isLocked(row, ctx),
    avatar_url: row.avatar_url,
    web_url: `${ctx.externalUrl}/${row.username}`,
    created_at: row.created_at,
    bio: row.bio,
    location: row.location,
    public_email: row.public_email,
    messenger_a: row.messenger_a,
    network_a: row.network_a,
    network_b: row.network_b,
    chat_a: row.chat_a,
    website_url: row.website_url,
    organization: row.organization,
    job_title: row.job_title,
    pronouns: row.pronouns,
    bot: isBot(row),
    work_information: workInformation(row),
    followers: 0,
    following: 0,
    is_followed: false,
    local_time: null,
    ...selfFields(row, identities),
  };
}

/** UserPublic's own fields. */
function selfFields(row: UserViewRow, identities: IdentityRow[]): SelfFields {
  return {
    last_sign_in_at: row.last_sign_in_at,
    confirmed_at: row.confirmed_at,
    last_activity_on: row.last_activity_on,
    email: row.email,
    theme_id: row.theme_id,
    color_scheme_id: row.color_scheme_id,
    projects_limit: row.projects_limit,
    current_sign_in_at: row.current_sign_in_at,
    identities: identities.map(toIdentity),
    can_create_group: row.can_create_group === 1,
    can_create_project: row.can_create_project === 1 && row.projects_limit > 0,
    two_factor_enabled: row.two_factor_enabled === 1,
    external: row.external === 1,
    private_profile: row.private_profile === 1,
    // commit_email_or_default
    commit_email: row.commit_email ?? row.email,
  };
}

export interface AdminExtras {
  identities: IdentityRow[];
  /** the user's personal namespace */
  namespaceId: number | null;
  createdBy: UserBasicRow | null;
  /** present only when the caller asked with_custom_attributes=true */
  customAttributes?: { key: string; value: string }[];
}

/** Entities::UserWithAdmin / UserDetailsWithAdmin: lists and single users for administrators. */
export function toUserAdmin(row: UserViewRow, ctx: UserViewContext, extras: AdminExtras): UserAdminEntity {
  const entity: UserAdminEntity = {
    id: row.id,
    username: row.username,
    name: row.name,
    state: row.state,
    locked: isLocked(row, ctx),
    avatar_url: row.avatar_url,
    web_url: `${ctx.externalUrl}/${row.username}`,
    created_at: row.created_at,
    bio: row.bio,
    location: row.location,
    public_email: row.public_email,
    messenger_a: row.messenger_a,
    network_a: row.network_a,
    network_b: row.network_b,
    chat_a: row.chat_a,
    website_url: row.website_url,
    organization: row.organization,
    job_title: row.job_title,
    pronouns: row.pronouns,
    bot: isBot(row),
    work_information: workInformation(row),
    followers: 0,
    following: 0,
    is_followed: false,
    local_time: null,
    last_sign_in_at: row.last_sign_in_at,
    confirmed_at: row.confirmed_at,
    last_activity_on: row.last_activity_on,
    email: row.email,
    theme_id: row.theme_id,
    color_scheme_id: row.color_scheme_id,
    projects_limit: row.projects_limit,
    current_sign_in_at: row.current_sign_in_at,
    identities: extras.identities.map(toIdentity),
    can_create_group: row.can_create_group === 1,
    can_create_project: row.can_create_project === 1 && row.projects_limit > 0,
    two_factor_enabled: row.two_factor_enabled === 1,
    external: row.external === 1,
    private_profile: row.private_profile === 1,
    commit_email: row.commit_email ?? row.email,
    is_admin: row.is_admin === 1,
    note: row.note,
    namespace_id: extras.namespaceId,
    sign_in_count: row.sign_in_count,
    current_sign_in_ip: row.current_sign_in_ip,
    last_sign_in_ip: row.last_sign_in_ip,
    created_by: extras.createdBy ? toUserRef(extras.createdBy, ctx) : null,
    email_reset_offered_at: null,
  };
  if (extras.customAttributes) entity.custom_attributes = extras.customAttributes;
  return entity;
}
