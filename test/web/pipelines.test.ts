// Pipeline and job pages: the list, a pipeline's stages and jobs, a job's log (ANSI colours as classes,
// markup in the log shown as text), the raw log, and the API's web_urls resolving to these pages for
// members and to 404 pages for outsiders.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { seedPipeline } from '../helpers/ci.ts';
import { makeZip } from '../helpers/zip.ts';
import { jobWithArchive } from '../helpers/ci-artifacts.ts';
import { webGet, webSignIn } from '../helpers/web.ts';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ansiToHtml } from '../../src/web/views/pipelines/ansi.ts';

async function setup(t: Parameters<typeof buildTestApp>[0], visibility = 'private') {
  const ta = await buildTestApp(t);
  const { seed, c } = ta;
  const dev = await seed.user();
  const stranger = await seed.user();
  const group = await seed.group({ visibility });
  const project = await seed.project({ namespace: group, visibility, path: 'ci-app' });
  await seed.member({ project }, dev, 30);
  const { pipeline, jobs } = await seedPipeline(c, project, { ref: 'main', status: 'failed', user_id: dev.id }, [
    { name: 'build-it', stage: 'build', stage_idx: 0, status: 'success' },
    { name: 'test-it', stage: 'test', stage_idx: 1, status: 'failed' },
  ]);
  const log = 'section_start:1700000000:step_script\r\x1b[0K\x1b[32;1mRunning <script>alert(1)</script>\x1b[0m\nplain & simple\nprogress 10%\rprogress 100%\n';
  await c.ci.jobs.appendTrace(jobs[1]!, 0, Buffer.from(log));
  return { ...ta, dev, stranger, group, project, pipeline, jobs, log, full: `${group.full_path}/ci-app` };
}

test('the pipelines list, a pipeline with its stages and jobs, a job with its escaped log, and the raw log', async (t) => {
  const s = await setup(t);
  const sess = await webSignIn(s.app, s.dev.username);
  const list = await webGet(s.app, `/${s.full}/-/pipelines`, sess);
  assert.equal(list.statusCode, 200, list.body.slice(0, 300));
  assert.match(list.body, new RegExp(`id="pipeline_${s.pipeline.id}"`));
  assert.match(list.body, /<th scope="col">Status<\/th>/);
  assert.match(list.body, />failed<\/span>/);
  assert.match(list.body, />aaaaaaaa<\/a>/);

  const one = await webGet(s.app, `/${s.full}/-/pipelines/${s.pipeline.id}`, sess);
  assert.equal(one.statusCode, 200);
  assert.match(one.body, /<h1 class="h2 mb-2">Pipeline #\d+<\/h1>/);
  assert.match(one.body, /<h2 class="Box-title">build<\/h2>/);
  assert.match(one.body, /<h2 class="Box-title">test<\/h2>/);
  assert.match(one.body, new RegExp(`href="/${s.full}/-/jobs/${s.jobs[1]!.id}">test-it</a>`));
  assert.match(one.body, />passed<\/span>/);

  const job = await webGet(s.app, `/${s.full}/-/jobs/${s.jobs[1]!.id}`, sess);
  assert.equal(job.statusCode, 200);
  assert.match(job.body, /<span class="term-fg-2 term-bold">Running &lt;script&gt;alert\(1\)&lt;\/script&gt;<\/span>/);
  assert.doesNotMatch(job.body, /<script>alert/);
  assert.doesNotMatch(job.body, /section_start|\x1b/);
  assert.match(job.body, /plain &amp; simple/);
  assert.match(job.body, /id="L3">progress 100%<\/span>/);
  assert.match(job.body, /View raw log/);

  const raw = await webGet(s.app, `/${s.full}/-/jobs/${s.jobs[1]!.id}/raw`, sess);
  assert.equal(raw.statusCode, 200);
  assert.equal(raw.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal(raw.body, s.log);

  // a job without a log, bad and unknown ids
  assert.match((await webGet(s.app, `/${s.full}/-/jobs/${s.jobs[0]!.id}`, sess)).body, /This job has no log yet\./);
  for (const url of [`/${s.full}/-/jobs/0`, `/${s.full}/-/jobs/abc`, `/${s.full}/-/jobs/999999`, `/${s.full}/-/pipelines/999999`, `/${s.full}/-/pipelines/x`]) {
    assert.equal((await webGet(s.app, url, sess)).statusCode, 404, url);
  }
});

test("the API's pipeline and job web_urls are these pages: 200 for a member, 404 for an outsider and the anonymous", async (t) => {
  const s = await setup(t);
  const token = (await s.seed.token(s.dev)).headers;
  const pl = await s.app.inject({ method: 'GET', url: `/api/v4/projects/${s.project.id}/pipelines/${s.pipeline.id}`, headers: token });
  const job = await s.app.inject({ method: 'GET', url: `/api/v4/projects/${s.project.id}/jobs/${s.jobs[1]!.id}`, headers: token });
  const urls = [(pl.json() as { web_url: string }).web_url, (job.json() as { web_url: string }).web_url].map((u) => new URL(u).pathname);
  assert.deepEqual(urls, [`/${s.full}/-/pipelines/${s.pipeline.id}`, `/${s.full}/-/jobs/${s.jobs[1]!.id}`]);
  const member = await webSignIn(s.app, s.dev.username);
  const outsider = await webSignIn(s.app, s.stranger.username);
  for (const u of [...urls, `${urls[1]}/raw`, `/${s.full}/-/pipelines`]) {
    assert.equal((await webGet(s.app, u, member)).statusCode, 200, u);
    assert.equal((await webGet(s.app, u, outsider)).statusCode, 404, u);
    assert.equal((await webGet(s.app, u)).statusCode, 404, u);
  }
});

test('a public project with private jobs: the pipeline shows, its jobs and logs do not', async (t) => {
  const s = await setup(t, 'public');
  const row = await s.c.db.kysely.selectFrom('projects').select('settings').where('id', '=', s.project.id).executeTakeFirstOrThrow();
  await s.c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ ...JSON.parse(row.settings || '{}'), public_jobs: false }) })
    .where('id', '=', s.project.id)
    .execute();
  const outsider = await webSignIn(s.app, s.stranger.username);
  const page = await webGet(s.app, `/${s.full}/-/pipelines/${s.pipeline.id}`, outsider);
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /visible to project members only/);
  assert.doesNotMatch(page.body, /test-it/);
  assert.equal((await webGet(s.app, `/${s.full}/-/jobs/${s.jobs[1]!.id}`, outsider)).statusCode, 403);
  assert.equal((await webGet(s.app, `/${s.full}/-/jobs/${s.jobs[1]!.id}/raw`, outsider)).statusCode, 403);
});

