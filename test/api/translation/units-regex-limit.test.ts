// A units search with a regular expression can never hold the server. Patterns RE2
// refuses are 400 {"q": …} before any query; the others run where a time limit reaches them (a worker
// thread on SQLite, statement_timeout on PostgreSQL), so health checks answer while one runs, and past
// the limit the search is 400 {"q": "Search took longer…"}; too many at once are 503 with Retry-After.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { HOST, poComponent } from '../../helpers/translation.ts';
import { CLIENT_QUEUE, QUEUE, SLOTS } from '../../../src/db/limited-reads.ts';

// long enough that on a loaded machine the searches holding the slots are still running when the checks that
// must not wait for them (health, the refused search) are answered: those checks assert that order, not a time
const LIMIT_MS = 2500;
const ROWS = 3000;
/**
 * A valid RE2 pattern that costs about 35 ms (re2js, the DFA gives up: too many states) and 2 ms
 * (PostgreSQL) per unit of the texts below: seconds over ROWS units; V8's backtracking never ends.
 */
const SLOW = 'source:r"(.*m.{25}){1,30}[bc]$"';

/** ROWS units of the cs translation whose sources are 1080 pseudo-random `m`/`x` then " <n>" (n = 1…ROWS) */
async function seedLongUnits(ctx: TestApp): Promise<void> {
  const k = ctx.c.db.kysely;
  const tr = await k
    .selectFrom('translations')
    .innerJoin('languages', 'languages.id', 'translations.language_id')
    .select(['translations.id', 'translations.component_id', 'translations.language_id'])
    .where('languages.code', '=', 'cs')
    .executeTakeFirstOrThrow();
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const now = '2024-01-01T00:00:00.000Z';
  const rows = Array.from({ length: ROWS }, (_, j) => {
    const n = j + 1;
    const source = Array.from({ length: 1080 }, () => (random() < 0.5 ? 'm' : 'x')).join('') + ` ${n}`;
    const base = { translation_id: tr.id, component_id: tr.component_id, language_id: tr.language_id, position: 1000 + n };
    return { ...base, id_hash: String(n), content_hash: String(n), source, target: '', timestamp: now, last_updated: now };
  });
  for (let i = 0; i < rows.length; i += 500)
    await k
      .insertInto('units')
      .values(rows.slice(i, i + 500))
      .execute();
}

const get = (ctx: TestApp, q: string, path = '/api/units/', remoteAddress?: string) =>
  ctx.app.inject({ method: 'GET', url: `${path}?q=${encodeURIComponent(q)}`, headers: HOST, remoteAddress });
/** Resolves once `n` searches hold or wait for a slot (the gate's state, looked at every few ms). */
async function loadReaches(ctx: TestApp, n: number): Promise<void> {
  for (;;) {
    const { running, waiting } = ctx.c.db.limited.load();
    if (running + waiting >= n) return;
    await sleep(5);
  }
}

const sources = (res: { json(): any }) => res.json().results.map((u: any) => `${u.language_code}:${u.source.split('\u001e')[0]}`);

