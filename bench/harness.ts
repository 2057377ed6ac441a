// What the benchmarks share: a container on a fresh data directory, a public platform project, the app
// listening with its *floor* (a static payload of the same size as the endpoint's, served by the same
// Fastify process), autocannon rounds that alternate the endpoint and its floor, and the report.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config.ts';
import { createContainer, type Container } from '../src/container.ts';
import { buildApp } from '../src/app.ts';
import type { ProjectRow } from '../src/db/schema.ts';
import { projectRow } from '../test/helpers/rows.ts';
import { nowIso } from '../src/lib/time.ts';
import { gitEnv } from '../src/git/command.ts';

export const ROOT_TOKEN = 'glpat-bench-root-token';
export const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
export const CONNECTIONS = 10;

/** The real container on a fresh data directory (SQLite there, or `DATABASE_URL`), root's token set. */
export async function benchContainer(prefix: string, env: Record<string, string> = {}): Promise<{ c: Container; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const config = loadConfig(
    { DATA_DIR: dataDir, HEARTH_ROOT_PASSWORD: 'bench-password', HEARTH_ROOT_TOKEN: ROOT_TOKEN, LOG_LEVEL: 'silent', ...env },
    { databaseUrl: process.env.DATABASE_URL || null },
  );
  return { c: await createContainer(config, { log: pino({ level: 'silent' }) }), dataDir };
}

/** With DATABASE_URL (PostgreSQL): the bench gets a database of its own, `name`, dropped and made anew. */
export async function freshBenchDatabase(name: string): Promise<void> {
  if (!process.env.DATABASE_URL) return;
  const url = new URL(process.env.DATABASE_URL);
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  await admin.end();
  url.pathname = `/${name}`;
  process.env.DATABASE_URL = url.toString();
}

/** A public project of root's namespace with an empty bare repository (`main`). */
export async function publicProject(c: Container, name: string, projectPath: string): Promise<ProjectRow> {
  const now = nowIso();
  const ns = await c.db.kysely.selectFrom('namespaces').selectAll().where('owner_id', '=', 1).executeTakeFirstOrThrow();
  const project = await c.db.kysely
    .insertInto('projects')
    .values(projectRow(ns.id, projectPath, { creator_id: 1, name, visibility: 'public' }, now))
    .returningAll()
    .executeTakeFirstOrThrow();
  await c.repos.create(project, { defaultBranch: 'main' });
  return project;
}

export interface Round {
  rps: number;
  p50: number;
  p99: number;
  /** requests autocannon gave up on (10 s) or that failed: a miss, not a crash */
  failures: number;
}

export const median = <T>(xs: T[], key: (x: T) => number): T => [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)];

/**
 * The app on a local port, with `GET /bench/static/:i` answering `floor(i)` (set from a sample of the
 * endpoint), and the load test. `workers: 1` runs autocannon in its own thread, so that the load
 * generator does not share the server's thread; without it, both share the process's one.
 */
