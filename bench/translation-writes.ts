// npm run bench:translation-writes (the sixth part of `npm run bench`): the translation write side.
// A platform project's repository holds `po/<code>.po` for 100 languages × 100 strings (10,000 units in
// 100 files) and `big/<code>.po`, one language × 5,000 strings; two components follow it.
//   1. every one of the 10,000 units edited once through PATCH /api/units/:id/ (10 clients in parallel);
//   2. sustained PATCH with autocannon (10 connections, every request a real change: a fresh target);
//      statistics then compared with a recount of the units (they must be exact);
//   3. commit of every pending edit (10,000+ across 100 files): POST …/repository/ {"operation":"commit"};
//   4. upload of a 5,000-unit PO file (method translate, conflicts replace-translated);
//   5. a real `git push` over HTTP adding a string, until the unit is there (the component follows its
//      project): SAMPLES pushes, p50/p99. The translations were pushed upstream after step 3, so that
//      the pushed strings build on them (an append next to a locally edited entry is a rebase conflict).
// Writes have no cache: every figure is the miss path.
// Bars: PATCH ≥ 500 edits/s on SQLite, ≥ 300/s on PostgreSQL, statistics exact; commit of
// 10,000 pending edits < 10 s; upload of 5,000 units < 3 s; push → rescanned p99 < 5 s.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { gitEnv } from '../src/git/command.ts';
import { apiClient, benchContainer, CONNECTIONS, DURATION, data, fastImport, median, publicProject, Report, ROOT_TOKEN, ROUNDS, serve } from './harness.ts';

const LANGUAGES = 100;
const UNITS = 100;
const BIG = 5_000;
const SAMPLES = Number(process.env.BENCH_PUSHES ?? 20);
const postgres = Boolean(process.env.DATABASE_URL);
const BAR = { patch: postgres ? 300 : 500, commitMs: 10_000, uploadMs: 3_000, pushP99: 5_000 };

const { c, dataDir } = await benchContainer('hearth-bench-tw-');
const k = c.db.kysely;
const AUTH = { authorization: `Token ${ROOT_TOKEN}` };
const report = new Report();
const line = (x: string) => report.line(x);
const check = (ok: boolean, what: string) => {
  if (!ok) throw new Error(`wrong answer: ${what}`);
};

const codes = (await k.selectFrom('languages').select(['code', 'population']).where('code', '!=', 'en').execute())
  .filter((l) => /^[a-z]{2,3}$/.test(l.code))
  .sort((a, b) => Number(b.population) - Number(a.population) || (a.code < b.code ? -1 : 1))
  .slice(0, LANGUAGES)
  .map((l) => l.code);
check(codes.length === LANGUAGES, `${LANGUAGES} languages`);

const header = (code: string) =>
  `msgid ""\nmsgstr ""\n"Project-Id-Version: bench 1.0\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Language: ${code}\\n"\n"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n`;
const poFile = (code: string, n: number, target: (i: number) => string) => {
  let s = header(code);
  for (let i = 0; i < n; i++) s += `\n#: src/file${i % 7}.c:${i + 1}\nmsgid "String number ${i} of the bench"\nmsgstr "${target(i)}"\n`;
  return s;
};

const platform = await publicProject(c, 'Strings', 'strings');
const bare = c.repos.pathOf(platform);
{
  const parts = [`commit refs/heads/main\nmark :1\ncommitter Ada Lovelace <ada@example.com> 1700000000 +0000\n`, data('Add translations\n')];
  for (const code of codes) parts.push(`M 100644 inline po/${code}.po\n${data(poFile(code, UNITS, (i) => (i % 2 ? '' : `${code} ${i}`)))}`);
  parts.push(`M 100644 inline big/de.po\n${data(poFile('de', BIG, () => ''))}`);
  parts.push('\n');
  await fastImport(bare, parts.join(''));
}
c.repos.repository(platform).touchRefs();
c.worker.start();

const { app, address } = await serve(c, { workers: 1 });

const api = apiClient(address, AUTH);
async function ok(method: string, url: string, body?: unknown, status = 200) {
  const r = await api(method, url, body);
  if (r.status !== status) throw new Error(`${method} ${url} → ${r.status} ${JSON.stringify(r.json).slice(0, 400)}`);
  return r;
}

