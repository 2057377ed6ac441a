// npm run bench:translation (the fourth part of `npm run bench`): the translation API at scale — one
// component of 100 languages × 5,000 units (500,000 units, plus the 5,000 source strings). A platform
// project's bare repository gets `po/<code>.po` for the 100 most spoken languages of the `languages`
// table (`en`, the source, left out) in one `git fast-import` run; the component is created through
// the API (fetch + scan before the response: the "initial scan"), then one file changes in a new commit
// (10 translations) and a `pull` rescans it. Both are checked against the numbers the generator knows.
// Then the hot reads with autocannon at 10 connections next to the framework's floor (a static payload
// of the same size served by the same process), alternating rounds, medians.
// The lists also get their cache-miss and mixed variants (harness missRound, mixedRounds).
// Bar: ratio ≥ 0.5 of the floor and p99 < 20 ms, a list's mixed req/s ≥ 0.5 of its read-only figure;
// initial scan < 60 s; rescan after a one-file change < 2 s.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { sql } from 'kysely';
import { gitEnv } from '../src/git/command.ts';
import { ACTION } from '../src/domain/translation/changes/actions.ts';
import { PLURAL_SEPARATOR } from '../src/domain/translation/units/hash.ts';
import {
  apiClient,
  benchContainer,
  freshBenchDatabase,
  CONNECTIONS,
  DURATION,
  data,
  fastImport,
  median,
  publicProject,
  Report,
  ROOT_TOKEN,
  ROUNDS,
  serve,
} from './harness.ts';

const LANGUAGES = Number(process.env.BENCH_LANGUAGES ?? 100);
const UNITS = Number(process.env.BENCH_UNITS ?? 5_000);
/** only the hot rows whose name contains it */
const PICK = process.env.BENCH_PICK ?? '';
/** `anonymous`: the hot reads without a token (the project is public); root otherwise */
const ANONYMOUS = process.env.BENCH_VIEWER === 'anonymous';
const BAR = { ratio: 0.5, p99: 20, scanMs: 60_000, rescanMs: 2_000 };
const CHANGED = 10;
/** a route slower than this for one request is reported, not load-tested */
const SLOW_MS = 1000;

await freshBenchDatabase('hearth_bench_translation');
const { c, dataDir } = await benchContainer('hearth-bench-tr-');
const k = c.db.kysely;
const AUTH = { authorization: `Token ${ROOT_TOKEN}` };

const report = new Report();
const line = (x: string) => report.line(x);
const check = (ok: boolean, what: string) => {
  if (!ok) throw new Error(`wrong answer: ${what}`);
};

// --- the languages: the most spoken plain codes, each with its plural forms ---
const languages = await k
  .selectFrom('languages')
  .innerJoin('language_plurals', (j) => j.onRef('language_plurals.language_id', '=', 'languages.id').on('language_plurals.source', '=', 0))
  .select(['languages.id', 'languages.code', 'languages.population', 'language_plurals.number', 'language_plurals.formula'])
  .where('languages.code', '!=', 'en')
  .execute();
const picked = languages
  .filter((l) => /^[a-z]{2,3}$/.test(l.code))
  .sort((a, b) => Number(b.population) - Number(a.population) || (a.code < b.code ? -1 : 1))
  .slice(0, LANGUAGES);
check(picked.length === LANGUAGES, `${LANGUAGES} languages in the languages table (found ${picked.length})`);

// --- the PO files: ~70 % translated, ~10 % fuzzy, ~20 % empty; every 10th entry plural, every 20th with a context ---
type State = 'translated' | 'fuzzy' | 'empty';
/** deterministic per (language, entry) */
const stateOf = (lang: number, i: number): State => {
  let h = lang * 100_003 + i;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  const r = ((h ^ (h >>> 16)) >>> 0) % 100;
  return r < 70 ? 'translated' : r < 80 ? 'fuzzy' : 'empty';
};
const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
const plural = (i: number) => i % 10 === 3;

