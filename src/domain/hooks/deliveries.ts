// Deliveries of events to system hooks and to project and group webhooks (hook_deliveries.hook_type
// 'system' or 'web'). Events wait in the outbox (`jobs`, kind system_event), written with their cause;
// `dispatch` turns each into one delivery per hook that wants it — the system hooks, the project's hooks
// and the hooks of every group above it (in one
// transaction with marking the event done, so an event fans out exactly once), and `deliverDue`
// sends what is due through the guarded client. Beyond GitLab, which drops a failed system-hook
// delivery: connection errors, timeouts and 5xx are retried on a schedule under the same
// Idempotency-Key, and every attempt is recorded. Work is claimed with a lease (an UPDATE … RETURNING
// that takes only rows still unclaimed), so several workers never send the same delivery twice and a
// worker that dies leaves its claim to be taken again when the lease ends. Each delivery is sent and
// recorded on its own, under the guarded client's total deadline: one that hangs holds up nothing but
// itself, and no hook takes more than HOOK_CONCURRENCY of a worker's deliveries at once.
import crypto from 'node:crypto';
import type { Db } from '../../db/connect.ts';
import type { HookAttemptRow, HookDeliveryRow, SystemHookRow, WebHookRow } from '../../db/schema.ts';
import { claimJobs } from '../../jobs/job-row.ts';
import type { DeliveryQueue } from '../../jobs/worker.ts';
import { maskUrl, OutboundError, type Outbound, type OutboundResponse } from '../../lib/outbound.ts';
import { nowIso } from '../../lib/time.ts';
import { SYSTEM_EVENT_JOB } from '../core/system-events.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { pushMatches } from './branch-filter.ts';
import { systemHookRules, type SystemHooksService } from './system-hooks.service.ts';
import { backoff, executable, hasUserinfo, interpolatedUrl, reservedHeader, webHookRules } from './web-hooks.service.ts';
import { hookDeliveries } from '../../metrics/registry.ts';

/** What `POST /hooks/:id` sends (lib/api/system_hooks.rb). */
export const MOCK_SYSTEM_EVENT = {
  event_name: 'project_create',
  name: 'Ruby',
  path: 'ruby',
  project_id: 1,
  owner_name: 'Someone',
  owner_email: 'example@gitlabhq.com',
};

export interface DeliveryOptions {
  externalUrl: string;
  version: string;
  /** seconds before each retry */
  retrySchedule: number[];
  timeoutMs: number;
}

/** A worker sends at most this many deliveries of one hook at a time, so a hook that hangs cannot take every slot. */
export const HOOK_CONCURRENCY = 4;
const RESPONSE_EXCERPT = 8 * 1024;
const MAX_HEADERS = 50;
const INTERNAL_ERROR = 'internal error';

/** Which system hooks an event goes to (SystemHooksService#execute_hooks): the flags for push, tag push,
 * merge request and repository update events; every hook for the other system events. */
export function hookWants(hook: SystemHookRow, payload: Record<string, unknown>): boolean {
  switch (payload.event_name ?? payload.object_kind) {
    case 'push':
      return hook.push_events === 1 && pushMatches(hook, String(payload.ref ?? ''));
    case 'tag_push':
      return hook.tag_push_events === 1;
    case 'merge_request':
      return hook.merge_requests_events === 1;
    case 'repository_update':
      return hook.repository_update_events === 1;
    case 'note':
    case 'issue':
    case 'pipeline':
    case 'build':
      return false; // project and group hooks only
    default:
      return true;
  }
}

/** The event's kind as webhooks name it (object_kind; the system events' event_name otherwise). */
const kindOf = (payload: Record<string, unknown>) => String(payload.object_kind ?? payload.event_name ?? 'unknown');

/**
 * A note hidden from guests goes to the confidential note hooks (NoteHookData: internal, or on a confidential
 * issue); a confidential issue to the confidential issue hooks.
 */
function confidential(payload: Record<string, unknown>): boolean {
  const a = payload.object_attributes as Record<string, unknown> | undefined;
  return Boolean(a?.internal || a?.confidential || payload.event_type === 'confidential_note' || payload.event_type === 'confidential_issue');
}

