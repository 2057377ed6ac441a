// System hooks (administrators only): GitLab's SystemHook model, WebHooks::CreateService and the API's
// update rules. Tokens are kept sealed (they are sent with every delivery) and never shown.
import type { Db } from '../../db/connect.ts';
import type { SystemHookRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import type { Outbound, OutboundRules } from '../../lib/outbound.ts';
import type { SecretBox } from '../../lib/secrets.ts';
import { nowIso } from '../../lib/time.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { branchFilterError, BRANCH_FILTER_STRATEGIES } from './branch-filter.ts';
import { blockedUrlMessage } from './web-hooks.service.ts';

export interface HookInput {
  url?: string;
  name?: string;
  description?: string;
  token?: string;
  push_events?: boolean;
  tag_push_events?: boolean;
  merge_requests_events?: boolean;
  repository_update_events?: boolean;
  enable_ssl_verification?: boolean;
  push_events_branch_filter?: string;
  branch_filter_strategy?: string;
}

const FLAGS = ['push_events', 'tag_push_events', 'merge_requests_events', 'repository_update_events', 'enable_ssl_verification'] as const;
const URL_MAX = 2048;
/**
 * The token is sent as a header: no control character but the line breaks GitLab removes when sending
 * (and the tab a header may hold).
 */
const TOKEN_FORBIDDEN = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/;
/** Ruby's URI parser refuses control characters: GitLab answers "Invalid url given". */
const URL_FORBIDDEN = /[\x00-\x1f\x7f]/;

/** The network rules for system-hook requests, from application settings. */
export async function systemHookRules(settings: SettingsService): Promise<OutboundRules> {
  const s = await settings.get();
  return { allowLocal: Boolean(s.allow_local_requests_from_system_hooks), allowlist: s.outbound_local_requests_whitelist ?? [] };
}

export class SystemHooksService {
  constructor(
    private readonly db: Db,
    private readonly settings: SettingsService,
    private readonly box: SecretBox,
    private readonly outbound: Outbound,
  ) {}

  listQuery() {
    return this.db.kysely.selectFrom('system_hooks').selectAll().orderBy('id');
  }

  /** The hook, or 404 `{"message":"404 Not found"}` (ActiveRecord's find). */
  async get(id: number): Promise<SystemHookRow> {
    const hook = await this.db.kysely.selectFrom('system_hooks').selectAll().where('id', '=', id).executeTakeFirst();
    if (!hook) throw Errors.recordNotFound();
    return hook;
  }

  /** The plain token of a hook (for deliveries), or null. */
  tokenOf(hook: Pick<SystemHookRow, 'token_encrypted'>): string | null {
    return hook.token_encrypted ? this.box.open(hook.token_encrypted) : null;
  }

  /** A sealed secret of any hook (web hooks' custom headers and URL variables), opened for a delivery. */
  openSealed(sealed: string): string {
    return this.box.open(sealed);
  }

  async create(input: HookInput): Promise<SystemHookRow> {
    checkParams(input);
    const strategy = input.branch_filter_strategy ?? 'wildcard';
    const row = {
      url: input.url!,
      name: input.name ?? null,
      description: input.description ?? null,
      token_encrypted: input.token ? this.box.seal(input.token) : null,
      push_events: input.push_events ? 1 : 0,
      tag_push_events: input.tag_push_events ? 1 : 0,
      merge_requests_events: input.merge_requests_events ? 1 : 0,
      repository_update_events: input.repository_update_events === false ? 0 : 1,
      enable_ssl_verification: input.enable_ssl_verification === false ? 0 : 1,
      push_events_branch_filter: strategy === 'all_branches' ? null : (input.push_events_branch_filter ?? null),
      branch_filter_strategy: strategy,
    };
    await this.validate(row);
    const now = nowIso();
    return this.db.kysely
      .insertInto('system_hooks')
      .values({ ...row, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** PUT: only what is given changes; a new `url` without a `token` clears the token (WebHook#reset_token). */
  async update(id: number, input: HookInput): Promise<SystemHookRow> {
    const hook = await this.get(id);
    const given = Object.entries(input).filter(([, v]) => v !== undefined);
    if (!given.length) throw Errors.param('No parameters provided');
    checkParams(input);
    const next: SystemHookRow = { ...hook };
    if (input.url !== undefined) next.url = input.url;
    if (input.name !== undefined) next.name = input.name;
    if (input.description !== undefined) next.description = input.description;
    for (const f of FLAGS) if (input[f] !== undefined) next[f] = input[f] ? 1 : 0;
    if (input.branch_filter_strategy !== undefined) next.branch_filter_strategy = input.branch_filter_strategy;
    if (input.push_events_branch_filter !== undefined) next.push_events_branch_filter = input.push_events_branch_filter;
    if (next.branch_filter_strategy === 'all_branches') next.push_events_branch_filter = null;
    if (input.token !== undefined) next.token_encrypted = input.token ? this.box.seal(input.token) : null;
    else if (input.url !== undefined && input.url !== hook.url) next.token_encrypted = null;
    await this.validate(next);
    const { id: _id, created_at: _c, ...changes } = next;
    return this.db.kysely
      .updateTable('system_hooks')
      .set({ ...changes, updated_at: nowIso() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** The hook and its delivery history, in one transaction. */
  async delete(id: number): Promise<void> {
    await this.get(id);
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('hook_attempts')
        .where('delivery_id', 'in', trx.selectFrom('hook_deliveries').select('id').where('hook_id', '=', id))
        .execute();
      await trx.deleteFrom('hook_deliveries').where('hook_id', '=', id).execute();
      await trx.deleteFrom('system_hooks').where('id', '=', id).execute();
    });
  }

  /** GitLab's save errors: the URL first, then the branch filter (422 `{"error": …}`). */
  private async validate(row: Pick<SystemHookRow, 'url' | 'branch_filter_strategy' | 'push_events_branch_filter'>): Promise<void> {
    const problem = await this.urlProblem(row.url);
    if (problem) throw Errors.rejected(problem);
    if (!(BRANCH_FILTER_STRATEGIES as readonly string[]).includes(row.branch_filter_strategy))
      throw Errors.param('branch_filter_strategy does not have a valid value');
    if (branchFilterError(row.branch_filter_strategy, row.push_events_branch_filter)) throw Errors.rejected('Invalid branch filter given');
  }

  /** Why the URL cannot be saved ("Invalid url given", naming what blocks it), or null. */
  private async urlProblem(url: string): Promise<string | null> {
    if (!url || url.length > URL_MAX || URL_FORBIDDEN.test(url)) return 'Invalid url given';
    return blockedUrlMessage(this.outbound, url, await systemHookRules(this.settings), 'allow_local_requests_from_system_hooks');
  }
}

/** Grape-level checks of the given parameters (400 `{"error": "<param> is invalid"}`), before the model's. */
function checkParams(input: HookInput): void {
  const invalid = (Object.keys(input) as (keyof HookInput)[]).filter((k) => typeof input[k] === 'string' && (input[k] as string).includes('\0'));
  if (input.token !== undefined && TOKEN_FORBIDDEN.test(input.token) && !invalid.includes('token')) invalid.push('token');
  if (invalid.length) throw Errors.param(invalid.map((k) => `${k} is invalid`).join(', '));
}
