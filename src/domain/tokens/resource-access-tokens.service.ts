// Project and group access tokens (GitLab's lib/api/resource_access_tokens.rb, ResourceAccessTokens::CreateService
// and RevokeService, ProjectAccessTokens::/GroupAccessTokens::RotateService). Each token is a personal access
// token of its own bot user (user_type project_bot, `project_<id>_bot_<hex>` / `group_<id>_bot_<hex>`), who is a
// member of the project or group at the token's access level: the token authenticates wherever a personal
// access token does, with the bot's membership as its reach. Creating one writes the bot, its membership and its
// token in one transaction (nothing is left behind when a step fails); revoking deletes the bot, its
// membership and tokens with it (GitLab deletes it in a background job). Managing needs
// manage_project_access_tokens (project Maintainer+) or manage_group_access_tokens (group Owner), or an
// administrator; nobody grants a level above their own.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, MemberRow, PatRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import { todayDate } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { ACCESS_LEVELS } from '../core/roles.ts';
import type { FeatureDeps } from '../deps.ts';
import type { MembersService, MemberSource } from '../members/members.service.ts';
import { API_SCOPES, REPOSITORY_SCOPES } from './scopes.ts';
import {
  defaultExpiry,
  fullMessages,
  maxLifetimeDays,
  parseId,
  pastExpiryErrors,
  toView,
  type TokensService,
  type TokenQuery,
  type TokenView,
} from './tokens.service.ts';

/** Gitlab::Auth.resource_bot_scopes: every scope a user may hold but read_user (no registry here). */
export const RESOURCE_BOT_SCOPES: readonly string[] = [...API_SCOPES, ...REPOSITORY_SCOPES].filter((s) => s !== 'read_user');
/** Gitlab::Access.options_with_owner */
export const RESOURCE_ACCESS_LEVELS = [10, 20, 30, 40, 50] as const;

/** Grape's values checks of `scopes` and `access_level` (before the resource is looked up): the refusal, or null. */
export function resourceTokenParamError(input: { scopes: readonly string[]; access_level?: number }): string | null {
  if (input.scopes.some((s) => !RESOURCE_BOT_SCOPES.includes(s))) return 'scopes does not have a valid value';
  if (input.access_level !== undefined && !(RESOURCE_ACCESS_LEVELS as readonly number[]).includes(input.access_level)) {
    return 'access_level does not have a valid value';
  }
  return null;
}

export type ResourceKind = 'project' | 'group';

export interface ResourceTokenInput {
  name: string;
  scopes: string[];
  /** YYYY-MM-DD */
  expires_at?: string;
  description?: string;
  access_level?: number;
}

/** A token with the bot's access level in the resource (Entities::ResourceAccessToken). */
export interface ResourceTokenView extends TokenView {
  accessLevel: number;
}

export interface ResourceTokenFilters {
  state?: 'active' | 'inactive';
  revoked?: boolean;
}

export class ResourceAccessTokensService {
  constructor(
    private readonly deps: FeatureDeps,
    private readonly tokens: TokensService,
    private readonly members: MembersService,
  ) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /** find_project! / find_group!: "404 Project Not Found" / "404 Group Not Found" when unseen. */
  async resource(actor: Actor, kind: ResourceKind, id: string): Promise<MemberSource> {
    if (kind === 'project') {
      const r = await this.deps.resolve.project(actor, id);
      return { type: 'Project', ...r };
    }
    const r = await this.deps.resolve.group(actor, id);
    return { type: 'Group', ...r };
  }

  /** read/destroy_resource_access_tokens. */
  mayManage(s: MemberSource): boolean {
    return s.type === 'Project' ? s.access.abilities.has('manage_project_access_tokens') : s.access.abilities.has('manage_group_access_tokens');
  }

