// The project's artifacts endpoints (GitLab lib/api/ci/job_artifacts.rb): downloads by job and by ref,
// one file of the archive, raw, keep, delete a job's and a project's artifacts, the expiry cleanup;
// who may do what (read_build, Developer for keep, Maintainer for deletes, job tokens).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buffer } from 'node:stream/consumers';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { seedPipeline } from '../../helpers/ci.ts';
import type { CiBuildRow, ProjectRow } from '../../../src/db/schema.ts';
import { nowIso } from '../../../src/lib/time.ts';
import { finishJob, jobWithArchive, makeZip, runJob } from '../../helpers/ci-artifacts.ts';
import { webGet, webSignIn } from '../../helpers/web.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('ci-artifacts', () => {
  let ctx: TestApp;
  const cleanups: (() => unknown)[] = [];
  let project: ProjectRow;
  let pub: ProjectRow;
  const as: Record<string, Record<string, string>> = {};
  const ZIP = makeZip([
    { name: 'out/', data: '' },
    { name: 'out/report.json', data: '{"ok":true}' },
    { name: 'out/notes.txt', data: 'plain notes\n' },
    { name: 'out/data.bin', data: Buffer.from([0, 1, 2, 3]) },
    { name: 'out/page.html', data: '<p>hi</p>' },
    { name: 'weird name "q".txt', data: 'q' },
    { name: 'résumé\r\nx.txt', data: 'r' },
  ]);
  const ARCHIVE_HEADERS = {
    'content-disposition': `attachment; filename="artifacts.zip"; filename*=UTF-8''artifacts.zip`,
    'content-type': 'application/octet-stream',
    'content-transfer-encoding': 'binary',
    'content-length': String(ZIP.length),
  };

  before(async () => {
    ctx = await buildTestApp({ after: (fn: () => unknown) => void cleanups.push(fn) });
    const g = await ctx.seed.group({ path: 'grp' });
    project = await ctx.seed.project({ path: 'app', namespace: g });
    pub = await ctx.seed.project({ path: 'pub', visibility: 'public' });
    for (const [name, level] of [
      ['guest', 10],
      ['reporter', 20],
      ['developer', 30],
      ['maintainer', 40],
      ['stranger', 0],
    ] as const) {
      const u = await ctx.seed.user({ username: name });
      if (level) await ctx.seed.member({ group: g }, u, level);
      as[name] = (await ctx.seed.token(u)).headers;
    }
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
  });

  const get = (url: string, headers: Record<string, string> = ctx.root) => ctx.app.inject({ method: 'GET', url: `/api/v4${url}`, headers });
  const headersOf = (res: { headers: Record<string, unknown> }, names: string[]) => Object.fromEntries(names.map((n) => [n, res.headers[n]]));

  async function setSettings(p: ProjectRow, s: Record<string, unknown>) {
    await ctx.c.db.kysely
      .updateTable('projects')
      .set({ settings: JSON.stringify(s) })
      .where('id', '=', p.id)
      .execute();
  }

  async function jobRow(id: number): Promise<CiBuildRow> {
    return ctx.c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  async function artifactRows(jobId: number) {
    return ctx.c.db.kysely.selectFrom('ci_job_artifacts').selectAll().where('job_id', '=', jobId).orderBy('id').execute();
  }

  /** A successful pipeline on `ref` with one job `name` that has ZIP (or `zip`) as its archive. */
  async function built(
    p: ProjectRow,
    ref = 'main',
    name = 'build',
    opts: { zip?: Buffer; created_at?: string; tag?: boolean; parent?: number; status?: string } = {},
  ) {
    const { pipeline, jobs } = await seedPipeline(
      ctx.c,
      p,
      {
        ref,
        status: opts.status ?? 'success',
        created_at: opts.created_at,
        tag: opts.tag,
        parent_pipeline_id: opts.parent,
        source: opts.parent ? 'parent_pipeline' : 'push',
      },
      [{ name }],
    );
    await jobWithArchive(ctx.app, ctx.c, jobs[0]!, opts.zip ?? ZIP);
    return { pipeline, job: await jobRow(jobs[0]!.id) };
  }

  test('GET /projects/:id/jobs/:job_id/artifacts: the archive streamed with GitLab headers; 404 without artifacts or job', async () => {
    const { job } = await built(project);
    const res = await get(`/projects/${project.id}/jobs/${job.id}/artifacts`);
    assert.equal(res.statusCode, 200);
    assert.ok(res.rawPayload.equals(ZIP));
    assert.deepEqual(headersOf(res, Object.keys(ARCHIVE_HEADERS)), ARCHIVE_HEADERS);
    // by path too
    assert.equal((await get(`/projects/grp%2Fapp/jobs/${job.id}/artifacts`)).statusCode, 200);

    const { jobs } = await seedPipeline(ctx.c, project, { status: 'success' }, [{ name: 'bare', status: 'success' }]);
    const none = await get(`/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts`);
    assert.equal(none.statusCode, 404);
    assert.deepEqual(none.json(), { message: '404 Not Found' });
    const unknown = await get(`/projects/${project.id}/jobs/999999/artifacts`);
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(unknown.json(), { message: '404 Not found' });
    // a job of another project is not found here
    const other = await built(pub);
    assert.deepEqual((await get(`/projects/${project.id}/jobs/${other.job.id}/artifacts`)).json(), { message: '404 Not found' });
  });

  test('download permissions: read_build (members; guests and public readers while public_jobs; builds feature off 403); invisible project 404; anonymous on a public project', async () => {
    const { job } = await built(project);
    const url = `/projects/${project.id}/jobs/${job.id}/artifacts`;
    for (const who of ['guest', 'reporter', 'developer', 'maintainer']) assert.equal((await get(url, as[who])).statusCode, 200, who);
    for (const who of ['stranger', null] as const) {
      const res = await get(url, who ? as[who] : {});
      assert.equal(res.statusCode, 404, String(who));
      assert.deepEqual(res.json(), { message: '404 Project Not Found' });
    }
    await setSettings(project, { public_jobs: false });
    try {
      const guest = await get(url, as.guest);
      assert.equal(guest.statusCode, 403);
      assert.deepEqual(guest.json(), { message: '403 Forbidden' });
      assert.equal((await get(url, as.reporter)).statusCode, 200);
    } finally {
      await setSettings(project, {});
    }

    const p = await built(pub);
    const purl = `/projects/${pub.id}/jobs/${p.job.id}/artifacts`;
    assert.equal((await get(purl, {})).statusCode, 200);
    assert.equal((await get(purl, as.stranger)).statusCode, 200);
    await setSettings(pub, { public_jobs: false });
    assert.equal((await get(purl, {})).statusCode, 403);
    await setSettings(pub, { builds_access_level: 'disabled' });
    assert.equal((await get(purl, as.stranger)).statusCode, 403);
    assert.equal((await get(purl)).statusCode, 200); // administrators
    await setSettings(pub, {});
  });

  test("job tokens: a running job of the project downloads (header or job_token); of another project 404; a finished job's token 401", async () => {
    const { job } = await built(project);
    const { jobs } = await seedPipeline(ctx.c, project, {}, [
      { name: 'consumer', user_id: (await ctx.c.db.kysely.selectFrom('users').select('id').where('username', '=', 'developer').executeTakeFirstOrThrow()).id },
    ]);
    const token = await runJob(ctx.c, jobs[0]!);
    const url = `/projects/${project.id}/jobs/${job.id}/artifacts`;
    const byHeader = await get(url, { 'job-token': token });
    assert.equal(byHeader.statusCode, 200);
    assert.ok(byHeader.rawPayload.equals(ZIP));
    assert.equal((await get(`${url}?job_token=${token}`, {})).statusCode, 200);
    assert.equal((await get(`/projects/${project.id}/jobs/artifacts/main/download?job=build&job_token=${token}`, {})).statusCode, 200);
    assert.equal((await get(`/projects/${project.id}/jobs/${job.id}/artifacts/out/notes.txt`, { 'job-token': token })).statusCode, 200);

    const p = await built(pub);
    const cross = await get(`/projects/${pub.id}/jobs/${p.job.id}/artifacts`, { 'job-token': token });
    assert.equal(cross.statusCode, 404);
    assert.deepEqual(cross.json(), { message: '404 Project Not Found' });
    // keep and delete do not take job tokens
    const keep = await ctx.app.inject({ method: 'POST', url: `/api/v4${url}/keep`, headers: { 'job-token': token } });
    assert.equal(keep.statusCode, 401);
    await finishJob(ctx.c, jobs[0]!);
    const done = await get(url, { 'job-token': token });
    assert.equal(done.statusCode, 401);
    assert.deepEqual(done.json(), { message: '401 Unauthorized' });
  });

  test('one file of the archive: content type by extension as Workhorse sends it, attachment; directories and missing files 404; bad paths 400', async () => {
    const { job } = await built(project);
    const base = `/projects/${project.id}/jobs/${job.id}/artifacts`;
    const cases: [string, string, string, string][] = [
      ['out/report.json', 'application/json', 'report.json', '{"ok":true}'],
      ['out/notes.txt', 'text/plain; charset=utf-8', 'notes.txt', 'plain notes\n'],
      ['out/data.bin', 'application/octet-stream', 'data.bin', '\u0000\u0001\u0002\u0003'],
      // a page is never a document of this origin
      ['out/page.html', 'text/plain; charset=utf-8', 'page.html', '<p>hi</p>'],
      [encodeURIComponent('weird name "q".txt'), 'text/plain; charset=utf-8', 'weird name \\"q\\".txt', 'q'],
    ];
    for (const [p, type, name, body] of cases) {
      const res = await get(`${base}/${p}`);
      assert.equal(res.statusCode, 200, p);
      assert.equal(res.body, body);
      assert.deepEqual(headersOf(res, ['content-type', 'content-disposition', 'content-length']), {
        'content-type': type,
        'content-disposition': `attachment; filename="${name}"`,
        'content-length': String(Buffer.byteLength(body)),
      });
    }
    const utf = await get(`${base}/${encodeURIComponent('résumé\r\nx.txt')}`);
    assert.equal(utf.statusCode, 200);
    assert.equal(utf.headers['content-disposition'], `attachment; filename="r_sum___x.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%0D%0Ax.txt`);
    for (const p of ['out/missing.txt', 'out/', 'out', 'nothing/here']) {
      const res = await get(`${base}/${p}`);
      assert.equal(res.statusCode, 404, p);
      assert.deepEqual(res.json(), { message: '404 Not Found' });
    }
    for (const p of ['out/%2E%2E%2F%2E%2E%2Fx', 'out%2F%2E%2E%2Fx', '%2Fetc%2Fpasswd', '/etc/passwd', 'out/%00x', 'a%5Cb', 'out/%2E%2Freport.json']) {
      const res = await get(`${base}/${p}`);
      assert.equal(res.statusCode, 400, `${p} ${res.body}`);
      assert.deepEqual(res.json(), { message: '400 Bad request' });
    }
    // without artifacts: 404 before the path is looked at
    const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'bare' }]);
    assert.deepEqual((await get(`/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts/out/notes.txt`)).json(), { message: '404 Not Found' });
  });

  test('an artifact is never a script, a style or a page of this origin: active types as text/plain, nosniff and a sandbox on every artifact response (API and web)', async () => {
    const files: [string, string][] = [
      ['app.js', 'alert(document.cookie)'],
      ['mod.mjs', 'export default 1'],
      ['page.htm', '<script>alert(1)</script>'],
      ['page.xhtml', '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'],
      ['logo.svg', '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'],
      ['feed.xml', '<x/>'],
      ['site.css', 'body{}'],
      ['m.wasm', 'wasm'],
      ['pic.png', 'png'],
    ];
    const { job } = await built(project, 'main', 'active', { zip: makeZip(files.map(([name, data]) => ({ name: `dist/${name}`, data }))) });
    const inert = { 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox" };
    const names = ['content-type', 'content-disposition', 'x-content-type-options', 'content-security-policy'];
    for (const [name, data] of files) {
      const type = name === 'pic.png' ? 'image/png' : 'text/plain; charset=utf-8';
      const file = await get(`/projects/${project.id}/jobs/${job.id}/artifacts/dist/${name}`);
      assert.equal(file.statusCode, 200, name);
      assert.equal(file.body, data);
      assert.deepEqual(headersOf(file, names), { 'content-type': type, 'content-disposition': `attachment; filename="${name}"`, ...inert }, name);
      // raw (by ref): plain text, inline
      const raw = await get(`/projects/${project.id}/jobs/artifacts/main/raw/dist/${name}?job=active`);
      assert.equal(raw.statusCode, 200, name);
      assert.equal(raw.body, data);
      assert.deepEqual(
        headersOf(raw, names),
        { 'content-type': 'text/plain; charset=utf-8', 'content-disposition': `inline; filename="${name}"`, ...inert },
        name,
      );
    }
    // the archive: by job, by ref, and the web page's download link
    for (const url of [`/projects/${project.id}/jobs/${job.id}/artifacts`, `/projects/${project.id}/jobs/artifacts/main/download?job=active`]) {
      const res = await get(url);
      assert.equal(res.statusCode, 200, url);
      assert.deepEqual(
        headersOf(res, ['content-type', 'x-content-type-options', 'content-security-policy']),
        { 'content-type': 'application/octet-stream', ...inert },
        url,
      );
    }
    const web = await webGet(ctx.app, `/grp/app/-/jobs/${job.id}/artifacts/download`, await webSignIn(ctx.app, 'developer'));
    assert.equal(web.statusCode, 200);
    assert.deepEqual(headersOf(web, ['content-type', 'content-disposition', 'x-content-type-options', 'content-security-policy']), {
      'content-type': 'application/octet-stream',
      'content-disposition': ARCHIVE_HEADERS['content-disposition'],
      ...inert,
    });
  });

  test("by ref: the latest successful pipeline by creation time, the parent's job before a child's, branches with slashes and tags; job missing 400; none 404", async () => {
    const p = await ctx.seed.project({
      path: 'refs',
      namespace: (await ctx.c.db.kysely.selectFrom('namespaces').selectAll().where('path', '=', 'grp').executeTakeFirstOrThrow()) as any,
    });
    const zipOf = (s: string) => makeZip([{ name: 'v.txt', data: s }]);
    const t = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m)).toISOString();
    // created later but seeded first: creation time decides, not the id
    await built(p, 'main', 'build', { zip: zipOf('newest'), created_at: t(30) });
    await built(p, 'main', 'build', { zip: zipOf('older'), created_at: t(10) });
    await built(p, 'main', 'build', { zip: zipOf('failed'), created_at: t(40), status: 'failed' });
    const parent = await built(p, 'feature/x', 'pkg', { zip: zipOf('parent'), created_at: t(5) });
    await built(p, 'feature/x', 'pkg', { zip: zipOf('child'), created_at: t(6), parent: parent.pipeline.id });
    await built(p, 'feature/x', 'only-child', { zip: zipOf('child only'), created_at: t(6), parent: parent.pipeline.id });
    await built(p, 'v1.0', 'build', { zip: zipOf('tag'), created_at: t(1), tag: true });

    const text = async (url: string) => {
      const res = await get(url);
      if (res.statusCode !== 200) return `${res.statusCode} ${res.body}`;
      const zip = res.rawPayload;
      const raw = await ctx.app.inject({ method: 'GET', url: `/api/v4${url.replace('/download?', '/raw/v.txt?')}`, headers: ctx.root });
      assert.ok(zip.subarray(0, 2).toString() === 'PK');
      return raw.body;
    };
    assert.equal(await text(`/projects/${p.id}/jobs/artifacts/main/download?job=build`), 'newest');
    assert.equal(await text(`/projects/${p.id}/jobs/artifacts/feature%2Fx/download?job=pkg`), 'parent');
    assert.equal(await text(`/projects/${p.id}/jobs/artifacts/feature/x/download?job=pkg`), 'parent');
    assert.equal(await text(`/projects/${p.id}/jobs/artifacts/feature/x/download?job=only-child`), 'child only');
    assert.equal(await text(`/projects/${p.id}/jobs/artifacts/v1.0/download?job=build`), 'tag');

    const dl = await get(`/projects/${p.id}/jobs/artifacts/main/download?job=build`);
    assert.deepEqual(headersOf(dl, ['content-disposition', 'content-type', 'content-transfer-encoding']), {
      'content-disposition': ARCHIVE_HEADERS['content-disposition'],
      'content-type': 'application/octet-stream',
      'content-transfer-encoding': 'binary',
    });
    const raw = await get(`/projects/${p.id}/jobs/artifacts/feature/x/raw/v.txt?job=pkg`);
    assert.deepEqual(headersOf(raw, ['content-type', 'content-disposition']), {
      'content-type': 'text/plain; charset=utf-8',
      'content-disposition': 'inline; filename="v.txt"',
    });

    for (const url of [
      `/projects/${p.id}/jobs/artifacts/main/download?job=nope`,
      `/projects/${p.id}/jobs/artifacts/nope/download?job=build`,
      `/projects/${p.id}/jobs/artifacts/${'a'.repeat(40)}/download?job=build`,
      `/projects/${p.id}/jobs/artifacts/HEAD/download?job=build`,
      `/projects/${p.id}/jobs/artifacts/main/raw/v.txt?job=nope`,
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), { message: '404 Not found' });
    }
    const missingFile = await get(`/projects/${p.id}/jobs/artifacts/main/raw/nope.txt?job=build`);
    assert.deepEqual([missingFile.statusCode, missingFile.json()], [404, { message: '404 Not Found' }]);
    for (const url of [`/projects/${p.id}/jobs/artifacts/main/download`, `/projects/${p.id}/jobs/artifacts/main/raw/v.txt`]) {
      const res = await get(url);
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { error: 'job is missing' });
    }
    const badEnc = await get(`/projects/${p.id}/jobs/artifacts/main/raw/%2E%2E%2Fv.txt?job=build`);
    assert.deepEqual([badEnc.statusCode, badEnc.body], [400, JSON.stringify({ message: '400 Bad request' })]);
    assert.equal((await get(`/projects/${p.id}/jobs/artifacts/main/download?job=build`, as.stranger)).statusCode, 404);
  });

  test('keep: 200 with the job record (artifacts_expire_at null), rows lose their expiry; Developer and up; no artifacts 404; anonymous 401', async () => {
    const { job } = await built(project);
    assert.notEqual(job.artifacts_expire_at, null);
    const url = `/api/v4/projects/${project.id}/jobs/${job.id}/artifacts/keep`;
    assert.equal((await ctx.app.inject({ method: 'POST', url })).statusCode, 401);
    const rep = await ctx.app.inject({ method: 'POST', url, headers: as.reporter });
    assert.deepEqual([rep.statusCode, rep.json()], [403, { message: '403 Forbidden' }]);
    assert.equal((await ctx.app.inject({ method: 'POST', url, headers: as.stranger })).statusCode, 404);
    const res = await ctx.app.inject({ method: 'POST', url, headers: as.developer });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.id, job.id);
    assert.equal(body.artifacts_expire_at, null);
    assert.deepEqual(body.artifacts_file, { filename: 'artifacts.zip', size: ZIP.length });
    // the same record GET /jobs/:id shows
    const shown = await get(`/projects/${project.id}/jobs/${job.id}`, as.developer);
    assert.deepEqual(body, shown.json());
    assert.equal((await jobRow(job.id)).artifacts_expire_at, null);
    assert.deepEqual(
      (await artifactRows(job.id)).map((a) => a.expire_at),
      [null],
    );

    const { jobs } = await seedPipeline(ctx.c, project, {}, [{ name: 'bare', status: 'success' }]);
    const none = await ctx.app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/jobs/${jobs[0]!.id}/artifacts/keep`, headers: ctx.root });
    assert.deepEqual([none.statusCode, none.json()], [404, { message: '404 Not Found' }]);
    // expired (not yet removed) artifacts cannot be kept
    const old = await built(project);
    await ctx.c.db.kysely.updateTable('ci_job_artifacts').set({ expire_at: '2020-01-01T00:00:00.000Z' }).where('job_id', '=', old.job.id).execute();
    await ctx.c.db.kysely.updateTable('ci_builds').set({ artifacts_expire_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', old.job.id).execute();
    assert.equal(
      (await ctx.app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/jobs/${old.job.id}/artifacts/keep`, headers: ctx.root })).statusCode,
      404,
    );
    const unknown = await ctx.app.inject({ method: 'POST', url: `/api/v4/projects/${project.id}/jobs/999999/artifacts/keep`, headers: ctx.root });
    assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: '404 Not found' }]);
  });

  /** A trace artifact row beside the archive (as a runner's trace upload would make). */
  async function addTrace(job: CiBuildRow) {
    const key = `artifacts/${job.project_id}/${job.id}/trace-0000000000000000.log`;
    await ctx.c.store.put(key, Buffer.from('log'));
    await ctx.c.db.kysely
      .insertInto('ci_job_artifacts')
      .values({
        project_id: job.project_id,
        job_id: job.id,
        file_type: 'trace',
        file_format: 'raw',
        file_name: 'job.log',
        size: 3,
        file_sha256: null,
        store_key: key,
        expire_at: '2020-01-01T00:00:00.000Z',
        created_at: nowIso(),
      })
      .execute();
    return key;
  }

  test("DELETE a job's artifacts: Maintainer, 204; rows and blobs gone, the log kept; downloads 404 afterwards", async () => {
    const { job } = await built(project);
    const traceKey = await addTrace(job);
    const [archive] = await artifactRows(job.id);
    const url = `/api/v4/projects/${project.id}/jobs/${job.id}/artifacts`;
    assert.equal((await ctx.app.inject({ method: 'DELETE', url })).statusCode, 401);
    const dev = await ctx.app.inject({ method: 'DELETE', url, headers: as.developer });
    assert.deepEqual([dev.statusCode, dev.json()], [403, { message: '403 Forbidden' }]);
    const res = await ctx.app.inject({ method: 'DELETE', url, headers: as.maintainer });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    assert.deepEqual(
      (await artifactRows(job.id)).map((a) => a.file_type),
      ['trace'],
    );
    assert.equal(await ctx.c.store.stat(archive!.store_key), null);
    assert.deepEqual(await ctx.c.store.stat(traceKey), { size: 3 });
    assert.equal((await get(`/projects/${project.id}/jobs/${job.id}/artifacts`)).statusCode, 404);
    // again: still 204; unknown job 404
    assert.equal((await ctx.app.inject({ method: 'DELETE', url, headers: as.maintainer })).statusCode, 204);
    const unknown = await ctx.app.inject({ method: 'DELETE', url: `/api/v4/projects/${project.id}/jobs/999999/artifacts`, headers: as.maintainer });
    assert.deepEqual([unknown.statusCode, unknown.json()], [404, { message: '404 Not found' }]);
  });

  test("DELETE a project's artifacts: Maintainer, 202; everything expires now but the latest successful pipeline of each ref and the logs; removeExpired removes them; keep_latest_artifact off expires those too", async () => {
    const g = await ctx.c.db.kysely.selectFrom('namespaces').selectAll().where('path', '=', 'grp').executeTakeFirstOrThrow();
    const p = await ctx.seed.project({ path: 'cleanup', namespace: g as any });
    const t = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m)).toISOString();
    const oldMain = await built(p, 'main', 'build', { created_at: t(1) });
    const latestMain = await built(p, 'main', 'build', { created_at: t(2) });
    const child = await built(p, 'main', 'child', { created_at: t(3), parent: latestMain.pipeline.id });
    const failedMain = await built(p, 'main', 'build', { created_at: t(4), status: 'failed' });
    const latestDev = await built(p, 'dev', 'build', { created_at: t(1) });
    const kept = await built(p, 'dev', 'old', { created_at: t(0) });
    await ctx.c.ci.artifacts.keep(kept.job);
    const traceKey = await addTrace(oldMain.job);
    await ctx.c.db.kysely.updateTable('ci_job_artifacts').set({ expire_at: null }).where('file_type', '=', 'trace').execute();

    const url = `/api/v4/projects/${p.id}/artifacts`;
    assert.equal((await ctx.app.inject({ method: 'DELETE', url })).statusCode, 401);
    assert.equal((await ctx.app.inject({ method: 'DELETE', url, headers: as.developer })).statusCode, 403);
    const res = await ctx.app.inject({ method: 'DELETE', url, headers: as.maintainer });
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json(), { message: '202 Accepted' });

    const expiry = async (job: CiBuildRow) =>
      (await artifactRows(job.id)).map((a) => [a.file_type, a.expire_at === null ? null : Date.parse(a.expire_at) <= Date.now() ? 'expired' : 'later']);
    assert.deepEqual(await expiry(oldMain.job), [
      ['archive', 'expired'],
      ['trace', null],
    ]);
    assert.deepEqual(await expiry(latestMain.job), [['archive', 'later']]);
    assert.deepEqual(await expiry(child.job), [['archive', 'later']]);
    assert.deepEqual(await expiry(failedMain.job), [['archive', 'expired']]);
    assert.deepEqual(await expiry(latestDev.job), [['archive', 'later']]);
    assert.deepEqual(await expiry(kept.job), [['archive', 'expired']]);
    assert.notEqual((await jobRow(oldMain.job.id)).artifacts_expire_at, null);

    const oldKey = (await artifactRows(oldMain.job.id))[0]!.store_key;
    const removed = await ctx.c.ci.artifacts.removeExpired();
    assert.ok(removed >= 3, String(removed));
    assert.deepEqual(
      (await artifactRows(oldMain.job.id)).map((a) => a.file_type),
      ['trace'],
    );
    assert.equal(await ctx.c.store.stat(oldKey), null);
    assert.deepEqual(await ctx.c.store.stat(traceKey), { size: 3 });
    assert.deepEqual(await artifactRows(failedMain.job.id), []);
    assert.equal((await artifactRows(latestMain.job.id)).length, 1);
    assert.equal((await get(`/projects/${p.id}/jobs/artifacts/main/download?job=build`)).statusCode, 200);

    // keep_latest_artifact off (the project's setting): the latest go too
    await setSettings(p, { keep_latest_artifact: false });
    assert.equal((await ctx.app.inject({ method: 'DELETE', url, headers: as.maintainer })).statusCode, 202);
    await ctx.c.ci.artifacts.removeExpired();
    for (const j of [latestMain.job, child.job, latestDev.job]) assert.deepEqual(await artifactRows(j.id), [], j.name);
    assert.deepEqual(
      (await artifactRows(oldMain.job.id)).map((a) => a.file_type),
      ['trace'],
    );
  });

  test('removeExpired: expired archives go (blob, then row), kept and unexpired ones and logs stay; two workers at once remove each row once', async () => {
    const g = await ctx.c.db.kysely.selectFrom('namespaces').selectAll().where('path', '=', 'grp').executeTakeFirstOrThrow();
    const p = await ctx.seed.project({ path: 'expiry', namespace: g as any });
    await setSettings(p, { keep_latest_artifact: false });
    const expired: CiBuildRow[] = [];
    for (let i = 0; i < 6; i++) {
      const { job } = await built(p, `b${i}`);
      await ctx.c.db.kysely.updateTable('ci_job_artifacts').set({ expire_at: '2020-01-01T00:00:00.000Z' }).where('job_id', '=', job.id).execute();
      expired.push(job);
    }
    const fresh = await built(p, 'fresh');
    const keptJob = await built(p, 'kept');
    await ctx.c.ci.artifacts.keep(keptJob.job);
    const traceKey = await addTrace(fresh.job);
    const keys = await ctx.c.db.kysely
      .selectFrom('ci_job_artifacts')
      .select('store_key')
      .where(
        'job_id',
        'in',
        expired.map((j) => j.id),
      )
      .execute();

    const count = async () =>
      Number(
        (
          await ctx.c.db.kysely
            .selectFrom('ci_job_artifacts')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    const [a, b] = await Promise.all([ctx.c.ci.artifacts.removeExpired(), ctx.c.ci.artifacts.removeExpired()]);
    // each row counted once, by one of the two (rows of earlier tests may expire here too)
    assert.equal(a + b, before - (await count()));
    assert.ok(a + b >= 6);
    for (const j of expired) assert.deepEqual(await artifactRows(j.id), []);
    for (const k of keys) assert.equal(await ctx.c.store.stat(k.store_key), null);
    assert.deepEqual(
      (await artifactRows(fresh.job.id)).map((x) => x.file_type),
      ['archive', 'trace'],
    );
    assert.equal((await artifactRows(keptJob.job.id)).length, 1);
    assert.ok(await ctx.c.store.stat(traceKey));
    assert.equal(await ctx.c.ci.artifacts.removeExpired(), 0);

    // a claim left by a worker that died: taken once its lease is over, not before
    const held = await built(p, 'held');
    await ctx.c.db.kysely
      .updateTable('ci_job_artifacts')
      .set({ expire_at: `0000-00-00T00:00:00.000Z#${Date.now()}.0123456789abcdef` })
      .where('job_id', '=', held.job.id)
      .execute();
    assert.equal(await ctx.c.ci.artifacts.removeExpired(), 0);
    assert.equal((await artifactRows(held.job.id)).length, 1);
    await ctx.c.db.kysely
      .updateTable('ci_job_artifacts')
      .set({ expire_at: `0000-00-00T00:00:00.000Z#${Date.now() - 11 * 60_000}.0123456789abcdef` })
      .where('job_id', '=', held.job.id)
      .execute();
    assert.equal(await ctx.c.ci.artifacts.removeExpired(), 1);
    assert.deepEqual(await artifactRows(held.job.id), []);
    const { job } = await built(p, 'claimed');
    await ctx.c.db.kysely
      .updateTable('ci_job_artifacts')
      .set({ expire_at: '0000-00-00T00:00:00.000Z#deadbeefdeadbeef' })
      .where('job_id', '=', job.id)
      .execute();
    assert.equal(await ctx.c.ci.artifacts.removeExpired(), 1);
    assert.deepEqual(await artifactRows(job.id), []);
    const blobs = await ctx.c.store.get(traceKey);
    assert.equal((await buffer(blobs!)).toString(), 'log');
  });

  test("a deleted project's artifact blobs are queued with the deletion and removed by the worker; a group deletion does the same", async () => {
    const g = await ctx.seed.group({ path: 'doomed' });
    const p1 = await ctx.seed.project({ path: 'one', namespace: g });
    const p2 = await ctx.seed.project({ path: 'two' });
    const a = await built(p1);
    const b = await built(p2);
    const keys = async (jobId: number) => (await artifactRows(jobId)).map((r) => r.store_key);
    const [k1] = await keys(a.job.id);
    const [k2] = await keys(b.job.id);
    assert.ok(await ctx.c.store.stat(k1!), 'the first blob exists before the deletion');
    assert.ok(await ctx.c.store.stat(k2!), 'the second blob exists before the deletion');

    let res = await ctx.app.inject({ method: 'DELETE', url: `/api/v4/projects/${p2.id}`, headers: ctx.root });
    assert.equal(res.statusCode, 202);
    res = await ctx.app.inject({ method: 'DELETE', url: `/api/v4/groups/${g.id}`, headers: ctx.root });
    assert.equal(res.statusCode, 202);
    const queued = await ctx.c.db.kysely.selectFrom('jobs').select(['payload', 'state']).where('kind', '=', 'blob_delete').orderBy('id').execute();
    assert.deepEqual(
      queued.map((j) => ({ keys: JSON.parse(j.payload).keys, state: j.state })),
      [
        { keys: [k2], state: 'queued' },
        { keys: [k1], state: 'queued' },
      ],
    );
    await ctx.c.worker.drain();
    assert.equal(await ctx.c.store.stat(k1!), null, 'the group project blob is gone');
    assert.equal(await ctx.c.store.stat(k2!), null, 'the project blob is gone');
    const states = await ctx.c.db.kysely.selectFrom('jobs').select('state').where('kind', '=', 'blob_delete').execute();
    assert.deepEqual(
      states.map((s) => s.state),
      ['done', 'done'],
    );
  });
});
