// Deliveries of events to system hooks. System events wait in the outbox (`jobs`, kind system_event),
// written with their cause; `dispatch` turns each into one delivery per hook that wants it (in one
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
import type { HookAttemptRow, HookDeliveryRow, SystemHookRow } from '../../db/schema.ts';
import { skipLocked } from '../../db/sql.ts';
import { maskUrl, OutboundError, type Outbound, type OutboundResponse } from '../../lib/outbound.ts';
import { nowIso } from '../../lib/time.ts';
import { SYSTEM_EVENT_JOB } from '../events/system-events.ts';
import type { SettingsService } from '../settings/settings.service.ts';
import { pushMatches } from './branch-filter.ts';
import { systemHookRules, type SystemHooksService } from './system-hooks.service.ts';

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
    case 'pipeline':
    case 'build':
      return false; // project and group hooks only
    default:
      return true;
  }
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

export class HookDeliveries {
  /** who holds a claim (a worker process) */
  readonly workerId = `${process.pid}-${crypto.randomUUID().slice(0, 8)}`;

  constructor(
    private readonly db: Db,
    private readonly hooks: SystemHooksService,
    private readonly outbound: Outbound,
    private readonly settings: SettingsService,
    private readonly opts: DeliveryOptions,
  ) {}

  private get leaseMs(): number {
    return this.opts.timeoutMs + 60_000;
  }

  /** Turns up to `limit` queued system events into deliveries; the number of events taken. */
  async dispatch(limit = 200): Promise<number> {
    const now = nowIso();
    const until = new Date(Date.now() + this.leaseMs).toISOString();
    const k = this.db.kysely;
    const due = k
      .selectFrom('jobs')
      .select('id')
      .where('kind', '=', SYSTEM_EVENT_JOB)
      .where((eb) => eb.or([eb('state', '=', 'queued'), eb.and([eb('state', '=', 'running'), eb('locked_until', '<', now)])]))
      .where('run_at', '<=', now)
      .orderBy('id')
      .limit(limit)
      .modifyEnd(skipLocked(this.db.dialect));
    const jobs = await k
      .updateTable('jobs')
      .set({ state: 'running', locked_by: this.workerId, locked_until: until, updated_at: now })
      .where('id', 'in', due)
      .returning(['id', 'payload'])
      .execute();
    if (!jobs.length) return 0;
    jobs.sort((a, b) => a.id - b.id);
    const hooks = await k.selectFrom('system_hooks').selectAll().orderBy('id').execute();
    await k.transaction().execute(async (trx) => {
      const rows = [];
      for (const job of jobs) {
        const payload = JSON.parse(job.payload) as Record<string, unknown>;
        const eventUuid = crypto.randomUUID();
        for (const hook of hooks) {
          if (!hookWants(hook, payload)) continue;
          rows.push(this.newDelivery(hook.id, payload, job.payload, eventUuid, now));
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

  private newDelivery(hookId: number, payload: Record<string, unknown>, json: string, eventUuid: string, now: string) {
    return {
      hook_id: hookId,
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
    const full = [...busy].filter(([, n]) => n >= HOOK_CONCURRENCY).map(([hookId]) => hookId);
    let due = k
      .selectFrom('hook_deliveries')
      .select(['id', 'hook_id'])
      .where('state', '=', 'pending')
      .where('run_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .orderBy('run_at')
      .orderBy('id')
      .limit(limit * HOOK_CONCURRENCY);
    if (full.length) due = due.where('hook_id', 'not in', full);
    const taken = new Map(busy);
    const ids: number[] = [];
    for (const row of await due.execute()) {
      const n = taken.get(row.hook_id) ?? 0;
      if (n >= HOOK_CONCURRENCY) continue;
      taken.set(row.hook_id, n + 1);
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
    const hook = await k.selectFrom('system_hooks').selectAll().where('id', '=', d.hook_id).executeTakeFirst();
    if (!hook) {
      await k.deleteFrom('hook_deliveries').where('id', '=', d.id).execute();
      return;
    }
    const o = await this.send(hook, d);
    await k.transaction().execute((trx) => this.record(trx, d, o, true));
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
  async deliverNow(hook: SystemHookRow, payload: Record<string, unknown>, retry = false): Promise<Outcome> {
    const now = nowIso();
    const json = JSON.stringify(payload);
    const row = await this.db.kysely
      .insertInto('hook_deliveries')
      .values({
        ...this.newDelivery(hook.id, payload, json, crypto.randomUUID(), now),
        locked_by: this.workerId,
        locked_until: new Date(Date.now() + this.leaseMs).toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const o = await this.send(hook, row);
    await this.db.kysely.transaction().execute((trx) => this.record(trx, row, o, retry));
    return o;
  }

  /** Sends a recorded delivery again (same Idempotency-Key), now; later retries as for any delivery. */
  async resend(hook: SystemHookRow, deliveryId: number): Promise<Outcome> {
    const until = new Date(Date.now() + this.leaseMs).toISOString();
    const now = nowIso();
    const row = await this.db.kysely
      .updateTable('hook_deliveries')
      .set({ state: 'pending', locked_by: this.workerId, locked_until: until, updated_at: now })
      .where('id', '=', deliveryId)
      .where('hook_id', '=', hook.id)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new DeliveryBusy();
    const o = await this.send(hook, row);
    await this.db.kysely.transaction().execute((trx) => this.record(trx, row, o, true));
    return o;
  }

  /** Every attempt of the hook's deliveries, newest first, with its delivery's state. */
  attemptsQuery(hookId: number) {
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
      .orderBy('hook_attempts.id', 'desc');
  }

  async attemptOf(hookId: number, attemptId: number): Promise<HookAttemptRow | undefined> {
    return this.db.kysely
      .selectFrom('hook_attempts')
      .innerJoin('hook_deliveries', 'hook_deliveries.id', 'hook_attempts.delivery_id')
      .selectAll('hook_attempts')
      .where('hook_deliveries.hook_id', '=', hookId)
      .where('hook_attempts.id', '=', attemptId)
      .executeTakeFirst();
  }

  private async record(trx: Db['kysely'], d: HookDeliveryRow, o: Outcome, retry: boolean): Promise<void> {
    const now = nowIso();
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
   * One POST with GitLab's headers (X-Gitlab-* named X-Service-*), under the guarded client's total
   * deadline. Never throws. The token goes as its UTF-8 bytes, line breaks removed (as GitLab does);
   * one with another control character (refused on input, but older rows may hold one) is not sent and
   * not retried.
   */
  private async send(hook: SystemHookRow, d: HookDeliveryRow): Promise<Outcome> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `Hearth/${this.opts.version}`,
      'idempotency-key': d.idempotency_key,
      'x-service-event': 'System Hook',
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
    try {
      token = this.hooks.tokenOf(hook);
    } catch (e) {
      return fail(e, 'failed'); // a token that does not open now never will
    }
    if (token) headers['x-service-token'] = Buffer.from(token.replace(/[\r\n]/g, ''), 'utf8').toString('latin1');
    const shown = { url: maskUrl(hook.url), requestHeaders: token ? { ...headers, 'x-service-token': '[REDACTED]' } : headers };
    let res: OutboundResponse;
    try {
      res = await this.outbound.request({
        url: hook.url,
        method: 'POST',
        headers,
        body: d.payload,
        verifyTls: hook.enable_ssl_verification === 1,
        timeoutMs: this.opts.timeoutMs,
        maxResponseBytes: RESPONSE_EXCERPT,
        rules: await systemHookRules(this.settings),
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

/** A resend while the delivery is being sent by a worker. */
export class DeliveryBusy extends Error {}