test('units search with a regular expression: refused patterns, the time limit, health checks meanwhile, the queue', async (t) => {
  const ctx = await buildTestApp(t, { searchTimeoutMs: LIMIT_MS });
  await poComponent(t, ctx);
  const dialect = ctx.c.db.dialect;

  // refused before any query: what RE2 refuses (the pattern first), anonymously, on both units lists
  for (const [q, message] of [
    ['source:r"(.*){1,32000}[bc]"', 'Invalid regular expression: invalid repeat count: `{1,32000}`'],
    ['r"(a)\\1"', 'Invalid regular expression: invalid escape sequence: `\\1`'],
    ['target:r"x(?=y)"', 'Invalid regular expression: invalid or unsupported Perl syntax: `(?=`'],
    ['source:r"(.*){1,1000}[bc]"', 'Invalid regular expression: pattern too large: 5002 instructions, at most 2000'],
  ]) {
    for (const path of ['/api/units/', '/api/translations/hello/po/cs/units/']) {
      const res = await get(ctx, q, path);
      assert.equal(res.statusCode, 400, `${path} ${q}`);
      assert.deepEqual(res.json(), { q: `Could not parse query string: ${message}` });
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.headers.vary, 'Accept');
    }
  }
  // RE2 accepts it, PostgreSQL does not (its repeat counts stop at 255): 400 there, never 500
  const dupmax = await get(ctx, 'source:r"(.*){1,300}[bc]"');
  if (dialect === 'postgres') {
    assert.equal(dupmax.statusCode, 400);
    assert.deepEqual(dupmax.json(), { q: 'Could not parse query string: Invalid regular expression: invalid repetition count(s)' });
  } else {
    assert.equal(dupmax.statusCode, 200);
    assert.deepEqual(sources(dupmax), []);
  }

  // patterns RE2 accepts work as before, nested repetition included
  const normal = await get(ctx, 'source:r"^(Hello|Orange)" AND NOT language:en');
  assert.equal(normal.statusCode, 200);
  assert.deepEqual(sources(normal), ['cs:Hello, world!', 'cs:Orange', 'de:Hello, world!', 'de:Orange']);
  assert.deepEqual(sources(await get(ctx, 'r"(?i)^APP(l+e)+$"', '/api/translations/hello/po/de/units/')), ['de:Apple']);

  // a long case-insensitive search for non-ASCII text (on SQLite a REGEXP of the server's own) is no error
  const long = await get(ctx, 'Ü'.repeat(2100));
  assert.equal(long.statusCode, 200);
  assert.equal(long.json().count, 0);

  await seedLongUnits(ctx);
  // the first search with a regular expression starts a worker thread: the reference for what the time limit
  // may be overrun by (that start and a quick scan), measured on this machine in this run
  const fewStarted = performance.now();
  const few = await get(ctx, 'source:r" 299\\d$"');
  const fewMs = performance.now() - fewStarted;
  assert.equal(few.statusCode, 200);
  assert.equal(few.json().count, 10);
  assert.deepEqual(
    few.json().results.map((u: any) => u.source.slice(1081)),
    ['2990', '2991', '2992', '2993', '2994', '2995', '2996', '2997', '2998', '2999'],
  );

  // a search that would take seconds: health checks answer at once meanwhile; the search stops at the limit
  const started = performance.now();
  let done = false;
  const search = get(ctx, SLOW).finally(() => (done = true));
  await loadReaches(ctx, 1); // the search runs
  // a search holding the server's own thread would let the health checks through only after it ended: up to three
  // answer while it runs (on a slow machine the limit may come before all three did, but never before the first)
  let answeredMeanwhile = 0;
  while (answeredMeanwhile < 3 && !done) {
    const health = await ctx.app.inject({ method: 'GET', url: '/-/health' });
    assert.equal(health.statusCode, 200);
    assert.equal(health.body, 'Hearth OK');
    if (!done) answeredMeanwhile++;
  }
  assert.ok(answeredMeanwhile >= 1, 'no health check answered while the search was running');
  const res = await search;
  const took = performance.now() - started;
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { q: 'Search took longer than 2.5 s and was stopped; use a simpler regular expression or narrow the search.' });
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
  assert.equal(res.headers.vary, 'Accept');
  assert.equal(res.headers['retry-after'], undefined);
  // the limit, plus starting a worker thread the first time (run to its end, the search takes 6 s on PostgreSQL,
  // minutes on SQLite; the message above already says the limit stopped it). What may come on top of the limit
  // is judged against the first quick search of this run, which paid the same start, with a wide margin
  const over = Math.max(3500, 3 * fewMs);
  assert.ok(took >= LIMIT_MS && took < LIMIT_MS + over, `the search took ${took} ms (the first quick one ${fewMs} ms)`);

  // the worker stopped at the limit is replaced: searches go on
  const after = await get(ctx, 'source:r" 1234$"');
  assert.equal(after.statusCode, 200);
  assert.deepEqual(
    after.json().results.map((u: any) => u.source.slice(1081)),
    ['1234'],
  );

  // SLOTS searches run, QUEUE wait (each at most the limit), one more is refused at once: 503 with Retry-After
  // (the first is the search above again: not answered from the response cache, it runs or waits again).
  // Each from its own address: one client runs one search at a time (the next test).
  const t1 = performance.now();
  let first = 0;
  let settled = 0;
  const burst = [get(ctx, SLOW, undefined, '10.1.0.0').finally(() => (first = performance.now() - t1))];
  for (let i = 1; i < SLOTS + QUEUE; i++) burst.push(get(ctx, `${SLOW} AND NOT id:${i}`, undefined, `10.1.0.${i}`));
  for (const b of burst) b.finally(() => settled++);
  await loadReaches(ctx, SLOTS + QUEUE); // all of them are running or waiting
  const busy = await get(ctx, `${SLOW} AND NOT id:-1`, undefined, '10.1.1.1');
  assert.equal(settled, 0, 'refused at once: before any of the searches holding or waiting for a slot ended');
  assert.equal(busy.statusCode, 503);
  assert.deepEqual(busy.json(), { detail: 'Too many searches with regular expressions are running, try again later.' });
  assert.equal(busy.headers['retry-after'], '3');
  assert.equal(busy.headers['content-type'], 'application/json');
  assert.equal(busy.headers.allow, 'GET, HEAD, OPTIONS');
  // the waiting ones run when a slot frees in time, or give up (503) after waiting as long as the limit
  const statuses = (await Promise.all(burst)).map((r) => r.statusCode);
  assert.ok(
    statuses.every((s) => s === 400 || s === 503),
    String(statuses),
  );
  assert.ok(statuses.filter((s) => s === 400).length >= SLOTS, String(statuses));
  assert.ok(first >= LIMIT_MS, `the repeated search answered after ${first} ms`);
  assert.equal((await get(ctx, 'source:r" 1234$"')).statusCode, 200);
});