export async function serve(c: Container, opts: { workers?: number } = {}) {
  const floors = new Map<number, Buffer>();
  const app: FastifyInstance = await buildApp(c, (a) => {
    a.get('/bench/static/:i', { config: { api: 'health' } }, async (req, reply) => {
      const body = floors.get(Number((req.params as { i: string }).i)) ?? Buffer.from('[]');
      return reply.type('application/json').send(body);
    });
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });

  async function measure(url: string, headers: Record<string, string>, duration = DURATION): Promise<Round> {
    const r = await autocannon({ url: address + url, connections: CONNECTIONS, duration, headers, ...(opts.workers ? { workers: opts.workers } : {}) });
    if (r.non2xx) throw new Error(`${url}: ${r.non2xx} non-2xx responses`);
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, failures: r.errors + r.timeouts };
  }

  /**
   * The endpoint against its floor (`body`, a Buffer as the response cache keeps its bodies): a warm-up
   * each, then ROUNDS alternating rounds, the median round of each side (the machine's noise hits both).
   */
  async function againstFloor(i: number, url: string, headers: Record<string, string>, body: Buffer) {
    floors.set(i, body);
    const floorUrl = `/bench/static/${i}`;
    await measure(url, headers, 1);
    await measure(floorUrl, headers, 1);
    const reals: Round[] = [];
    const statics: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      reals.push(await measure(url, headers));
      statics.push(await measure(floorUrl, headers));
    }
    const real = median(reals, (x) => x.rps);
    const floor = median(statics, (x) => x.rps);
    return { real, floor, ratio: real.rps / floor.rps, failures: reals.reduce((n, x) => n + x.failures, 0) };
  }

  /**
   * The cache-miss variant under load: every request carries a query parameter the endpoint ignores with
   * a value never sent before (autocannon's `[<id>]`), so no cache has seen it. `throughput` at
   * CONNECTIONS connections; `latency`: one connection, the exact time of each response (median, p99).
   */
  async function missRound(url: string, headers: Record<string, string>) {
    const missUrl = `${url}${url.includes('?') ? '&' : '?'}miss=[<id>]`;
    const wide = await autocannon({
      url: address + missUrl,
      connections: CONNECTIONS,
      duration: DURATION,
      headers,
      idReplacement: true,
      ...(opts.workers ? { workers: opts.workers } : {}),
    });
    if (wide.non2xx) throw new Error(`${url} (miss): ${wide.non2xx} non-2xx responses`);
    const times: number[] = [];
    const r = await new Promise<autocannon.Result>((resolve, reject) => {
      const one = autocannon({ url: address + missUrl, connections: 1, duration: DURATION, headers, idReplacement: true }, (err, res) =>
        err ? reject(err) : resolve(res),
      );
      one.on('response', (_client, status, _bytes, ms) => {
        if (status === 200) times.push(ms);
      });
    });
    if (r.non2xx) throw new Error(`${url} (miss, one connection): ${r.non2xx} non-2xx responses`);
    times.sort((a, b) => a - b);
    return { rps: wide.requests.average, p50: times[Math.floor(times.length / 2)], p99: times[Math.floor(times.length * 0.99)], n: times.length };
  }

  /**
   * The mixed variant: the hot URL at CONNECTIONS connections while `write(r)` changes the listed table
   * every 100 ms (a write still running when the next is due is not doubled). ROUNDS rounds, the median.
   */
  async function mixedRounds(url: string, headers: Record<string, string>, write: (r: number) => Promise<unknown>) {
    const rounds: (Round & { writes: number })[] = [];
    let r = 1000;
    for (let n = 0; n < ROUNDS; n++) {
      let writes = 0;
      let busy = false;
      let failure: unknown = null;
      const timer = setInterval(() => {
        if (busy) return;
        busy = true;
        Promise.resolve(r++)
          .then(write)
          .then(
            () => writes++,
            (e) => (failure ??= e),
          )
          .finally(() => (busy = false));
      }, 100);
      const round = await measure(url, headers).finally(() => clearInterval(timer));
      while (busy) await new Promise((f) => setTimeout(f, 5));
      if (failure) throw failure;
      rounds.push({ ...round, writes });
    }
    return median(rounds, (x) => x.rps);
  }

  /**
   * One list endpoint as the list benches report it: a sample (200 and a non-empty page); the load test
   * against the floor; the first read after a write (`write(r)` changes a row the page shows; median of 21
   * in-process requests); the cache-miss variant (`missRound`) and the mixed one (`mixedRounds`, bar:
   * ≥ 0.5 of the read-only req/s). `bar.missMs`: the cache-miss median at one connection must not exceed it.
   * Answers the table row and its figures.
   */
  async function listScenario(
    i: number,
    s: { name: string; url: string },
    headers: Record<string, string>,
    bar: { ratio: number; p99: number; missMs?: number },
    write: (r: number) => Promise<unknown>,
    unit = 'rows',
  ): Promise<{ row: string; ok: boolean; missMs: number; afterWriteMs: number; mixedRatio: number }> {
    const sample = await app.inject({ method: 'GET', url: s.url, headers });
    if (sample.statusCode !== 200) throw new Error(`${s.url} → ${sample.statusCode} ${sample.body.slice(0, 200)}`);
    const rows = JSON.parse(sample.body);
    const length = Array.isArray(rows) ? rows.length : rows.results?.length;
    if (!length) throw new Error(`${s.url}: an empty page measures nothing`);
    const { real, floor, ratio, failures } = await againstFloor(i, s.url, headers, Buffer.from(sample.rawPayload));
    // after the load test, so that the route's code is as warm as in the other figures
    const afterWrite: number[] = [];
    for (let r = 0; r < 21; r++) {
      await write(r);
      const t = performance.now();
      await app.inject({ method: 'GET', url: s.url, headers });
      afterWrite.push(performance.now() - t);
    }
    const afterWriteMs = median(afterWrite, (x) => x);
    const miss = await missRound(s.url, headers);
    const mixed = await mixedRounds(s.url, headers, write);
    const mixedRatio = mixed.rps / real.rps;
    const missOk = bar.missMs === undefined || miss.p50 <= bar.missMs;
    const ok = ratio >= bar.ratio && real.p99 < bar.p99 && missOk && mixedRatio >= 0.5 && failures + mixed.failures === 0;
    const row = [
      `${s.name} (${length} ${unit}, ${sample.rawPayload.length} B)`,
      real.rps.toFixed(0),
      real.p50,
      real.p99,
      floor.rps.toFixed(0),
      ratio.toFixed(2),
      miss.rps.toFixed(0),
      miss.p50.toFixed(1),
      miss.p99.toFixed(1),
      afterWriteMs.toFixed(1),
      `${mixed.rps.toFixed(0)} (${mixed.writes} writes)`,
      mixedRatio.toFixed(2),
      `${ok ? 'ok' : 'MISSED'}${failures + mixed.failures ? ` (${failures + mixed.failures} timeouts/errors)` : ''}${missOk ? '' : ` (miss > ${bar.missMs} ms)`}`,
    ];
    return { row: `| ${row.join(' | ')} |`, ok, missMs: miss.p50, afterWriteMs, mixedRatio };
  }

  /**
   * The machine's speed as this bench sees it: the floor alone (a 4 kB static answer, one round). The CI benches'
   * bars are absolute times; this line tells a slow machine from a slow change (about 33,000 req/s on 2026-11-26's
   * machine, 3,900 on a slower one of the same kind).
   */
  async function machineFloor(): Promise<string> {
    floors.set(-1, Buffer.from(JSON.stringify({ pad: 'x'.repeat(4000) })));
    await measure('/bench/static/-1', {}, 1);
    const r = await measure('/bench/static/-1', {});
    return `machine: Fastify floor ${r.rps.toFixed(0)} req/s (4 kB static, ${CONNECTIONS} connections)`;
  }

  return { app, address, measure, againstFloor, missRound, mixedRounds, listScenario, machineFloor };
}