const ns = await k.selectFrom('namespaces').select('full_path').where('id', '=', platform.namespace_id).executeTakeFirstOrThrow();
const repoUrl = `${c.config.externalUrl}/${ns.full_path}/strings.git`;
await ok('POST', '/api/projects/', { name: 'Bench', slug: 'bench', web: 'https://bench.example/' }, 201);
await ok('POST', '/api/projects/bench/components/', { name: 'Strings', slug: 'strings', repo: repoUrl, file_format: 'po', filemask: 'po/*.po' }, 201);
await ok('POST', '/api/projects/bench/components/', { name: 'Big', slug: 'big', repo: repoUrl, file_format: 'po', filemask: 'big/*.po' }, 201);
const component = await k.selectFrom('components').selectAll().where('slug', '=', 'strings').executeTakeFirstOrThrow();
const units = await k
  .selectFrom('units')
  .innerJoin('translations', 'translations.id', 'units.translation_id')
  .select(['units.id'])
  .where('units.component_id', '=', component.id)
  .where('translations.is_source', '=', 0)
  .orderBy('units.id')
  .execute();
check(units.length === LANGUAGES * UNITS, `${LANGUAGES * UNITS} units scanned (found ${units.length})`);
line(`| translation writes (${postgres ? 'PostgreSQL' : 'SQLite'}) | figure | bar | |`);
line('|---|---|---|---|');

// --- 1. every unit edited once, 10 clients ---
{
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < units.length) {
        const u = units[next++];
        await ok('PATCH', `/api/units/${u.id}/`, { target: `edited ${u.id}`, state: 20 });
      }
    }),
  );
  const rate = units.length / ((performance.now() - t0) / 1000);
  line(
    `| PATCH /api/units/:id/, each of ${units.length} units once (10 clients, same process) | ${rate.toFixed(0)} edits/s | ≥ ${BAR.patch} | ${rate >= BAR.patch ? 'ok' : 'MISSED'} |`,
  );
}

// --- 2. sustained PATCH, autocannon in its own thread; every request a real change ---
{
  const requests = units.slice(0, 1000).map((u) => ({ method: 'PATCH' as const, path: `/api/units/${u.id}/`, body: `{"target":"load [<id>]","state":20}` }));
  const rounds: { rps: number; p99: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const res = await autocannon({
      url: address,
      connections: CONNECTIONS,
      duration: DURATION,
      workers: 1,
      idReplacement: true,
      headers: { ...AUTH, 'content-type': 'application/json' },
      requests,
    });
    if (res.non2xx) throw new Error(`sustained PATCH: ${res.non2xx} non-2xx responses`);
    rounds.push({ rps: res.requests.average, p99: res.latency.p99 });
  }
  const m = median(rounds, (x) => x.rps);
  line(
    `| PATCH /api/units/:id/ sustained (autocannon, ${CONNECTIONS} connections, median of ${ROUNDS}×${DURATION} s) | ${m.rps.toFixed(0)} edits/s, p99 ${m.p99} ms | ≥ ${BAR.patch} | ${m.rps >= BAR.patch ? 'ok' : 'MISSED'} |`,
  );
}

// statistics exact: the counters kept by delta against a recount of the units
{
  const kept = await k
    .selectFrom('translations')
    .select(['id', 'total', 'translated', 'translated_words', 'fuzzy', 'approved'])
    .where('component_id', '=', component.id)
    .orderBy('id')
    .execute();
  const counted = await k
    .selectFrom('units')
    .select([
      'translation_id as id',
      sql<number>`count(*)`.as('total'),
      sql<number>`sum(case when state >= 20 then 1 else 0 end)`.as('translated'),
      sql<number>`sum(case when state >= 20 then num_words else 0 end)`.as('translated_words'),
      sql<number>`sum(case when state in (10, 11, 12) then 1 else 0 end)`.as('fuzzy'),
      sql<number>`sum(case when state = 30 then 1 else 0 end)`.as('approved'),
    ])
    .where('component_id', '=', component.id)
    .groupBy('translation_id')
    .orderBy('translation_id')
    .execute();
  const norm = (rows: Record<string, unknown>[]) => JSON.stringify(rows.map((r) => Object.fromEntries(Object.entries(r).map(([key, v]) => [key, Number(v)]))));
  const exact = norm(kept) === norm(counted);
  line(`| statistics after the edits, against a recount of the units | ${exact ? 'exact' : 'DIFFERENT'} | exact | ${exact ? 'ok' : 'MISSED'} |`);
}

