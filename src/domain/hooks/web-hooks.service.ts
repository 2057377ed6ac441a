// Project and group webhooks (GitLab's ProjectHook and GroupHook, lib/api/project_hooks.rb,
// group_hooks.rb, lib/api/hooks/*.rb, helpers/web_hooks_helpers.rb, WebHooks::CreateService, the
// WebHooks::Hook concern): who may manage them (Maintainer of the project, Owner of the group, as the
// admin_web_hook ability says), their validation, custom headers and URL variables (kept sealed, as the
// token), and the data of the test endpoint (TestHooks::ProjectService). Deliveries are HookDeliveries'.
import type { Db } from '../../db/connect.ts';
import type { NamespaceRow, ProjectRow, WebHookRow } from '../../db/schema.ts';
import { Errors } from '../../lib/errors.ts';
import type { Outbound, OutboundRules } from '../../lib/outbound.ts';
import type { SecretBox } from '../../lib/secrets.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { Resolver } from '../access/resolve.ts';
import { deleteWebHookRows } from '../core/web-hook-rows.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { BRANCH_FILTER_STRATEGIES, branchFilterError } from './branch-filter.ts';

/** The event flags a project hook takes (the API's common_hook_parameters), in GitLab's order. */
export const PROJECT_HOOK_FLAGS = [
  'push_events',
  'issues_events',
  'confidential_issues_events',
  'merge_requests_events',
  'tag_push_events',
  'note_events',
  'confidential_note_events',
  'job_events',
  'pipeline_events',
  'wiki_page_events',
  'deployment_events',
  'feature_flag_events',
  'releases_events',
  'milestone_events',
  'emoji_events',
  'resource_access_token_events',
  'resource_deploy_token_events',
  'enable_ssl_verification',
  'vulnerability_events',
] as const;
/** A group hook's flags (EE's group_hooks.rb): a project hook's and the group-only events. */
export const GROUP_HOOK_FLAGS = [...PROJECT_HOOK_FLAGS, 'subgroup_events', 'member_events', 'project_events'] as const;
type Flag = (typeof GROUP_HOOK_FLAGS)[number];

export interface KeyValue {
  key: string;
  value: string;
}

export interface WebHookInput extends Partial<Record<Flag, boolean>> {
  url?: string;
  name?: string;
  description?: string;
  token?: string;
  push_events_branch_filter?: string;
  branch_filter_strategy?: string;
  custom_webhook_template?: string;
  url_variables?: KeyValue[];
  custom_headers?: KeyValue[];
}

/** Where a hook belongs: a project or a group, as the actor resolved it. */
export type HookParent = { type: 'project'; project: ProjectRow; namespace: NamespaceRow } | { type: 'group'; group: NamespaceRow };

/** GitLab's triggers of the test endpoint (ProjectHook.triggers), by parameter value. */
export const TEST_TRIGGERS = [
  'push_events',
  'tag_push_events',
  'issues_events',
  'confidential_issues_events',
  'note_events',
  'merge_requests_events',
  'job_events',
  'pipeline_events',
  'wiki_page_events',
  'releases_events',
  'emoji_events',
  'resource_access_token_events',
] as const;

const URL_MAX = 2048;
const URL_FORBIDDEN = /[\x00-\x1f\x7f]/;
const TOKEN_FORBIDDEN = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/;
const UNRESOLVED = 'Host cannot be resolved or invalid';
/** web_hooks_custom_headers.json and web_hooks_url_variables.json: names, at most 20, values 1..2048 characters. */
const KEY_PATTERN = /^[A-Za-z]+[0-9]*(?:[._-][A-Za-z0-9]+)*$/;
const MAX_ENTRIES = 20;
const VALUE_MAX = 2048;
const KEY_MAX = 255;
const TEMPLATE_MAX = 4096;
/** WebHooks::Hook::VARIABLE_REFERENCE_RE */
const VARIABLE_REFERENCE = /\{([A-Za-z]+[0-9]*(?:[._-][A-Za-z0-9]+)*)\}/g;

const INVALID_URL = 'Invalid url given';

/**
 * The API's "Invalid url given"; for an address the network rules refuse, followed by the reason (the
 * UrlBlocker message GitLab's form shows as "Url is blocked: …") and, when local requests are what is
 * refused, the setting that allows them. Null when the URL may be saved: a host that does not resolve
 * (yet) is saved, as GitLab does.
 */
