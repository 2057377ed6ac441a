// npm run bench:import-export: seeds one large project (10,000 commits, 5,000 merge requests, 20,000
// notes, labels, milestones, approvals, award emoji, 1,000 issues, 50 members; the repository by
// `git fast-import`, the rows by bulk inserts), then measures through the HTTP API of the app on a local
// port:
// - the export: POST /projects/:id/export until the archive is finished (wall time), the archive's size,
//   the first GET /projects/:id/export after it finished, the download;
// - the import of that archive: POST /projects/import (multipart, the file streamed from disk) until the
//   import is finished, the first GET /projects/:id/import after it finished;
// - the process's RSS sampled every 50 ms during each (baseline before, peak during);
// - that the imported project has what the source has (merge requests, notes, issues, labels,
//   milestones, approvals, award emoji, the repository's refs).
// Bar: each of export and import under 30 s, peak RSS under 512 MB.
// BENCH_IE_COMMITS, BENCH_IE_MRS, BENCH_IE_NOTES scale the seed down for a quick run.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { Container } from '../src/container.ts';
import { repositoryRefs, seedLargeProject } from '../test/helpers/import-export-bulk.ts';
import { apiClient, benchContainer, freshBenchDatabase, Report, ROOT_TOKEN, serve } from './harness.ts';

const COMMITS = Number(process.env.BENCH_IE_COMMITS ?? 10_000);
const MRS = Number(process.env.BENCH_IE_MRS ?? 5_000);
const NOTES = Number(process.env.BENCH_IE_NOTES ?? 20_000);
const BAR = { seconds: 30, rssMb: 512 };
const WAIT_LIMIT_MS = 10 * 60_000;

// PostgreSQL: a database of its own, made afresh (the seed assumes empty tables).
await freshBenchDatabase('hearth_bench_ie');

const { c, dataDir } = await benchContainer('hearth-bench-ie-');
// removed however the run ends (a failed step throws)
process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
const k = c.db.kysely;
const report = new Report();
const line = (x: string) => report.line(x);
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

const seeded = await seedLargeProject(c, { commits: COMMITS, mergeRequests: MRS, notes: NOTES });
if (c.db.dialect === 'postgres') await sql`analyze`.execute(k);
const source = seeded.project;

const { app, address } = await serve(c);
const auth = { 'private-token': ROOT_TOKEN };
const api = apiClient(address, auth);

/** Runs `work` while sampling the process's RSS every 50 ms: its wall time, the RSS before and the peak. */
async function sampled<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number; rss0: number; peak: number }> {
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const t = performance.now();
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, seconds: (performance.now() - t) / 1000, rss0, peak };
  } finally {
    clearInterval(sampler);
  }
}