// --- 3. commit every pending edit ---
{
  const pending = await k
    .selectFrom('units')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.count<number>('translation_id').distinct().as('files')])
    .where('component_id', '=', component.id)
    .where('pending', '=', 1)
    .executeTakeFirstOrThrow();
  const r = await ok('POST', '/api/components/bench/strings/repository/', { operation: 'commit' });
  check(r.json.result === true, `commit → ${JSON.stringify(r.json)}`);
  const left = await k
    .selectFrom('units')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('component_id', '=', component.id)
    .where('pending', '=', 1)
    .executeTakeFirstOrThrow();
  check(Number(left.n) === 0, `nothing pending after the commit (${left.n} left)`);
  line(
    `| commit of ${pending.n} pending edits across ${pending.files} files (POST …/repository/ {"operation":"commit"}) | ${r.ms.toFixed(0)} ms | < ${BAR.commitMs} ms | ${r.ms < BAR.commitMs ? 'ok' : 'MISSED'} |`,
  );
}

// the translations go upstream (a push into the platform project: the pushes below then build on them)
{
  const r = await ok('POST', '/api/components/bench/strings/repository/', { operation: 'push' });
  check(r.json.result === true, `push → ${JSON.stringify(r.json)}`);
  line(`| push of those commits into the platform project (POST …/repository/ {"operation":"push"}) | ${r.ms.toFixed(0)} ms | | |`);
}

// --- 4. upload of a 5,000-unit PO file ---
{
  const form = new FormData();
  form.append('file', new Blob([poFile('de', BIG, (i) => `Übersetzung ${i}`)]), 'de.po');
  form.append('method', 'translate');
  form.append('conflicts', 'replace-translated');
  const r = await ok('POST', '/api/translations/bench/big/de/file/', form);
  check(r.json.accepted === BIG && r.json.total === BIG, `upload → ${JSON.stringify(r.json)}`);
  line(`| upload of a ${BIG}-unit PO file (method translate) | ${r.ms.toFixed(0)} ms | < ${BAR.uploadMs} ms | ${r.ms < BAR.uploadMs ? 'ok' : 'MISSED'} |`);
}

// --- 5. git push → the component rescanned ---
{
  const work = path.join(dataDir, 'push-work');
  const authUrl = address.replace('http://', `http://root:${ROOT_TOKEN}@`) + `/${ns.full_path}/strings.git`;
  // asynchronous: the server answering git is this very process
  const run = promisify(execFile);
  const g = (...args: string[]) => run('git', ['-C', work, ...args], { env: gitEnv() });
  await run('git', ['clone', '-q', authUrl, work], { env: gitEnv() });
  await g('config', 'user.name', 'Ada Lovelace');
  await g('config', 'user.email', 'ada@example.com');
  const file = path.join(work, 'po', `${codes[0]}.po`);
  const translation = await k
    .selectFrom('translations')
    .select('id')
    .where('component_id', '=', component.id)
    .where('language_code', '=', codes[0])
    .executeTakeFirstOrThrow();
  const count = async () =>
    Number(
      (
        await k
          .selectFrom('units')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('translation_id', '=', translation.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const before = await count();
    fs.appendFileSync(file, `\nmsgid "Pushed string ${i}"\nmsgstr ""\n`);
    await g('commit', '-qam', `Add pushed string ${i}`);
    const t0 = performance.now();
    await g('push', '-q', 'origin', 'HEAD:main');
    while ((await count()) <= before) {
      if (performance.now() - t0 > 30_000) throw new Error(`push ${i}: the new unit did not appear within 30 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const p50 = samples[Math.floor(samples.length / 2)];
  const p99 = samples[Math.min(samples.length - 1, Math.ceil(samples.length * 0.99) - 1)];
  line(
    `| git push → new unit visible (component follows its project), ${SAMPLES} pushes | p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms | p99 < ${BAR.pushP99} ms | ${p99 < BAR.pushP99 ? 'ok' : 'MISSED'} |`,
  );
}

report.save(true);
await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