export async function blockedUrlMessage(outbound: Outbound, target: string, rules: OutboundRules, setting: string): Promise<string | null> {
  const problem = await outbound.check(target, rules);
  if (problem === null || problem === UNRESOLVED) return null;
  // a malformed URL or another scheme: GitLab's words only
  if (!problem.startsWith('Requests to')) return INVALID_URL;
  const local = !rules.allowLocal && (await outbound.check(target, { ...rules, allowLocal: true })) === null;
  const hint = local ? ` (an administrator can allow them with the setting ${setting})` : '';
  return `${INVALID_URL}: Url is blocked: ${problem}${hint}`;
}

/** The network rules for webhook requests (allow_local_requests_from_web_hooks_and_services). */
export async function webHookRules(settings: SettingsService): Promise<OutboundRules> {
  const s = await settings.get();
  return {
    allowLocal: Boolean(s.allow_local_requests_from_web_hooks_and_services),
    allowlist: s.outbound_local_requests_whitelist ?? [],
  };
}

/** The URL with its {variables} replaced (WebHook#interpolated_url); null when one is missing. */
export function interpolatedUrl(url: string, vars: Record<string, string>): string | null {
  let missing = false;
  const out = url.replace(VARIABLE_REFERENCE, (_m, name: string) => {
    if (!Object.hasOwn(vars, name)) {
      missing = true;
      return '';
    }
    return vars[name];
  });
  return missing ? null : out;
}

const entriesValid = (map: Record<string, string>) =>
  Object.keys(map).length <= MAX_ENTRIES &&
  Object.entries(map).every(([k, v]) => k.length <= KEY_MAX && KEY_PATTERN.test(k) && typeof v === 'string' && v.length >= 1 && v.length <= VALUE_MAX);

/** Header values may not carry line breaks or other control characters (they could split the request). */
const headerValueOk = (map: Record<string, string>) => Object.values(map).every((v) => !/[\x00-\x08\x0a-\x1f\x7f]/.test(v));

/**
 * Headers a custom header may not set: the ones every delivery sets itself (Content-Type, User-Agent,
 * Idempotency-Key, X-Gitlab-*, and X-Service-* as this product names them), and the request headers
 * the Fetch standard forbids a client to set (Host, Cookie, Content-Length, Connection, …): overriding
 * them would send the request elsewhere, break its framing, or make every delivery fail. GitLab lets
 * its own headers win at send time; these are refused when saved, and never sent.
 */
const RESERVED_HEADERS = new Set([
  'content-type',
  'user-agent',
  'idempotency-key',
  'accept-charset',
  'accept-encoding',
  'access-control-request-headers',
  'access-control-request-method',
  'connection',
  'content-length',
  'cookie',
  'cookie2',
  'date',
  'dnt',
  'expect',
  'host',
  'keep-alive',
  'origin',
  'referer',
  'set-cookie',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'via',
]);
const RESERVED_PREFIXES = ['x-gitlab-', 'x-service-', 'proxy-', 'sec-'];

/** Whether a custom header of this name may never be sent. */
export function reservedHeader(name: string): boolean {
  const n = name.toLowerCase();
  return RESERVED_HEADERS.has(n) || RESERVED_PREFIXES.some((p) => n.startsWith(p));
}