  /** create/manage_resource_access_tokens: as mayManage, but never for a bot (`project_bot_access` prevents them). */
  mayCreate(actor: Actor, s: MemberSource): boolean {
    return this.mayManage(s) && actor.user?.user_type !== 'project_bot';
  }

  private kindOf(s: MemberSource): ResourceKind {
    return s.type === 'Project' ? 'project' : 'group';
  }

  private sourceKey(s: MemberSource): { type: 'Project' | 'Namespace'; id: number } {
    return s.type === 'Project' ? { type: 'Project', id: s.project.id } : { type: 'Namespace', id: s.group.id };
  }

  /** resource.bots: the project bots among the resource's direct members. */
  private botIds(s: MemberSource) {
    const key = this.sourceKey(s);
    return this.db
      .selectFrom('members')
      .innerJoin('users', 'users.id', 'members.user_id')
      .select('members.user_id')
      .where('members.source_type', '=', key.type)
      .where('members.source_id', '=', key.id)
      .where('users.user_type', '=', 'project_bot');
  }

  /** The highest level a caller holds in the resource (an administrator counts as an Owner). */
  private callerLevel(actor: Actor, s: MemberSource): number {
    return actor.isAdmin ? ACCESS_LEVELS.OWNER : s.access.level;
  }

  /** GET …/access_tokens: "401 Unauthorized" for a caller who may not manage them. */
  listQuery(s: MemberSource, f: ResourceTokenFilters): TokenQuery {
    let q: TokenQuery = this.db.selectFrom('personal_access_tokens').selectAll().where('user_id', 'in', this.botIds(s)).where('impersonation', '=', 0);
    const today = todayDate();
    if (f.state === 'active') q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today)]));
    if (f.state === 'inactive') q = q.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', today)]));
    if (f.revoked !== undefined) q = q.where('revoked', '=', f.revoked ? 1 : 0);
    return q.orderBy('id', 'asc');
  }

  /** The bots' levels in the resource, by user id. */
  async levels(s: MemberSource, userIds: number[]): Promise<Map<number, number>> {
    if (!userIds.length) return new Map();
    const key = this.sourceKey(s);
    const rows = await this.db
      .selectFrom('members')
      .select(['user_id', 'access_level'])
      .where('source_type', '=', key.type)
      .where('source_id', '=', key.id)
      .where('user_id', 'in', userIds)
      .execute();
    return new Map(rows.map((r) => [r.user_id, r.access_level]));
  }

  async views(s: MemberSource, rows: PatRow[]): Promise<ResourceTokenView[]> {
    const levels = await this.levels(s, [...new Set(rows.map((r) => r.user_id))]);
    return rows.map((r) => ({ ...toView(r), accessLevel: levels.get(r.user_id) ?? 0 }));
  }

  /** find_token: a token of one of the resource's bots, or undefined. */
  async find(s: MemberSource, tokenId: string): Promise<PatRow | undefined> {
    const id = parseId(tokenId);
    if (id === null) return undefined;
    return this.db
      .selectFrom('personal_access_tokens')
      .selectAll()
      .where('id', '=', id)
      .where('impersonation', '=', 0)
      .where('user_id', 'in', this.botIds(s))
      .executeTakeFirst();
  }

  /** GET …/access_tokens/:token_id: 401 for a caller who may not, "404 <kind> Access Token Not Found". */
  async get(s: MemberSource, tokenId: string): Promise<ResourceTokenView> {
    if (!this.mayManage(s)) throw Errors.unauthorized();
    const row = await this.find(s, tokenId);
    if (!row) throw Errors.notFound(`${this.kindOf(s)} Access Token`);
    return (await this.views(s, [row]))[0];
  }

  /**
   * POST …/access_tokens (ResourceAccessTokens::CreateService): refusals are 400 "Bad request - <message>";
   * scopes and access_level are checked by the route (Grape's values). Without expires_at the token lives
   * as long as the settings allow when expiry is required, else forever.
   */
  async create(actor: Actor, s: MemberSource, input: ResourceTokenInput): Promise<ResourceTokenView> {
    const kind = this.kindOf(s);
    if (!this.mayCreate(actor, s)) throw Errors.badRequest(`User does not have permission to create ${kind} access token`);
    const level = input.access_level ?? ACCESS_LEVELS.MAINTAINER;
    if (level > this.callerLevel(actor, s)) throw Errors.badRequest('Access level of the token contains permissions not held by the creating user');
    const settings = await this.deps.settings.get();
    if (settings.disable_personal_access_tokens) throw Errors.badRequest('Not permitted to create');
    const past = pastExpiryErrors(input.expires_at);
    if (past) throw Errors.badRequest(fullMessages(past));
    const expiresAt = input.expires_at ?? (settings.require_personal_access_token_expiry ? defaultExpiry(settings) : null);
    const tokenInput = { name: input.name, description: input.description ?? null, scopes: input.scopes, expires_at: expiresAt, impersonation: false };
    // the token's own validations, before anything is written (CreateService deletes the bot when they fail)
    const errors = this.tokens.validateInput({ is_admin: 0 }, tokenInput, settings.require_personal_access_token_expiry, maxLifetimeDays(settings));
    if (Object.keys(errors).length) throw Errors.badRequest(fullMessages(errors));
    const resourceId = s.type === 'Project' ? s.project.id : s.group.id;
    const username = `${kind}_${resourceId}_bot_${crypto.randomBytes(16).toString('hex')}`;
    const host = new URL(this.deps.externalUrl).hostname;
    return this.db.transaction().execute(async (trx) => {
      const bot = await this.deps.users.createBot(trx, {
        username,
        name: input.name,
        email: `${username}@noreply.${host}`,
        external: actor.user?.external === 1,
      });
      const member: MemberRow = await this.members.addBot(trx, actor, s, bot, level);
      const view = await this.tokens.create(bot, tokenInput, trx);
      return { ...view, accessLevel: member.access_level };
    });
  }

  /**
   * DELETE …/access_tokens/:token_id (RevokeService): "404 <kind> Access Token Not Found", then "400 Bad
   * request - <caller> cannot delete <bot>" for a caller who may not. The token is revoked and its bot deleted
   * (its membership and tokens go with it).
   */
  async revoke(actor: Actor, s: MemberSource, tokenId: string): Promise<void> {
    const row = await this.find(s, tokenId);
    if (!row) throw Errors.notFound(`${this.kindOf(s)} Access Token`);
    const bot = await this.deps.users.byId(row.user_id);
    if (!bot) throw Errors.badRequest('Failed to find bot user');
    if (!this.mayManage(s)) throw Errors.badRequest(`${actor.user?.name ?? ''} cannot delete ${bot.name}`);
    await this.tokens.revoke(row);
    await this.deps.users.remove(actor, bot);
  }

  /**
   * POST …/access_tokens/:token_id/rotate: a caller who may not manage the tokens, or a token the resource does
   * not have, is 401 (404 for administrators); a token whose bot holds a level above the caller's is 400.
   * The old token is revoked and a new one with the same name, scopes and bot is returned.
   */
  async rotate(actor: Actor, s: MemberSource, tokenId: string, expiresAt: string | undefined): Promise<ResourceTokenView> {
    const row = this.mayCreate(actor, s) ? await this.find(s, tokenId) : undefined;
    if (!row) throw actor.isAdmin ? Errors.notFound() : Errors.unauthorized();
    const level = (await this.levels(s, [row.user_id])).get(row.user_id) ?? 0;
    if (level > this.callerLevel(actor, s)) throw Errors.badRequest('Not eligible to rotate token with access level higher than the user');
    const bot = await this.deps.users.byId(row.user_id);
    if (!bot) throw Errors.unauthorized();
    const view = await this.tokens.rotate(row, bot, expiresAt);
    return { ...view, accessLevel: level };
  }
}