function poFile(langIndex: number, override: Map<number, State> = new Map()): { text: string; translated: number; fuzzy: number; empty: number } {
  const l = picked[langIndex];
  const out: string[] = [
    `msgid ""\nmsgstr ""\n"Project-Id-Version: bench 1.0\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n"Language: ${l.code}\\n"\n"Plural-Forms: nplurals=${l.number}; plural=${l.formula};\\n"\n`,
  ];
  const n = { translated: 0, fuzzy: 0, empty: 0 };
  for (let i = 0; i < UNITS; i++) {
    const state = override.get(i) ?? stateOf(langIndex, i);
    n[state]++;
    const flags = [state === 'fuzzy' ? 'fuzzy' : '', plural(i) ? 'c-format' : ''].filter(Boolean).join(', ');
    let e = `#: src/module${i % 50}/file${i % 7}.c:${100 + i}\n`;
    if (i % 25 === 0) e += `#. Translators: shown in the settings dialog (${i})\n`;
    if (flags) e += `#, ${flags}\n`;
    if (i % 20 === 7) e += `msgctxt "menu ${i % 40}"\n`;
    if (plural(i)) {
      e += `msgid "%d file in folder number ${i} was updated"\nmsgid_plural "%d files in folder number ${i} were updated"\n`;
      for (let f = 0; f < l.number; f++) e += `msgstr[${f}] "${state === 'empty' ? '' : esc(`%d ${l.code} form ${f} folder ${i} updated`)}"\n`;
    } else {
      const source = `Message number ${i}: open the settings of item ${i % 97} and save your changes`;
      e += `msgid "${esc(source)}"\nmsgstr "${state === 'empty' ? '' : esc(`[${l.code}] message ${i}: item ${i % 97} settings, changes saved`)}"\n`;
    }
    out.push(e);
  }
  return { text: out.join('\n'), ...n };
}

// --- the platform project and its repository ---
const platform = await publicProject(c, 'Strings', 'strings');
const ns = await k.selectFrom('namespaces').select('full_path').where('id', '=', platform.namespace_id).executeTakeFirstOrThrow();
const bare = c.repos.pathOf(platform);
const tBuild = performance.now();
const expected = new Map<string, { translated: number; fuzzy: number; empty: number }>();
{
  const parts = [`commit refs/heads/main\nmark :1\ncommitter Ada Lovelace <ada@example.com> 1700000000 +0000\n`, data('Add translations\n')];
  for (let li = 0; li < picked.length; li++) {
    const f = poFile(li);
    expected.set(picked[li].code, { translated: f.translated, fuzzy: f.fuzzy, empty: f.empty });
    parts.push(`M 100644 inline po/${picked[li].code}.po\n${data(f.text)}`);
  }
  parts.push('\n');
  await fastImport(bare, parts.join(''));
}
c.repos.repository(platform).touchRefs();
const buildSeconds = (performance.now() - tBuild) / 1000;
const repoBytes = Number(execFileSync('du', ['-sb', bare]).toString().split('\t')[0]);

// autocannon in its own worker thread (as in bench/repository.ts): the load generator does not share the server's thread
const { app, address, againstFloor, missRound, mixedRounds } = await serve(c, { workers: 1 });