/** A URL with a user or a password: the guarded client sends them as the Authorization header. */
export function hasUserinfo(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

/** Why these custom headers cannot be kept for this URL, or null. */
function headerProblem(headers: Record<string, string>, url: string): string | null {
  for (const name of Object.keys(headers)) {
    if (reservedHeader(name)) return `${name} is set by every delivery and cannot be a custom header`;
    // the URL's user and password become the Authorization header (basic auth)
    if (name.toLowerCase() === 'authorization' && hasUserinfo(url)) return `${name} is set from the user and password of the URL and cannot be a custom header`;
  }
  return null;
}

/**
 * WebHooks::AutoDisabling: executable unless failing past the grace of 3 failures while the backoff
 * lasts, or past 39 failures (permanently, until a test succeeds or the hook is updated).
 */
export const TEMPORARILY_DISABLED_FAILURE_THRESHOLD = 3;
export const PERMANENTLY_DISABLED_FAILURE_THRESHOLD = 39;
const INITIAL_BACKOFF_S = 60;
const MAX_BACKOFF_S = 24 * 3600;

export function temporarilyDisabled(h: Pick<WebHookRow, 'recent_failures' | 'disabled_until'>, now = new Date()): boolean {
  return (
    h.disabled_until !== null &&
    new Date(h.disabled_until) >= now &&
    h.recent_failures > TEMPORARILY_DISABLED_FAILURE_THRESHOLD &&
    h.recent_failures <= PERMANENTLY_DISABLED_FAILURE_THRESHOLD
  );
}
export function permanentlyDisabled(h: Pick<WebHookRow, 'recent_failures'>): boolean {
  return h.recent_failures > PERMANENTLY_DISABLED_FAILURE_THRESHOLD;
}
export function executable(h: Pick<WebHookRow, 'recent_failures' | 'disabled_until'>, now = new Date()): boolean {
  return !temporarilyDisabled(h, now) && !permanentlyDisabled(h);
}
export function alertStatus(h: Pick<WebHookRow, 'recent_failures' | 'disabled_until'>): 'executable' | 'temporarily_disabled' | 'disabled' {
  if (temporarilyDisabled(h)) return 'temporarily_disabled';
  if (permanentlyDisabled(h)) return 'disabled';
  return 'executable';
}

/** The state after one more failure (WebHooks::AutoDisabling#backoff!), or null when nothing changes. */
export function backoff(
  h: Pick<WebHookRow, 'recent_failures' | 'disabled_until'>,
  now = new Date(),
): { recent_failures: number; disabled_until: string | null } | null {
  if (!executable(h, now)) return null;
  const next = Math.min(Math.max(h.recent_failures + 1, 1), PERMANENTLY_DISABLED_FAILURE_THRESHOLD + 1);
  if (next <= TEMPORARILY_DISABLED_FAILURE_THRESHOLD) return { recent_failures: next, disabled_until: h.disabled_until };
  const count = h.recent_failures - TEMPORARILY_DISABLED_FAILURE_THRESHOLD;
  const seconds = Math.min(Math.max(INITIAL_BACKOFF_S * 2 ** count, INITIAL_BACKOFF_S), MAX_BACKOFF_S);
  return { recent_failures: next, disabled_until: new Date(now.getTime() + seconds * 1000).toISOString() };
}

export class WebHooksService {
  constructor(
    private readonly db: Db,
    private readonly settings: SettingsService,
    private readonly box: SecretBox,
    private readonly outbound: Outbound,
    private readonly resolve: Resolver,
  ) {}

  // ---- parents and access ---------------------------------------------------------------

  /** The project, if the actor may manage its hooks: invisible 404, visible but below Maintainer 403. */
  async projectParent(actor: Actor, id: string): Promise<HookParent> {
    const r = await this.resolve.project(actor, id);
    if (!r.access.abilities.has('admin_web_hook')) throw Errors.forbidden();
    return { type: 'project', project: r.project, namespace: r.namespace };
  }

  /** The group, if the actor owns it (or is an administrator). */
  async groupParent(actor: Actor, id: string): Promise<HookParent> {
    const r = await this.resolve.group(actor, id);
    if (!r.access.abilities.has('admin_web_hook')) throw Errors.forbidden();
    return { type: 'group', group: r.group };
  }

  listQuery(parent: HookParent) {
    const q = this.db.kysely.selectFrom('web_hooks').selectAll().orderBy('id');
    return parent.type === 'project' ? q.where('project_id', '=', parent.project.id) : q.where('group_id', '=', parent.group.id);
  }

  /** The hook of this parent, or 404 `{"message":"404 Not found"}` (ActiveRecord's find). */
  async get(parent: HookParent, id: number): Promise<WebHookRow> {
    const hook = await this.listQuery(parent).where('id', '=', id).executeTakeFirst();
    if (!hook) throw Errors.recordNotFound();
    return hook;
  }

  // ---- secrets --------------------------------------------------------------------------

  tokenOf(hook: Pick<WebHookRow, 'token_encrypted'>): string | null {
    return hook.token_encrypted ? this.box.open(hook.token_encrypted) : null;
  }
  customHeadersOf(hook: Pick<WebHookRow, 'custom_headers_encrypted'>): Record<string, string> {
    return hook.custom_headers_encrypted ? (JSON.parse(this.box.open(hook.custom_headers_encrypted)) as Record<string, string>) : {};
  }
  urlVariablesOf(hook: Pick<WebHookRow, 'url_variables_encrypted'>): Record<string, string> {
    return hook.url_variables_encrypted ? (JSON.parse(this.box.open(hook.url_variables_encrypted)) as Record<string, string>) : {};
  }
  private sealMap(map: Record<string, string>): string | null {
    return Object.keys(map).length ? this.box.seal(JSON.stringify(map)) : null;
  }

  // ---- create, update, delete -----------------------------------------------------------

  async create(parent: HookParent, input: WebHookInput): Promise<WebHookRow> {
    checkParams(input);
    const flags = parent.type === 'project' ? PROJECT_HOOK_FLAGS : GROUP_HOOK_FLAGS;
    const strategy = input.branch_filter_strategy ?? 'wildcard';
    const vars = toMap(input.url_variables);
    const headers = toMap(input.custom_headers);
    const row: Record<string, unknown> = {
      project_id: parent.type === 'project' ? parent.project.id : null,
      group_id: parent.type === 'group' ? parent.group.id : null,
      url: input.url!,
      name: input.name ?? null,
      description: input.description ?? null,
      token_encrypted: input.token ? this.box.seal(input.token) : null,
      custom_webhook_template: input.custom_webhook_template ?? null,
      push_events_branch_filter: strategy === 'all_branches' ? null : (input.push_events_branch_filter ?? null),
      branch_filter_strategy: strategy,
    };
    for (const f of flags) if (input[f] !== undefined) row[f] = input[f] ? 1 : 0;
    await this.validate(
      { url: input.url!, strategy, filter: row.push_events_branch_filter as string | null, vars, headers, template: input.custom_webhook_template },
      'create',
    );
    row.url_variables_encrypted = this.sealMap(vars);
    row.custom_headers_encrypted = this.sealMap(headers);
    const now = nowIso();
    return this.db.kysely
      .insertInto('web_hooks')
      .values({ ...(row as any), created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /**
   * PUT: only what is given changes; a new URL without a token clears the token, a new interpolated URL
   * clears the custom headers (WebHooks::Hook#reset_token, #reset_custom_headers). Given URL variables
   * and custom headers are merged into the existing ones. An update re-enables a disabled hook.
   */
  async update(parent: HookParent, id: number, input: WebHookInput): Promise<WebHookRow> {
    const hook = await this.get(parent, id);
    const given = Object.entries(input).filter(([k, v]) => v !== undefined && !((k === 'url_variables' || k === 'custom_headers') && !(v as unknown[]).length));
    if (!given.length) throw Errors.param('No parameters provided');
    checkParams(input);
    const flags = parent.type === 'project' ? PROJECT_HOOK_FLAGS : GROUP_HOOK_FLAGS;
    const next: Record<string, unknown> = {};
    const url = input.url ?? hook.url;
    if (input.url !== undefined) next.url = input.url;
    if (input.name !== undefined) next.name = input.name;
    if (input.description !== undefined) next.description = input.description;
    if (input.custom_webhook_template !== undefined) next.custom_webhook_template = input.custom_webhook_template;
    for (const f of flags) if (input[f] !== undefined) next[f] = input[f] ? 1 : 0;
    const strategy = input.branch_filter_strategy ?? hook.branch_filter_strategy;
    next.branch_filter_strategy = strategy;
    let filter = input.push_events_branch_filter !== undefined ? input.push_events_branch_filter : hook.push_events_branch_filter;
    if (strategy === 'all_branches') filter = null;
    next.push_events_branch_filter = filter;
    if (input.token !== undefined) next.token_encrypted = input.token ? this.box.seal(input.token) : null;
    else if (input.url !== undefined && input.url !== hook.url) next.token_encrypted = null;
    const oldVars = this.urlVariablesOf(hook);
    const vars = { ...oldVars, ...toMap(input.url_variables) };
    let headers = { ...this.customHeadersOf(hook), ...toMap(input.custom_headers) };
    if (interpolatedUrl(hook.url, oldVars) !== interpolatedUrl(url, vars)) headers = {};
    await this.validate(
      { url, strategy, filter, vars, headers, template: input.custom_webhook_template ?? hook.custom_webhook_template ?? undefined },
      'update',
    );
    next.url_variables_encrypted = this.sealMap(vars);
    next.custom_headers_encrypted = this.sealMap(headers);
    return this.db.kysely
      .updateTable('web_hooks')
      .set({ ...(next as any), recent_failures: 0, disabled_until: null, updated_at: nowIso() })
      .where('id', '=', hook.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async delete(parent: HookParent, id: number): Promise<void> {
    const hook = await this.get(parent, id);
    await this.db.kysely.transaction().execute((trx) => deleteWebHookRows(trx, [hook.id]));
  }

  /** PUT …/custom_headers/:key and …/url_variables/:key: 422 "Illegal key or value" when the result is invalid. */
  async setEntry(parent: HookParent, id: number, kind: 'custom_headers' | 'url_variables', key: string, value: string): Promise<void> {
    const hook = await this.get(parent, id);
    const map = { ...(kind === 'custom_headers' ? this.customHeadersOf(hook) : this.urlVariablesOf(hook)), [key]: value };
    if (!entriesValid(map) || (kind === 'custom_headers' && !headerValueOk(map))) throw Errors.rejected('Illegal key or value');
    const reserved = kind === 'custom_headers' ? headerProblem({ [key]: value }, hook.url) : null;
    if (reserved) throw Errors.rejected(`Illegal key or value: ${reserved}`);
    if (kind === 'url_variables') {
      const target = interpolatedUrl(hook.url, map);
      if (target === null || (await this.urlProblem(target))) throw Errors.rejected('Illegal key or value');
    }
    const column = kind === 'custom_headers' ? 'custom_headers_encrypted' : 'url_variables_encrypted';
    await this.db.kysely
      .updateTable('web_hooks')
      .set({ [column]: this.sealMap(map), updated_at: nowIso() })
      .where('id', '=', hook.id)
      .execute();
  }

  /** DELETE …/custom_headers/:key (404 "Custom header") and …/url_variables/:key (404 "URL variable"). */
  async unsetEntry(parent: HookParent, id: number, kind: 'custom_headers' | 'url_variables', key: string): Promise<void> {
    const hook = await this.get(parent, id);
    const map = kind === 'custom_headers' ? this.customHeadersOf(hook) : this.urlVariablesOf(hook);
    if (!Object.hasOwn(map, key)) throw Errors.notFound(kind === 'custom_headers' ? 'Custom header' : 'URL variable');
    delete map[key];
    if (kind === 'url_variables' && interpolatedUrl(hook.url, map) === null) throw Errors.rejected('Could not unset variable');
    const column = kind === 'custom_headers' ? 'custom_headers_encrypted' : 'url_variables_encrypted';
    await this.db.kysely
      .updateTable('web_hooks')
      .set({ [column]: this.sealMap(map), updated_at: nowIso() })
      .where('id', '=', hook.id)
      .execute();
  }

  /** The model's validations, in GitLab's order of the API's messages. */
  private async validate(
    h: { url: string; strategy: string; filter: string | null; vars: Record<string, string>; headers: Record<string, string>; template?: string },
    mode: 'create' | 'update',
  ): Promise<void> {
    if (!(BRANCH_FILTER_STRATEGIES as readonly string[]).includes(h.strategy)) throw Errors.param('branch_filter_strategy does not have a valid value');
    if (!entriesValid(h.vars)) throw Errors.invalid({ url_variables: ['must be a valid json schema'] }, 422);
    const target = interpolatedUrl(h.url, h.vars);
    const problem = target === null ? INVALID_URL : await this.urlProblem(h.url, target);
    if (problem) throw Errors.rejected(problem);
    if (branchFilterError(h.strategy, h.filter)) throw Errors.rejected('Invalid branch filter given');
    if (!entriesValid(h.headers) || !headerValueOk(h.headers))
      throw Errors.rejected(mode === 'create' ? 'Custom headers must be a valid json schema' : 'Custom headers validation failed');
    const reserved = headerProblem(h.headers, h.url);
    if (reserved) throw Errors.rejected(`Custom headers validation failed: ${reserved}`);
    if (h.template !== undefined && h.template.length > TEMPLATE_MAX) throw Errors.rejected('Custom webhook template is too long (maximum is 4096 characters)');
  }

  /** Why the URL cannot be saved (GitLab's "Invalid url given", naming what blocks it), or null. */
  private async urlProblem(url: string, target = url): Promise<string | null> {
    if (!url || url.length > URL_MAX || URL_FORBIDDEN.test(url) || URL_FORBIDDEN.test(target)) return INVALID_URL;
    return blockedUrlMessage(this.outbound, target, await webHookRules(this.settings), 'allow_local_requests_from_web_hooks_and_services');
  }
}

function toMap(list: KeyValue[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, value } of list ?? []) out[key] = value;
  return out;
}

/** Grape-level checks (400 `{"error": "<param> is invalid"}`), before the model's. */
function checkParams(input: WebHookInput): void {
  const invalid = (Object.keys(input) as (keyof WebHookInput)[]).filter((k) => typeof input[k] === 'string' && (input[k] as string).includes('\0'));
  if (input.token !== undefined && TOKEN_FORBIDDEN.test(input.token) && !invalid.includes('token')) invalid.push('token');
  if (invalid.length) throw Errors.param(invalid.map((k) => `${k} is invalid`).join(', '));
}