/** Which project and group hooks an event goes to (ProjectHook/GroupHook scopes and ActiveHookFilter). */
export function webHookWants(hook: WebHookRow, payload: Record<string, unknown>): boolean {
  switch (kindOf(payload)) {
    case 'push':
      return hook.push_events === 1 && pushMatches(hook, String(payload.ref ?? ''));
    case 'tag_push':
      return hook.tag_push_events === 1;
    case 'merge_request':
      return hook.merge_requests_events === 1;
    case 'issue':
      return confidential(payload) ? hook.confidential_issues_events === 1 : hook.issues_events === 1;
    case 'note':
      return confidential(payload) ? hook.confidential_note_events === 1 : hook.note_events === 1;
    case 'pipeline':
      return hook.pipeline_events === 1;
    case 'build':
      return hook.job_events === 1;
    default:
      return false;
  }
}

/** X-Gitlab-Event of a webhook delivery (WebHookService.hook_to_event), named X-Service-Event. */
export function webHookEvent(kind: string, payload: Record<string, unknown>): string {
  switch (kind) {
    case 'push':
      return 'Push Hook';
    case 'tag_push':
      return 'Tag Push Hook';
    case 'merge_request':
      return 'Merge Request Hook';
    case 'issue':
      return confidential(payload) ? 'Confidential Issue Hook' : 'Issue Hook';
    case 'note':
      return confidential(payload) ? 'Confidential Note Hook' : 'Note Hook';
    case 'pipeline':
      return 'Pipeline Hook';
    case 'build':
      return 'Job Hook';
    default:
      return 'System Hook';
  }
}

/** The project an event is about (push, note and job payloads: project_id; merge request and pipeline: project.id). */
function projectIdOf(payload: Record<string, unknown>): number | null {
  const id = payload.project_id ?? (payload.project as { id?: unknown } | undefined)?.id;
  return typeof id === 'number' ? id : null;
}

/** One number per hook, for the per-hook concurrency of the worker: system hooks positive, web hooks negative. */
export function hookKey(d: Pick<HookDeliveryRow, 'hook_type' | 'hook_id'>): number {
  return d.hook_type === 'web' ? -d.hook_id : d.hook_id;
}

/** A hook a delivery goes to: a system hook or a project/group webhook. */
export type AnyHook = SystemHookRow | WebHookRow;
const isWeb = (h: AnyHook): h is WebHookRow => 'recent_failures' in h;

/**
 * custom_webhook_template: every `{{path.to.value}}` replaced by that value of the payload, as JSON (a
 * string without its quotes, so it may sit inside a JSON string); the result must be JSON.
 */