const api = apiClient(address, AUTH);
async function getOk(url: string) {
  const r = await api('GET', url);
  if (r.status !== 200) throw new Error(`GET ${url} → ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  return r.json;
}

// --- initial scan: POST components/ fetches and scans before it answers ---
const P = 'bench';
const C = 'strings';
{
  const r = await api('POST', '/api/projects/', { name: 'Bench', slug: P, web: 'https://bench.example/' });
  if (r.status !== 201) throw new Error(`POST /api/projects/ → ${r.status} ${JSON.stringify(r.json)}`);
}
const repoUrl = `${c.config.externalUrl}/${ns.full_path}/${platform.path}.git`;
const created = await api('POST', `/api/projects/${P}/components/`, { name: 'Strings', slug: C, repo: repoUrl, file_format: 'po', filemask: 'po/*.po' });
if (created.status !== 201) throw new Error(`POST components/ → ${created.status} ${JSON.stringify(created.json).slice(0, 500)}`);
const scanMs = created.ms;

// the answers after the scan: every translation holds every unit, with the generator's states
const fuzzyAndEmpty = [...expected.values()].reduce((s, e) => s + e.fuzzy + e.empty, 0);
const translatedAll = [...expected.values()].reduce((s, e) => s + e.translated, 0);
{
  const cs = await getOk(`/api/components/${P}/${C}/statistics/?page_size=1000`);
  check(cs.count === LANGUAGES + 1, `component statistics count ${cs.count} = ${LANGUAGES + 1} translations (the source included)`);
  for (const t of cs.results as { code: string; total: number; translated: number; fuzzy: number }[]) {
    const e = expected.get(t.code) ?? (t.code === 'en' ? { translated: UNITS, fuzzy: 0, empty: 0 } : null);
    check(e !== null, `translation ${t.code} is one of the files`);
    check(
      t.total === UNITS && t.translated === e!.translated && t.fuzzy === e!.fuzzy,
      `${t.code}: total ${t.total}/${UNITS}, translated ${t.translated}/${e!.translated}, fuzzy ${t.fuzzy}/${e!.fuzzy}`,
    );
  }
  const ps = await getOk(`/api/projects/${P}/statistics/`);
  check(ps.total === UNITS * (LANGUAGES + 1) && ps.translated === translatedAll + UNITS, `project statistics total ${ps.total}, translated ${ps.translated}`);
  const q = await getOk(`/api/units/?q=${encodeURIComponent('state:<translated')}`);
  check(q.count === fuzzyAndEmpty, `state:<translated count ${q.count} = ${fuzzyAndEmpty}`);
}

// --- rescan: a new commit changes 10 translations of one file (empty → translated) ---
const changedIndex = 0;
const changedCode = picked[changedIndex].code;
const override = new Map<number, State>();
for (let i = 0; i < UNITS && override.size < CHANGED; i++) if (!plural(i) && stateOf(changedIndex, i) === 'empty') override.set(i, 'translated');
check(override.size === CHANGED, `${CHANGED} empty entries to translate`);
const before = await getOk(`/api/translations/${P}/${C}/${changedCode}/statistics/`);
{
  const head = execFileSync('git', ['--git-dir', bare, 'rev-parse', 'refs/heads/main'], { env: gitEnv() }).toString().trim();
  const f = poFile(changedIndex, override);
  await fastImport(
    bare,
    `commit refs/heads/main\nmark :1\ncommitter Ada Lovelace <ada@example.com> 1700000600 +0000\n${data(`Translate ${CHANGED} strings of ${changedCode}\n`)}from ${head}\nM 100644 inline po/${changedCode}.po\n${data(f.text)}\n`,
  );
  c.repos.repository(platform).touchRefs();
}
const pulled = await api('POST', `/api/components/${P}/${C}/repository/`, { operation: 'pull' });
if (pulled.status !== 200 || pulled.json?.result !== true) throw new Error(`pull → ${pulled.status} ${JSON.stringify(pulled.json)}`);
const rescanMs = pulled.ms;
{
  const after = await getOk(`/api/translations/${P}/${C}/${changedCode}/statistics/`);
  check(after.total === UNITS, `${changedCode} total ${after.total} after the rescan`);
  check(after.translated === before.translated + CHANGED, `${changedCode} translated ${before.translated} → ${after.translated} (+${CHANGED})`);
  if (picked.length > 1) {
    const other = await getOk(`/api/translations/${P}/${C}/${picked[1].code}/statistics/`);
    check(other.translated === expected.get(picked[1].code)!.translated, `${picked[1].code} unchanged by the rescan`);
  }
  const q = await getOk(`/api/units/?q=${encodeURIComponent('state:<translated')}`);
  check(q.count === fuzzyAndEmpty - CHANGED, `state:<translated count ${q.count} = ${fuzzyAndEmpty - CHANGED} after the rescan`);
  const ch = await getOk(`/api/translations/${P}/${C}/${changedCode}/changes/?action=${ACTION.STRING_REPO_UPDATE}`);
  check(ch.count === CHANGED, `${ch.count} "string updated in the repository" changes = ${CHANGED}`);
}
// A live PostgreSQL database is vacuumed and analysed by autovacuum (since PostgreSQL 13 also after inserts: the
// visibility map lets counts read the index alone); a freshly loaded one gets both now.
if (c.db.dialect === 'postgres') await sql`vacuum analyze`.execute(k);

// --- the hot reads ---
const lang = picked[Math.floor(LANGUAGES / 2)].code;
const langTranslated = expected.get(lang)!.translated + (lang === changedCode ? CHANGED : 0);
const hot: { name: string; url: string; reference?: boolean; list?: boolean; check?: (body: any) => boolean }[] = [
  // what authentication and the translation API's hooks cost with nothing behind them: the ceiling of the rows below
  { name: 'GET /api/ (for reference: the translation API pipeline alone)', url: '/api/', reference: true },
  {
    name: `GET /api/translations/:p/:c/${lang}/units/ (page of 50)`,
    url: `/api/translations/${P}/${C}/${lang}/units/`,
    list: true,
    check: (b) => b.count === UNITS && b.results.length === Math.min(50, UNITS),
  },
  {
    name: `GET /api/units/?q=state:<translated (${fuzzyAndEmpty - CHANGED} matches, page of 100)`,
    url: `/api/units/?q=${encodeURIComponent('state:<translated')}`,
    list: true,
    check: (b) => b.count === fuzzyAndEmpty - CHANGED && b.results.length === Math.min(100, b.count) && b.results.every((u: { state: number }) => u.state < 20),
  },
  {
    name: 'GET /api/projects/:p/statistics/',
    url: `/api/projects/${P}/statistics/`,
    check: (b) => b.total === UNITS * (LANGUAGES + 1) && b.translated === translatedAll + UNITS + CHANGED,
  },
  {
    name: `GET /api/components/:p/:c/statistics/ (${LANGUAGES + 1} translations, page of 100)`,
    url: `/api/components/${P}/${C}/statistics/`,
    list: true,
    check: (b) => b.count === LANGUAGES + 1 && b.results.length === Math.min(100, LANGUAGES + 1),
  },
  {
    name: `GET /api/translations/:p/:c/${lang}/statistics/`,
    url: `/api/translations/${P}/${C}/${lang}/statistics/`,
    check: (b) => b.total === UNITS && b.translated === langTranslated,
  },
  {
    name: `GET /api/languages/${lang}/statistics/`,
    url: `/api/languages/${lang}/statistics/`,
    check: (b) => b.total === UNITS && b.translated === langTranslated,
  },
  {
    name: `GET /api/projects/:p/languages/ (${LANGUAGES + 1} languages)`,
    url: `/api/projects/${P}/languages/`,
    list: true,
    check: (b) => b.length === LANGUAGES + 1 && b.every((l: { total: number }) => l.total === UNITS),
  },
];

const VIEWER: Record<string, string> = ANONYMOUS ? {} : AUTH;

let failed = false;
line(
  `Hearth translation bench — 1 component, ${LANGUAGES} languages × ${UNITS} units (${LANGUAGES * UNITS} units + ${UNITS} source strings; repository ${(repoBytes / 1e6).toFixed(1)} MB, built in ${buildSeconds.toFixed(1)} s), ${CONNECTIONS} connections, median of ${ROUNDS} alternating ${DURATION}s rounds, ${ANONYMOUS ? 'anonymous' : 'as root'}, ${c.db.dialect}, node ${process.version}`,
);
line('');
line(
  'Lists also get their cache-miss variant (each request a query string never sent before: req/s at 10 connections, p50/p99 at one) and their mixed one (the hot URL while a writer saves a translation through PATCH /api/units/:id/ every 100 ms; bar ≥ 0.5 of the read-only req/s).',
);
line('');
line(
  `| scenario | req/s | p50 ms | p99 ms | static req/s | static p99 ms | ratio | bar (ratio ≥ ${BAR.ratio}, p99 < ${BAR.p99} ms; lists: mixed ≥ 0.5) | uncached ms | miss req/s | miss p50 ms | miss p99 ms | mixed req/s | mixed / read-only |`,
);
line('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
// The mixed variant's writer: a translated unit of ${lang} gets a new translation (still translated, so
// the counts the rows check stay true), through the API as a translator saves it.
// one form: a plural (its forms joined by the separator) takes as many as the language has
const editable = ((await getOk(`/api/translations/${P}/${C}/${lang}/units/`)).results as { id: number; translated: boolean; source: string }[])
  .filter((u) => u.translated && !u.source.includes(PLURAL_SEPARATOR))
  .map((u) => u.id);
check(editable.length > 0, `translated units of ${lang} to edit`);
const saveTranslation = async (r: number) => {
  const id = editable[r % editable.length];
  const res = await api('PATCH', `/api/units/${id}/`, { target: `edited ${r}`, state: 20 });
  if (res.status !== 200) throw new Error(`PATCH /api/units/${id}/ → ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
};
for (const [i, s] of hot.entries()) {
  if (PICK && !s.name.includes(PICK)) continue;
  const sample = await app.inject({ method: 'GET', url: s.url, headers: VIEWER });
  if (sample.statusCode !== 200) throw new Error(`${s.url} → ${sample.statusCode} ${sample.body.slice(0, 300)}`);
  if (s.check) check(s.check(JSON.parse(sample.body)), `${s.name}: ${sample.body.slice(0, 300)}`);
  // The uncached path, one request at a time, in-process: a parameter the endpoint ignores makes every
  // request one no cache has seen (median of 21).
  const singles: number[] = [];
  for (let r = 0; r < 21; r++) {
    const t0 = performance.now();
    const res = await app.inject({ method: 'GET', url: `${s.url}${s.url.includes('?') ? '&' : '?'}uncached=${r}`, headers: VIEWER });
    singles.push(performance.now() - t0);
    if (res.statusCode !== 200) throw new Error(`${s.url} (uncached) → ${res.statusCode}`);
    if (r === 2 && median(singles, (x) => x) > SLOW_MS) break;
  }
  const uncached = median(singles, (x) => x);
  // A request that holds the (synchronous) server for a second or more is not load-tested: 10 connections
  // would only measure a queue that also stalls the floor's rounds behind it.
  const warm: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    await app.inject({ method: 'GET', url: s.url, headers: VIEWER });
    warm.push(performance.now() - t0);
  }
  if (median(warm, (x) => x) > SLOW_MS) {
    if (!s.reference) failed = true;
    line(
      `| ${s.name} (${sample.rawPayload.length} B) | — | — | — | — | — | — | MISSED (not load-tested: one request takes ${median(warm, (x) => x).toFixed(0)} ms) | ${uncached.toFixed(1)} | — | — | — | — | — |`,
    );
    continue;
  }
  const { real, floor, ratio, failures } = await againstFloor(i, s.url, VIEWER, Buffer.from(sample.rawPayload));
  const miss = s.list ? await missRound(s.url, VIEWER) : null;
  const mixed = s.list ? await mixedRounds(s.url, VIEWER, saveTranslation) : null;
  const mixedRatio = mixed ? mixed.rps / real.rps : null;
  const ok = ratio >= BAR.ratio && real.p99 < BAR.p99 && failures + (mixed?.failures ?? 0) === 0 && (mixedRatio === null || mixedRatio >= 0.5);
  if (!s.reference) failed ||= !ok;
  const variants =
    miss && mixed
      ? [miss.rps.toFixed(0), miss.p50.toFixed(1), miss.p99.toFixed(1), `${mixed.rps.toFixed(0)} (${mixed.writes} writes)`, mixedRatio!.toFixed(2)]
      : ['—', '—', '—', '—', '—'];
  line(
    `| ${s.name} (${sample.rawPayload.length} B) | ${real.rps.toFixed(0)} | ${real.p50} | ${real.p99} | ${floor.rps.toFixed(0)} | ${floor.p99} | ${ratio.toFixed(2)} | ${s.reference ? '—' : ok ? 'ok' : 'MISSED'}${failures ? ` (${failures} timeouts/errors)` : ''} | ${uncached.toFixed(1)} | ${variants.join(' | ')} |`,
  );
}

line('');
line('| work | ms | bar | ok |');
line('|---|---|---|---|');
const scanOk = scanMs < BAR.scanMs;
const rescanOk = rescanMs < BAR.rescanMs;
failed ||= !scanOk || !rescanOk;
line(
  `| initial scan: POST /api/projects/:p/components/ (fetch + scan of ${LANGUAGES} files, ${LANGUAGES * UNITS} units) | ${scanMs.toFixed(0)} | < ${BAR.scanMs} | ${scanOk ? 'ok' : 'MISSED'} |`,
);
line(
  `| rescan after a one-file change: POST /api/components/:p/:c/repository/ {"operation":"pull"} (${CHANGED} strings of ${changedCode}) | ${rescanMs.toFixed(0)} | < ${BAR.rescanMs} | ${rescanOk ? 'ok' : 'MISSED'} |`,
);

await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
report.save(true);
process.exit(failed ? 1 : 0);