test('searches with a regular expression are fair between clients: one runs one at a time, another always gets the free slot', async (t) => {
  const ctx = await buildTestApp(t, { searchTimeoutMs: 6000 });
  await poComponent(t, ctx);
  await seedLongUnits(ctx);
  const settled: string[] = [];
  const send = (name: string, q: string, address: string) =>
    get(ctx, q, undefined, address).then((r) => {
      settled.push(name);
      return r;
    });
  // client A: two slow searches at once; the second waits for the first, even with a slot free
  const a1 = send('a1', SLOW, '10.2.0.1');
  const a2 = send('a2', `${SLOW} AND NOT id:1`, '10.2.0.1');
  await loadReaches(ctx, 2);
  assert.deepEqual(ctx.c.db.limited.load(), { running: 1, waiting: 1 });
  // client B gets the free slot at once: answered while both of A's are still running or waiting
  const b = await send('b', 'source:r" 1234$"', '10.2.0.2');
  assert.equal(b.statusCode, 200);
  assert.deepEqual(
    b.json().results.map((u: any) => u.source.slice(1081)),
    ['1234'],
  );
  assert.deepEqual(settled, ['b']);
  // A may have CLIENT_QUEUE searches waiting; one more is refused at once, while the others still run or wait
  const waiting = [];
  for (let i = 2; i <= CLIENT_QUEUE; i++) waiting.push(send(`a${i + 1}`, `${SLOW} AND NOT id:${i}`, '10.2.0.1'));
  await loadReaches(ctx, 1 + CLIENT_QUEUE);
  const refused = await send('refused', `${SLOW} AND NOT id:-2`, '10.2.0.1');
  assert.equal(refused.statusCode, 503);
  assert.deepEqual(refused.json(), { detail: 'Too many searches with regular expressions are running, try again later.' });
  assert.deepEqual(settled, ['b', 'refused']);
  // the one of A's first two that got the slot (a1, unless a loaded machine let a2 in first) runs to the limit;
  // the waiters then run or give up, one at a time
  const [first, second] = await Promise.all([a1, a2]);
  assert.ok(
    [first, second].some((r) => r.statusCode === 400),
    `${first.statusCode},${second.statusCode}`,
  );
  const rest = [first.statusCode === 400 ? second : first, ...(await Promise.all(waiting))];
  assert.ok(
    rest.every((r) => r.statusCode === 400 || r.statusCode === 503),
    rest.map((r) => r.statusCode).join(),
  );
  assert.deepEqual(ctx.c.db.limited.load(), { running: 0, waiting: 0 });
});