test('ansiToHtml: colours as classes carried across lines, resets, unknown escapes dropped, text escaped', () => {
  const html = ansiToHtml('\x1b[31mred\nstill red\x1b[0m plain \x1b[2K\x1b[1;4mbold\x1b[22m & <u>\n').html;
  assert.equal(
    html,
    [
      '<span id="L1"><span class="term-fg-1">red</span></span>',
      '<span id="L2"><span class="term-fg-1">still red</span> plain <span class="term-bold term-underline">bold</span><span class="term-underline"> &amp; &lt;u&gt;</span></span>',
    ].join(''),
  );
});

test("a job's artifacts download_url and a bridge's web_url resolve: the archive for a member, 404 for an outsider", async (t) => {
  const s = await setup(t);
  const zip = makeZip([{ name: 'out.txt', data: Buffer.from('built\n') }]);
  await jobWithArchive(s.app, s.c, s.jobs[0]!, zip);
  const token = (await s.seed.token(s.dev)).headers;
  const entity = (await s.app.inject({ method: 'GET', url: `/api/v4/projects/${s.project.id}/jobs/${s.jobs[0]!.id}`, headers: token })).json() as {
    artifacts_file: { filename: string } | null;
    web_url: string;
  };
  assert.equal(new URL(entity.web_url).pathname, `/${s.full}/-/jobs/${s.jobs[0]!.id}`);
  const download = `/${s.full}/-/jobs/${s.jobs[0]!.id}/artifacts/download`;
  assert.ok(entity.artifacts_file);
  const member = await webSignIn(s.app, s.dev.username);
  const got = await webGet(s.app, download, member);
  assert.equal(got.statusCode, 200);
  assert.equal(got.headers['content-type'], 'application/octet-stream');
  assert.deepEqual(got.rawPayload, zip);
  const outsider = await webSignIn(s.app, s.stranger.username);
  assert.equal((await webGet(s.app, download, outsider)).statusCode, 404);
  // no archive: the 404 page
  assert.equal((await webGet(s.app, `/${s.full}/-/jobs/${s.jobs[1]!.id}/artifacts/download`, member)).statusCode, 404);

  // a bridge's page is its pipeline's
  const { jobs: bridges } = await seedPipeline(s.c, s.project, { ref: 'main' }, [{ name: 'trigger-it', type: 'bridge' }]);
  const bridge = await webGet(s.app, `/${s.full}/-/jobs/${bridges[0]!.id}`, member);
  assert.equal(bridge.statusCode, 302);
  assert.equal(bridge.headers.location, `/${s.full}/-/pipelines/${bridges[0]!.pipeline_id}`);
});

test('in a browser: the pipelines list, a pipeline and a job log are accessible', { skip: skipWithout(chromiumAvailable, 'chromium') }, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const srv = await startTestServer(t);
  const { seed, c } = srv;
  const dev = await seed.user({ password: 'walker-password-1' });
  const group = await seed.group({ visibility: 'private' });
  const project = await seed.project({ namespace: group, visibility: 'private', path: 'ci-app' });
  await seed.member({ project }, dev, 30);
  const { pipeline, jobs } = await seedPipeline(c, project, { ref: 'main', status: 'failed' }, [
    { name: 'build-it', stage: 'build', status: 'success' },
    { name: 'test-it', stage: 'test', stage_idx: 1, status: 'failed' },
  ]);
  await c.ci.jobs.appendTrace(jobs[1]!, 0, Buffer.from('\x1b[31;1mFAILED\x1b[0m one test\n\x1b[32mok\x1b[0m the rest\n'));
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, srv.base)).newPage();
  await signInWithForm(page, dev.username, 'walker-password-1');
  const full = `${group.full_path}/ci-app`;
  for (const [url, name] of [
    [`/${full}/-/pipelines`, 'pipelines'],
    [`/${full}/-/pipelines/${pipeline.id}`, 'pipeline'],
    [`/${full}/-/jobs/${jobs[1]!.id}`, 'job-log'],
  ] as const) {
    await page.goto(url);
    assert.equal(await page.locator('h1').count(), 1, url);
    await screenshot(page, name);
    await assertAccessible(page, url);
  }
  assert.equal(await page.locator('#L1 .term-fg-1').innerText(), 'FAILED');
});