export function renderTemplate(template: string, payload: Record<string, unknown>): string {
  const out = template.replace(/\{\{(.+?)\}\}/g, (_m, path: string) => {
    let v: unknown = payload;
    for (const k of path.trim().split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    if (v === undefined || v === null) return '';
    const json = JSON.stringify(v);
    return typeof v === 'string' ? json.slice(1, -1) : json;
  });
  JSON.parse(out); // throws: "Error while parsing rendered custom webhook template"
  return out;
}

interface Outcome {
  /** what was sent, as shown (URL without password, token redacted) */
  url: string;
  requestHeaders: Record<string, string>;
  status: string;
  error: string | null;
  durationMs: number;
  headers: Record<string, string>;
  body: string;
  /** delivered (2xx/3xx), retry (connection, timeout, 5xx) or failed (anything else) */
  result: 'delivered' | 'retry' | 'failed';
}

export class HookDeliveries implements DeliveryQueue<HookDeliveryRow> {
  /** who holds a claim (a worker process) */
  readonly workerId = `${process.pid}-${crypto.randomUUID().slice(0, 8)}`;

  constructor(
    private readonly db: Db,
    private readonly hooks: SystemHooksService,
    private readonly outbound: Outbound,
    private readonly settings: SettingsService,
    private readonly opts: DeliveryOptions,
  ) {}

  /** The worker's per-hook concurrency counts by this key. */
  keyOf(d: HookDeliveryRow): number {
    return hookKey(d);
  }

  private get leaseMs(): number {
    return this.opts.timeoutMs + 60_000;
  }

  /** Turns up to `limit` queued system events into deliveries; the number of events taken. */
  async dispatch(limit = 200): Promise<number> {
    const now = nowIso();
    const k = this.db.kysely;
    // an event whose fan-out was interrupted MAX_CLAIMS times is given up (claimJobs)
    const jobs = await claimJobs(this.db, SYSTEM_EVENT_JOB, this.workerId, { leaseMs: this.leaseMs, limit });
    if (!jobs.length) return 0;
    const hooks = await k.selectFrom('system_hooks').selectAll().orderBy('id').execute();
    const events = jobs.map((job) => ({ json: job.payload, payload: JSON.parse(job.payload) as Record<string, unknown> }));
    const webHooksOf = await this.webHooksFor(events.map((e) => e.payload));
    await k.transaction().execute(async (trx) => {
      const rows = [];
      for (const { json, payload } of events) {
        const eventUuid = crypto.randomUUID();
        for (const hook of hooks) {
          if (!hookWants(hook, payload)) continue;
          rows.push(this.newDelivery(hook, payload, json, eventUuid, now));
        }
        const pid = projectIdOf(payload);
        for (const hook of pid === null ? [] : (webHooksOf.get(pid) ?? [])) {
          if (!webHookWants(hook, payload)) continue;
          rows.push(this.newDelivery(hook, payload, json, eventUuid, now));
        }
      }
      for (let i = 0; i < rows.length; i += 500)
        await trx
          .insertInto('hook_deliveries')
          .values(rows.slice(i, i + 500))
          .execute();
      await trx
        .updateTable('jobs')
        .set({ state: 'done', locked_by: null, locked_until: null, updated_at: nowIso() })
        .where(
          'id',
          'in',
          jobs.map((j) => j.id),
        )
        .where('locked_by', '=', this.workerId)
        .execute();
    });
    return jobs.length;
  }

  /**
   * The executable webhooks of the projects these events are about: each project's own and those of
   * every group above it (GitLab's project.execute_hooks and the group hooks of its ancestors).
   */
  private async webHooksFor(payloads: Record<string, unknown>[]): Promise<Map<number, WebHookRow[]>> {
    const out = new Map<number, WebHookRow[]>();
    const ids = [...new Set(payloads.filter((p) => WEB_KINDS.has(kindOf(p))).map(projectIdOf))].filter((id): id is number => id !== null);
    if (!ids.length) return out;
    const k = this.db.kysely;
    const projects = await k
      .selectFrom('projects')
      .innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id')
      .select(['projects.id', 'namespaces.type', 'namespaces.traversal_ids'])
      .where('projects.id', 'in', ids)
      .execute();
    const groupsOf = new Map(projects.map((p) => [p.id, p.type === 'Group' ? p.traversal_ids.split('/').filter(Boolean).map(Number) : []]));
    const groupIds = [...new Set([...groupsOf.values()].flat())];
    const hooks = await k
      .selectFrom('web_hooks')
      .selectAll()
      .where((eb) => eb.or([eb('project_id', 'in', ids), ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : [])]))
      .orderBy('id')
      .execute();
    const now = new Date();
    for (const [pid, groups] of groupsOf) {
      out.set(
        pid,
        hooks.filter((h) => (h.project_id === pid || (h.group_id !== null && groups.includes(h.group_id))) && executable(h, now)),
      );
    }
    return out;
  }

  private newDelivery(hook: AnyHook, payload: Record<string, unknown>, json: string, eventUuid: string, now: string) {
    return {
      hook_id: hook.id,
      hook_type: isWeb(hook) ? 'web' : 'system',
      event_name: String(payload.event_name ?? payload.object_kind ?? 'unknown'),
      payload: json,
      idempotency_key: crypto.randomUUID(),
      event_uuid: eventUuid,
      state: 'pending',
      attempts: 0,
      run_at: now,
      locked_by: null,
      locked_until: null,
      last_status: null,
      created_at: now,
      updated_at: now,
    };
  }

  /**
   * Claims up to `limit` due deliveries, oldest first, taking at most HOOK_CONCURRENCY per hook counting
   * `busy` (this worker's deliveries in flight, per hook): a hook whose deliveries hang cannot crowd out
   * the others. A row is claimed only if still unclaimed when the UPDATE runs (PostgreSQL re-reads a row
   * another worker changed meanwhile), so two workers never hold the same delivery.
   */
  async claim(limit: number, busy: ReadonlyMap<number, number> = new Map()): Promise<HookDeliveryRow[]> {
    if (limit <= 0) return [];
    const now = nowIso();
    const k = this.db.kysely;
    const full = [...busy].filter(([, n]) => n >= HOOK_CONCURRENCY).map(([key]) => key);
    const fullSystem = full.filter((key) => key > 0);
    const fullWeb = full.filter((key) => key < 0).map((key) => -key);
    let due = k
      .selectFrom('hook_deliveries')
      .select(['id', 'hook_id', 'hook_type'])
      .where('state', '=', 'pending')
      .where('run_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .orderBy('run_at')
      .orderBy('id')
      // hooks at their limit are left out above; one that has room for fewer than its rows here gets
      // the rest on a later claim (reading HOOK_CONCURRENCY times as many rows cost more than it found)
      .limit(limit);
    if (fullSystem.length) due = due.where((eb) => eb.or([eb('hook_type', '!=', 'system'), eb('hook_id', 'not in', fullSystem)]));
    if (fullWeb.length) due = due.where((eb) => eb.or([eb('hook_type', '!=', 'web'), eb('hook_id', 'not in', fullWeb)]));
    const taken = new Map(busy);
    const ids: number[] = [];
    for (const row of await due.execute()) {
      const key = hookKey(row);
      const n = taken.get(key) ?? 0;
      if (n >= HOOK_CONCURRENCY) continue;
      taken.set(key, n + 1);
      ids.push(row.id);
      if (ids.length >= limit) break;
    }
    if (!ids.length) return [];
    const claimed = await k
      .updateTable('hook_deliveries')
      .set({ locked_by: this.workerId, locked_until: new Date(Date.now() + this.leaseMs).toISOString() })
      .where('id', 'in', ids)
      .where('state', '=', 'pending')
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .returningAll()
      .execute();
    return claimed.sort((a, b) => (a.run_at < b.run_at ? -1 : a.run_at > b.run_at ? 1 : a.id - b.id));
  }

  /** Sends one claimed delivery and records the attempt (its own transaction); a delivery whose hook is gone is dropped. */
  async deliver(d: HookDeliveryRow): Promise<void> {
    const k = this.db.kysely;
    const hook: AnyHook | undefined =
      d.hook_type === 'web'
        ? await k.selectFrom('web_hooks').selectAll().where('id', '=', d.hook_id).executeTakeFirst()
        : await k.selectFrom('system_hooks').selectAll().where('id', '=', d.hook_id).executeTakeFirst();
    if (!hook) {
      await k.deleteFrom('hook_deliveries').where('id', '=', d.id).execute();
      return;
    }
    if (isWeb(hook) && !executable(hook)) {
      // auto-disabled meanwhile: not sent (WebHookService#execute answers "Hook disabled")
      await k
        .updateTable('hook_deliveries')
        .set({ state: 'failed', locked_by: null, locked_until: null, updated_at: nowIso() })
        .where('id', '=', d.id)
        .execute();
      return;
    }
    const o = await this.send(hook, d);
    await k.transaction().execute((trx) => this.record(trx, d, o, true, hook));
  }

  /** Claims and sends up to `limit` due deliveries, each on its own; the number claimed. */
  async deliverDue(limit = 64): Promise<number> {
    const claimed = await this.claim(limit);
    const results = await Promise.allSettled(claimed.map((d) => this.deliver(d)));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return claimed.length;
  }

  /**
   * One attempt now, recorded (the test endpoint and resends). With `retry`, a retryable failure is
   * scheduled as any other; the test endpoint does not retry (GitLab runs it once, inline).
   */
  async deliverNow(hook: AnyHook, payload: Record<string, unknown>, retry = false): Promise<Outcome> {
    const now = nowIso();
    const json = JSON.stringify(payload);
    const row = await this.db.kysely
      .insertInto('hook_deliveries')
      .values({
        ...this.newDelivery(hook, payload, json, crypto.randomUUID(), now),
        locked_by: this.workerId,
        locked_until: new Date(Date.now() + this.leaseMs).toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const o = await this.send(hook, row);
    await this.db.kysely.transaction().execute((trx) => this.record(trx, row, o, retry, hook));
    return o;
  }

  /** Sends a recorded delivery again (same Idempotency-Key), now; later retries as for any delivery. */
  async resend(hook: AnyHook, deliveryId: number): Promise<Outcome> {
    const until = new Date(Date.now() + this.leaseMs).toISOString();
    const now = nowIso();
    const row = await this.db.kysely
      .updateTable('hook_deliveries')
      .set({ state: 'pending', locked_by: this.workerId, locked_until: until, updated_at: now })
      .where('id', '=', deliveryId)
      .where('hook_id', '=', hook.id)
      .where('hook_type', '=', isWeb(hook) ? 'web' : 'system')
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new DeliveryBusy();
    const o = await this.send(hook, row);
    await this.db.kysely.transaction().execute((trx) => this.record(trx, row, o, true, hook));
    return o;
  }

  /** Every attempt of the hook's deliveries, newest first, with its delivery's state. */
  attemptsQuery(hookId: number, hookType: 'system' | 'web' = 'system') {
    return this.db.kysely
      .selectFrom('hook_attempts')
      .innerJoin('hook_deliveries', 'hook_deliveries.id', 'hook_attempts.delivery_id')
      .selectAll('hook_attempts')
      .select([
        'hook_deliveries.event_name',
        'hook_deliveries.payload',
        'hook_deliveries.idempotency_key',
        'hook_deliveries.state as delivery_state',
        'hook_deliveries.run_at as delivery_run_at',
      ])
      .where('hook_deliveries.hook_id', '=', hookId)
      .where('hook_deliveries.hook_type', '=', hookType)
      .orderBy('hook_attempts.id', 'desc');
  }

  async attemptOf(hookId: number, attemptId: number, hookType: 'system' | 'web' = 'system'): Promise<HookAttemptRow | undefined> {
    return this.db.kysely
      .selectFrom('hook_attempts')
      .innerJoin('hook_deliveries', 'hook_deliveries.id', 'hook_attempts.delivery_id')
      .selectAll('hook_attempts')
      .where('hook_deliveries.hook_id', '=', hookId)
      .where('hook_deliveries.hook_type', '=', hookType)
      .where('hook_attempts.id', '=', attemptId)
      .executeTakeFirst();
  }

  private async record(trx: Db['kysely'], d: HookDeliveryRow, o: Outcome, retry: boolean, hook: AnyHook): Promise<void> {
    const now = nowIso();
    hookDeliveries.inc({ hook_type: isWeb(hook) ? 'web' : 'system', outcome: o.result });
    if (isWeb(hook)) await this.updateFailureState(trx, hook.id, o.result === 'delivered');
    const attempt = d.attempts + 1;
    await trx
      .insertInto('hook_attempts')
      .values({
        delivery_id: d.id,
        attempt,
        url: o.url,
        request_headers: JSON.stringify(o.requestHeaders),
        response_status: o.status,
        error: o.error,
        duration_ms: o.durationMs,
        response_headers: JSON.stringify(o.headers),
        response_body: o.body,
        created_at: now,
      })
      .execute();
    const wait = this.opts.retrySchedule[attempt - 1];
    const again = retry && o.result === 'retry' && wait !== undefined;
    await trx
      .updateTable('hook_deliveries')
      .set({
        state: o.result === 'delivered' ? 'delivered' : again ? 'pending' : 'failed',
        attempts: attempt,
        last_status: o.status,
        run_at: again ? new Date(Date.now() + wait * 1000).toISOString() : d.run_at,
        locked_by: null,
        locked_until: null,
        updated_at: now,
      })
      .where('id', '=', d.id)
      .execute();
  }

  /**
   * WebHookService#update_hook_failure_state: a success re-enables the hook (enable!), a failure backs
   * it off (backoff!): after 3 failures it is disabled for 1 minute, doubling to a day; after 40, for good.
   */
  private async updateFailureState(trx: Db['kysely'], hookId: number, ok: boolean): Promise<void> {
    const h = await trx.selectFrom('web_hooks').select(['recent_failures', 'disabled_until']).where('id', '=', hookId).executeTakeFirst();
    if (!h) return;
    if (ok) {
      if (h.recent_failures === 0 && h.disabled_until === null) return;
      await trx.updateTable('web_hooks').set({ recent_failures: 0, disabled_until: null }).where('id', '=', hookId).execute();
      return;
    }
    const next = backoff(h);
    if (!next || (next.recent_failures === h.recent_failures && next.disabled_until === h.disabled_until)) return;
    await trx
      .updateTable('web_hooks')
      .set(next)
      .where('id', '=', hookId)
      .where('recent_failures', '=', h.recent_failures) // a concurrent attempt counted first: its count stands
      .execute();
  }

  /**
   * One POST with GitLab's headers (X-Gitlab-* named X-Service-*), under the guarded client's total
   * deadline. Never throws. The token goes as its UTF-8 bytes, line breaks removed (as GitLab does);
   * one with another control character (refused on input, but older rows may hold one) is not sent and
   * not retried.
   */
  private async send(hook: AnyHook, d: HookDeliveryRow): Promise<Outcome> {
    const web = isWeb(hook);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `Hearth/${this.opts.version}`,
      'idempotency-key': d.idempotency_key,
      'x-service-event': web ? webHookEvent(d.event_name, d.event_name === 'note' ? JSON.parse(d.payload) : {}) : 'System Hook',
      'x-service-webhook-uuid': crypto.randomUUID(),
      'x-service-instance': this.opts.externalUrl,
      'x-service-event-uuid': d.event_uuid,
    };
    const started = performance.now();
    const fail = (e: unknown, result: Outcome['result'], requestHeaders = headers): Outcome => ({
      url: maskUrl(hook.url),
      requestHeaders,
      status: INTERNAL_ERROR,
      error: storable(e instanceof Error ? e.message : String(e)),
      durationMs: Math.round(performance.now() - started),
      headers: {},
      body: '',
      result,
    });
    let token: string | null;
    let url = hook.url;
    let body = d.payload;
    let custom: Record<string, string> = {};
    try {
      token = this.hooks.tokenOf(hook);
      if (web) {
        // custom headers first: the product's own headers win over a custom header of the same name
        if (hook.custom_headers_encrypted) custom = JSON.parse(this.hooks.openSealed(hook.custom_headers_encrypted)) as Record<string, string>;
        const vars = hook.url_variables_encrypted ? (JSON.parse(this.hooks.openSealed(hook.url_variables_encrypted)) as Record<string, string>) : {};
        const target = interpolatedUrl(hook.url, vars);
        if (target === null) throw new Error('Invalid URL template');
        url = target;
      }
    } catch (e) {
      return fail(e, 'failed'); // a secret that does not open now never will
    }
    if (web && hook.custom_webhook_template) {
      try {
        body = renderTemplate(hook.custom_webhook_template, JSON.parse(d.payload) as Record<string, unknown>);
      } catch {
        return fail(new Error('Error while parsing rendered custom webhook template'), 'failed');
      }
    }
    const own = headers;
    const sent: Record<string, string> = {};
    // never a reserved name (Host, Cookie, Content-Length, X-Service-*, … — refused on input, older rows
    // may hold one); values go as their UTF-8 bytes, as the token does
    for (const [name, value] of Object.entries(custom))
      if (!Object.hasOwn(own, name.toLowerCase()) && !reservedHeader(name) && !(name.toLowerCase() === 'authorization' && hasUserinfo(url)))
        sent[name.toLowerCase()] = Buffer.from(value, 'utf8').toString('latin1');
    Object.assign(sent, own);
    if (token) sent['x-service-token'] = Buffer.from(token.replace(/[\r\n]/g, ''), 'utf8').toString('latin1');
    const logged: Record<string, string> = { ...sent };
    for (const name of Object.keys(custom))
      if (Object.hasOwn(logged, name.toLowerCase()) && !Object.hasOwn(own, name.toLowerCase())) logged[name.toLowerCase()] = '[REDACTED]';
    if (token) logged['x-service-token'] = '[REDACTED]';
    const shown = { url: maskUrl(hook.url), requestHeaders: logged };
    let res: OutboundResponse;
    try {
      res = await this.outbound.request({
        url,
        method: 'POST',
        headers: sent,
        body,
        verifyTls: hook.enable_ssl_verification === 1,
        timeoutMs: this.opts.timeoutMs,
        maxResponseBytes: RESPONSE_EXCERPT,
        rules: web ? await webHookRules(this.settings) : await systemHookRules(this.settings),
      });
    } catch (e) {
      const kind = e instanceof OutboundError ? e.kind : 'connection';
      return fail(e, kind === 'timeout' || kind === 'connection' ? 'retry' : 'failed', shown.requestHeaders);
    }
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers).slice(0, MAX_HEADERS)) kept[name] = storable(value);
    return {
      ...shown,
      status: String(res.status),
      error: null,
      durationMs: Math.round(res.durationMs),
      headers: kept,
      body: storable(res.body.subarray(0, RESPONSE_EXCERPT).toString('utf8')),
      result: res.status < 400 ? 'delivered' : res.status >= 500 ? 'retry' : 'failed',
    };
  }
}

/** Text as stored: PostgreSQL refuses NUL in text, so a receiver's NUL bytes become U+FFFD. */
function storable(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\ufffd') : text;
}

/** The kinds of events project and group hooks hear. */
const WEB_KINDS = new Set(['push', 'tag_push', 'merge_request', 'issue', 'note', 'pipeline', 'build']);

/** A resend while the delivery is being sent by a worker. */
export class DeliveryBusy extends Error {}
