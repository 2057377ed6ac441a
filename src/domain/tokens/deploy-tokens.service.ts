// Deploy tokens (GitLab's DeployToken, lib/api/deploy_tokens.rb, Projects::/Groups::DeployTokens::CreateService
// and DestroyService, DeployTokens::TokensFinder): a secret with a username that reads the repository of the
// project that holds it, or of every project under the group that holds it (subgroups included), over git's
// smart HTTP. Managing them needs manage_deploy_tokens (Maintainer+; administrators): 404 for a project or
// group the caller may not see, 403 for one they see. The secret (`gldt-…`) is shown once; only its salted
// digest is kept. DELETE destroys the row, as GitLab's DestroyService.
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database, DeployTokenRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { isInt32 } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { randomToken, safeEqual } from '../../lib/secrets.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { ResolvedGroup, ResolvedProject } from '../access/resolve.ts';
import type { FeatureDeps } from '../deps.ts';

/** DeployToken::AVAILABLE_SCOPES without the virtual registry's (Hearth has no registry to give them a meaning). */
export const DEPLOY_TOKEN_SCOPES = ['read_repository', 'read_registry', 'write_registry', 'read_package_registry', 'write_package_registry'] as const;
export const DEPLOY_TOKEN_PREFIX = 'gldt-';
const USERNAME = /^[a-zA-Z0-9.+_-]+$/;
const MAX_LENGTH = 255;

/** Who holds a token: a project or a group, already resolved for the caller. */
export type DeployTokenHolder = { kind: 'project'; project: ProjectRow; namespace: NamespaceRow } | { kind: 'group'; group: NamespaceRow };

export interface DeployTokenView {
  row: DeployTokenRow;
  scopes: string[];
  /** the secret, only right after creation */
  token?: string;
}

export interface DeployTokenInput {
  name: string;
  scopes: string[];
  /** ISO time, already parsed */
  expires_at?: string | null;
  username?: string | null;
}

export type DeployTokenQuery = SelectQueryBuilder<Database, 'deploy_tokens', DeployTokenRow>;

/** Grape's values check of `scopes` (before the holder is looked up): the refusal, or null. */
export function deployTokenScopesError(scopes: readonly string[]): string | null {
  return scopes.some((s) => !(DEPLOY_TOKEN_SCOPES as readonly string[]).includes(s)) ? 'scopes does not have a valid value' : null;
}

/** The username a token answers to: its own, or gitlab+deploy-token-<id>. */
export function deployTokenUsername(row: Pick<DeployTokenRow, 'id' | 'username'>): string {
  return row.username ?? `gitlab+deploy-token-${row.id}`;
}