/** The header of the list benches' table (rows from listScenario). */
export function listTableHeader(bar: { ratio: number; p99: number; missMs?: number }): string[] {
  return [
    `Read-only: the hot URL at ${CONNECTIONS} connections (ratio: against the floor). Cache miss: each request a query string never sent before, req/s at ${CONNECTIONS} connections, p50/p99 at one. After a write: the first read after a change to a row of the page (in-process, median of 21). Mixed: the hot URL while a writer changes the listed table every 100 ms.`,
    '',
    `| scenario | req/s | p50 ms | p99 ms | static req/s | ratio | miss req/s | miss p50 ms | miss p99 ms | after a write ms | mixed req/s | mixed / read-only | bar (ratio ≥ ${bar.ratio}, p99 < ${bar.p99} ms${bar.missMs ? `, miss p50 ≤ ${bar.missMs} ms` : ''}, mixed ≥ 0.5) |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
}

/** The lines of the result table: printed as they come, and written to `BENCH_OUT` at the end. */
export class Report {
  private readonly lines: string[] = [];

  line(s: string): void {
    this.lines.push(s);
    console.log(s);
  }

  /** `append`: after an earlier part of `npm run bench` in the same file */
  save(append: boolean): void {
    const out = process.env.BENCH_OUT;
    if (!out) return;
    if (append) fs.appendFileSync(out, this.lines.join('\n') + '\n');
    else fs.writeFileSync(out, this.lines.join('\n') + '\n');
  }
}

/** A JSON (or multipart, for a FormData body) client of the listening app, timing each request. */
export function apiClient(address: string, auth: Record<string, string>) {
  return async function api(method: string, url: string, body?: unknown): Promise<{ status: number; json: any; ms: number }> {
    const t0 = performance.now();
    const form = body instanceof FormData;
    const res = await fetch(address + url, {
      method,
      headers: { ...auth, ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : form ? body : JSON.stringify(body),
    });
    const text = await res.text();
    const ms = performance.now() - t0;
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, json, ms };
  };
}

/** `git fast-import` of a stream into a bare repository (the benches build their repositories this way). */
export async function fastImport(gitDir: string, stream: string): Promise<void> {
  const child = spawn('git', ['--git-dir', gitDir, 'fast-import', '--quiet'], { env: gitEnv(), stdio: ['pipe', 'inherit', 'inherit'] });
  const done = new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))));
  child.stdin.end(stream);
  await done;
}

/** A fast-import `data` command. */
export const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