/** Waits for the in-process work (`idle`), then polls `status` until it answers one of `done` (or `failed`). */
async function until(idle: () => Promise<unknown>, status: () => Promise<{ status: number; json: any; ms: number }>, field: string, done: string) {
  await idle();
  const first = await status();
  let last = first;
  const deadline = Date.now() + WAIT_LIMIT_MS;
  while (last.json?.[field] !== done) {
    if (last.status !== 200 || last.json?.[field] === 'failed' || Date.now() > deadline) {
      throw new Error(`${field}: ${last.status} ${JSON.stringify(last.json).slice(0, 2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
    last = await status();
  }
  return { firstMs: first.ms, firstState: first.json?.[field] as string };
}

async function countsOf(c: Container, projectId: number) {
  const count = async (table: 'merge_requests' | 'notes' | 'issues' | 'labels' | 'milestones') =>
    Number(
      (
        await k
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', projectId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const mrIds = k.selectFrom('merge_requests').select('id').where('project_id', '=', projectId);
  const noteIds = k.selectFrom('notes').select('id').where('project_id', '=', projectId);
  const approvals = await k
    .selectFrom('approvals')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('merge_request_id', 'in', mrIds)
    .executeTakeFirstOrThrow();
  const awards = await k
    .selectFrom('award_emoji')
    .select((eb) => eb.fn.countAll().as('n'))
    .where((eb) =>
      eb.or([
        eb.and([eb('awardable_type', '=', 'MergeRequest'), eb('awardable_id', 'in', mrIds)]),
        eb.and([eb('awardable_type', '=', 'Note'), eb('awardable_id', 'in', noteIds)]),
      ]),
    )
    .executeTakeFirstOrThrow();
  const project = await k.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
  const refs = await repositoryRefs(c.repos.pathOf(project));
  return {
    'merge requests': await count('merge_requests'),
    notes: await count('notes'),
    issues: await count('issues'),
    labels: await count('labels'),
    milestones: await count('milestones'),
    approvals: Number(approvals.n),
    'award emoji': Number(awards.n),
    refs: Object.keys(refs).length,
    refsDigest: JSON.stringify(Object.entries(refs).sort()),
  };
}

let failed = false;
line(
  `Hearth import/export bench — one project of ${seeded.counts.commits} commits (${seeded.counts.branches} branches, ${seeded.counts.tags} tags), ${seeded.counts.mergeRequests} merge requests, ${seeded.counts.notes} notes, ${seeded.counts.issues} issues, ${seeded.counts.approvals} approvals, ${seeded.counts.awardEmoji} award emoji, ${seeded.counts.members} members (seeded in ${seeded.seconds.repository.toFixed(1)} s repository + ${seeded.seconds.rows.toFixed(1)} s rows), ${c.db.dialect}, node ${process.version}`,
);
line('');
line(`| step | wall s | RSS before MB | RSS peak MB | bar (< ${BAR.seconds} s, peak < ${BAR.rssMb} MB) | first status GET after finishing ms |`);
line('|---|---|---|---|---|---|');

// --- export ---
const exp = await sampled(async () => {
  const started = await api('POST', `/api/v4/projects/${source.id}/export`, { description: 'bench export' });
  if (started.status !== 202) throw new Error(`POST export → ${started.status} ${JSON.stringify(started.json)}`);
  return until(
    () => c.importExport.exports.idle(),
    () => api('GET', `/api/v4/projects/${source.id}/export`),
    'export_status',
    'finished',
  );
});
const expOk = exp.seconds < BAR.seconds && exp.peak / 1024 / 1024 < BAR.rssMb;
failed ||= !expOk;
line(
  `| export (POST /projects/:id/export → finished) | ${exp.seconds.toFixed(1)} | ${mb(exp.rss0)} | ${mb(exp.peak)} | ${expOk ? 'ok' : 'MISSED'} | ${exp.value.firstMs.toFixed(1)} (${exp.value.firstState}) |`,
);

// --- the download ---
const archive = path.join(dataDir, 'bench-export.tar.gz');
const dl = await sampled(async () => {
  const res = await fetch(`${address}/api/v4/projects/${source.id}/export/download`, { headers: auth });
  if (res.status !== 200) throw new Error(`download → ${res.status} ${await res.text()}`);
  const out = fs.createWriteStream(archive);
  for await (const part of res.body!) if (!out.write(part)) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((r, j) => {
    out.on('error', j);
    out.end(() => r());
  });
  return fs.statSync(archive).size;
});
line(`| download (GET /projects/:id/export/download, ${mb(dl.value)} MB) | ${dl.seconds.toFixed(1)} | ${mb(dl.rss0)} | ${mb(dl.peak)} | — | — |`);

// --- import ---
const imp = await sampled(async () => {
  const form = new FormData();
  form.append('path', 'imported-large-project');
  form.append('name', 'Imported large project');
  form.append('file', await fs.openAsBlob(archive), 'export.tar.gz');
  const started = await api('POST', '/api/v4/projects/import', form);
  if (started.status !== 201) throw new Error(`POST import → ${started.status} ${JSON.stringify(started.json)}`);
  const id = started.json.id as number;
  const waited = await until(
    () => c.importExport.imports.idle(),
    () => api('GET', `/api/v4/projects/${id}/import`),
    'import_status',
    'finished',
  );
  return { id, ...waited };
});
const impOk = imp.seconds < BAR.seconds && imp.peak / 1024 / 1024 < BAR.rssMb;
failed ||= !impOk;
line(
  `| import (POST /projects/import → finished) | ${imp.seconds.toFixed(1)} | ${mb(imp.rss0)} | ${mb(imp.peak)} | ${impOk ? 'ok' : 'MISSED'} | ${imp.value.firstMs.toFixed(1)} (${imp.value.firstState}) |`,
);

// --- the imported project against its source ---
line('');
line(`Archive: ${dl.value} bytes (${mb(dl.value)} MB).`);
line('');
line('| what | source | imported | same |');
line('|---|---|---|---|');
const before = await countsOf(c, source.id);
const after = await countsOf(c, imp.value.id);
for (const key of Object.keys(before) as (keyof typeof before)[]) {
  if (key === 'refsDigest') continue;
  const same = before[key] === after[key];
  failed ||= !same;
  line(`| ${key} | ${before[key]} | ${after[key]} | ${same ? 'yes' : 'NO'} |`);
}
const sameRefs = before.refsDigest === after.refsDigest;
failed ||= !sameRefs;
line(`| refs (names and object ids) | — | — | ${sameRefs ? 'yes' : 'NO'} |`);
line('');
line(failed ? 'BAR MISSED' : 'bar met');

await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
report.save(true);
process.exit(failed ? 1 : 0);