/** DeployToken#expired?: an expiry time before the start of today (UTC). */
export function isDeployTokenExpired(row: Pick<DeployTokenRow, 'expires_at'>, now = new Date()): boolean {
  return row.expires_at !== null && row.expires_at < `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

export function toDeployTokenView(row: DeployTokenRow, token?: string): DeployTokenView {
  return { row, scopes: JSON.parse(row.scopes), ...(token ? { token } : {}) };
}

/** Rails' `full_messages.to_sentence`. */
function sentence(messages: string[]): string {
  if (messages.length <= 2) return messages.join(' and ');
  return `${messages.slice(0, -1).join(', ')}, and ${messages[messages.length - 1]}`;
}

export class DeployTokensService {
  constructor(
    private readonly deps: FeatureDeps,
    private readonly digest: (secret: string) => string,
  ) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  // ---- who may ----------------------------------------------------------------------------

  /** authorize!(:…_deploy_token, user_project): 404 unseen, 403 seen but not managed. */
  async project(actor: Actor, id: string): Promise<ResolvedProject> {
    const r = await this.deps.resolve.project(actor, id);
    if (!r.access.abilities.has('manage_deploy_tokens')) throw Errors.forbidden();
    return r;
  }

  /** authorize!(:…_deploy_token, user_group). */
  async group(actor: Actor, id: string): Promise<ResolvedGroup> {
    const r = await this.deps.resolve.group(actor, id);
    if (!r.access.abilities.has('manage_deploy_tokens')) throw Errors.forbidden();
    return r;
  }

  // ---- lists and reads --------------------------------------------------------------------

  /** DeployTokens::TokensFinder: the holder's tokens (every token for null), by id; `active` keeps the usable ones. */
  listQuery(holder: DeployTokenHolder | null, active?: boolean): DeployTokenQuery {
    let q: DeployTokenQuery = this.db.selectFrom('deploy_tokens').selectAll();
    if (holder?.kind === 'project') q = q.where('project_id', '=', holder.project.id);
    else if (holder?.kind === 'group') q = q.where('group_id', '=', holder.group.id);
    if (active === true) q = q.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>=', nowIso())]));
    return q.orderBy('id', 'asc');
  }

  /** `holder.deploy_tokens.find(token_id)`: "404 Not found" for a token of anybody else. */
  async get(holder: DeployTokenHolder, tokenId: number): Promise<DeployTokenRow> {
    const row = isInt32(tokenId) ? await this.listQuery(holder).where('id', '=', tokenId).executeTakeFirst() : undefined;
    if (!row) throw Errors.recordNotFound();
    return row;
  }

  // ---- writes -----------------------------------------------------------------------------

  /**
   * CreateService: the model's validations as one 400 {"message": "<full messages>"}; scopes are already
   * known ones (the route refuses others). An expiry before today is refused too (GitLab's form allows
   * none); today's date is a token that works until the day ends, as GitLab's.
   */
  async create(actor: Actor, holder: DeployTokenHolder, input: DeployTokenInput): Promise<DeployTokenView> {
    const messages: string[] = [];
    const username = input.username ? input.username : null;
    if (username !== null) {
      if (username.length > MAX_LENGTH) messages.push(`Username is too long (maximum is ${MAX_LENGTH} characters)`);
      if (!USERNAME.test(username)) messages.push("Username can contain only letters, digits, '_', '-', '+', and '.'");
    }
    if (input.name.length > MAX_LENGTH) messages.push(`Name is too long (maximum is ${MAX_LENGTH} characters)`);
    const expiresAt = input.expires_at ?? null;
    if (expiresAt !== null && isDeployTokenExpired({ expires_at: expiresAt })) messages.push('Expires at must not be in the past');
    // DeployToken#scopes keeps GitLab's order whatever the order given
    const scopes = DEPLOY_TOKEN_SCOPES.filter((s) => input.scopes.includes(s));
    if (!scopes.length) messages.push("Scopes can't be blank");
    if (messages.length) throw Errors.refused(sentence(messages));
    const secret = DEPLOY_TOKEN_PREFIX + randomToken(15);
    const row = await this.db
      .insertInto('deploy_tokens')
      .values({
        name: input.name,
        username,
        token_digest: this.digest(secret),
        scopes: JSON.stringify(scopes),
        revoked: 0,
        expires_at: expiresAt,
        project_id: holder.kind === 'project' ? holder.project.id : null,
        group_id: holder.kind === 'group' ? holder.group.id : null,
        creator_id: actor.user?.id ?? null,
        created_at: nowIso(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toDeployTokenView(row, secret);
  }

  /** DestroyService: the row goes ("404 Not found" for a token the holder does not have). */
  async destroy(holder: DeployTokenHolder, tokenId: number): Promise<void> {
    const row = await this.get(holder, tokenId);
    await this.db.deleteFrom('deploy_tokens').where('id', '=', row.id).execute();
  }

  /** DeployToken#revoke! (the web page's "Revoke"): the token stays listed, revoked, and stops working. */
  async revoke(holder: DeployTokenHolder, tokenId: number): Promise<void> {
    const row = await this.get(holder, tokenId);
    await this.db.updateTable('deploy_tokens').set({ revoked: 1 }).where('id', '=', row.id).execute();
  }

  // ---- git --------------------------------------------------------------------------------

  /**
   * Gitlab::Auth#deploy_token_check: an active token with exactly this secret and this username, or null.
   * The secret is found by its digest; the digest and the username are compared in constant time.
   */
  async forGit(username: string, password: string): Promise<DeployTokenRow | null> {
    if (!password || !username) return null;
    const digest = this.digest(password);
    const row = await this.db.selectFrom('deploy_tokens').selectAll().where('token_digest', '=', digest).executeTakeFirst();
    if (!row || !safeEqual(row.token_digest, digest)) return null;
    if (!safeEqual(deployTokenUsername(row), username)) return null;
    if (row.revoked || isDeployTokenExpired(row)) return null;
    return row;
  }
}
