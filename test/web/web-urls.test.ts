// Every web_url (and the other page URLs) in a sample of API responses — users, groups, projects,
// commits, branches, compare, merge requests and their notes, pipelines and jobs, translation projects,
// components, translations, units and languages — answers 200 HTML to someone allowed to see the object
// (or a redirect to one) and the 404 page to someone who is not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { EXTERNAL_URL, type TestApp } from '../helpers/build-app.ts';
import { seedPipeline } from '../helpers/ci.ts';
import { startTestServer } from '../helpers/server.ts';
import { AS_ROOT, createComponent, createProject, repoWith } from '../helpers/translation.ts';
import { type WebSession, webGet, webSignIn } from '../helpers/web.ts';

/** Every string under a key ending in `web_url` or `_url` that points at a page of this server (not the API). */
function pageUrls(body: unknown, base: string, out = new Set<string>()): Set<string> {
  if (Array.isArray(body)) for (const x of body) pageUrls(x, base, out);
  else if (body && typeof body === 'object') {
    for (const [k, v] of Object.entries(body)) {
      if (typeof v === 'string' && /(^|_)url$/.test(k) && v.startsWith(base) && !v.includes('/api/') && !v.endsWith('.git') && !v.includes('/uploads/'))
        out.add(v.slice(base.length).replace(/#.*$/, ''));
      else pageUrls(v, base, out);
    }
  }
  return out;
}

async function expectPages(app: FastifyInstance, urls: Iterable<string>, allowed: WebSession, outsider: WebSession | null, label: string) {
  for (const url of urls) {
    let ok = await webGet(app, url, allowed);
    // a redirect to a page is fine (Weblate's share URL leads to the project's page)
    if (ok.statusCode === 302 || ok.statusCode === 301) ok = await webGet(app, String(ok.headers.location).replace(EXTERNAL_URL, ''), allowed);
    assert.equal(ok.statusCode, 200, `${label}: ${url} for the allowed viewer → ${ok.statusCode}`);
    assert.equal(ok.headers['content-type'], 'text/html; charset=utf-8', url);
    assert.match(ok.body, /<h1[ >]/, `${url} has a heading`);
    if (outsider) {
      const no = await webGet(app, url, outsider);
      assert.equal(no.statusCode, 404, `${label}: ${url} for an outsider → ${no.statusCode}`);
    }
  }
}

async function api(ctx: TestApp, method: 'GET' | 'POST', url: string, payload?: object, headers: Record<string, string> = ctx.root) {
  const res = await ctx.app.inject({ method, url, headers, payload });
  assert.ok(res.statusCode < 300, `${method} ${url} → ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}

test('forge web_urls: private objects are pages for members and 404 pages for outsiders; users are public', async (t) => {
  const ctx = await startTestServer(t);
  const { app, seed } = ctx;
  const owner = await seed.user({ username: 'owner' });
  const outsider = await seed.user({ username: 'outsider' });
  const group = await api(ctx, 'POST', '/api/v4/groups', { name: 'Secret', path: 'secret', visibility: 'private' });
  await api(ctx, 'POST', `/api/v4/groups/${group.id}/members`, { user_id: owner.id, access_level: 50 });
  const project = await api(ctx, 'POST', '/api/v4/projects', { name: 'Vault', path: 'vault', namespace_id: group.id, initialize_with_readme: true });
  const id = project.id;
  await api(ctx, 'POST', `/api/v4/projects/${id}/repository/branches`, { branch: 'feature', ref: 'main' });
  const commit = await api(ctx, 'POST', `/api/v4/projects/${id}/repository/commits`, {
    branch: 'feature',
    commit_message: 'Add a file',
    actions: [{ action: 'create', file_path: 'docs/a.md', content: '# A\n' }],
  });
  const mr = await api(ctx, 'POST', `/api/v4/projects/${id}/merge_requests`, { source_branch: 'feature', target_branch: 'main', title: 'Add docs' });
  const note = await api(ctx, 'POST', `/api/v4/projects/${id}/merge_requests/${mr.iid}/notes`, { body: 'Looks good' });
  const row = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const { pipeline } = await seedPipeline(ctx.c, row, { sha: commit.id, ref: 'feature' }, [{ name: 'test', stage: 'test', status: 'success' }]);

  const milestone = await api(ctx, 'POST', `/api/v4/projects/${id}/milestones`, { title: 'v1', description: 'The **first**' });
  const groupMilestone = await api(ctx, 'POST', `/api/v4/groups/${group.id}/milestones`, { title: 'Q1' });
  const bodies = [
    milestone,
    groupMilestone,
    await api(ctx, 'GET', `/api/v4/groups/${group.id}`),
    await api(ctx, 'GET', `/api/v4/projects/${id}`),
    await api(ctx, 'GET', `/api/v4/projects/${id}/repository/commits?ref_name=feature`),
    await api(ctx, 'GET', `/api/v4/projects/${id}/repository/commits/${commit.id}`),
    await api(ctx, 'GET', `/api/v4/projects/${id}/repository/branches`),
    await api(ctx, 'GET', `/api/v4/projects/${id}/repository/compare?from=main&to=feature`),
    await api(ctx, 'GET', `/api/v4/projects/${id}/merge_requests/${mr.iid}`),
    await api(ctx, 'GET', `/api/v4/projects/${id}/pipelines/${pipeline.id}`),
    await api(ctx, 'GET', `/api/v4/projects/${id}/pipelines/${pipeline.id}/jobs`),
    note,
  ];
  const urls = new Set<string>();
  for (const b of bodies) pageUrls(b, EXTERNAL_URL, urls);
  // the sample covers every kind of page
  for (const want of [
    '/groups/secret',
    '/secret/vault',
    `/secret/vault/-/commit/${commit.id}`,
    '/secret/vault/-/tree/feature',
    `/secret/vault/-/merge_requests/${mr.iid}`,
    `/secret/vault/-/pipelines/${pipeline.id}`,
    `/secret/vault/-/milestones/${milestone.iid}`,
    `/groups/secret/-/milestones/${groupMilestone.iid}`,
  ])
    assert.ok(urls.has(want), `the sample has ${want}: ${[...urls].join(', ')}`);
  assert.ok(
    [...urls].some((u) => u.startsWith('/secret/vault/-/compare/')),
    'a compare URL',
  );
  assert.ok(
    [...urls].some((u) => u.startsWith('/secret/vault/-/jobs/')),
    'a job URL',
  );
  const member = await webSignIn(app, 'owner');
  const stranger = await webSignIn(app, 'outsider');
  const userUrls: string[] = [...urls].filter((u) => u === '/owner' || u === '/root');
  const objectUrls = [...urls].filter((u) => !userUrls.includes(u));
  await expectPages(app, objectUrls, member, stranger, 'private objects');
  // anonymous: the same 404 (no sign-in redirect that would tell the project exists)
  for (const u of objectUrls) assert.equal((await webGet(app, u)).statusCode, 404, `anonymous ${u}`);
  // the export's `_links.web_url` leads to the API's download, which decides (a session cookie is a credential there)
  const exportLink = await webGet(app, '/secret/vault/download_export', member);
  assert.equal(exportLink.statusCode, 302);
  assert.equal(exportLink.headers.location, `/api/v4/projects/${id}/export/download`);
  assert.equal((await webGet(app, '/secret/vault/download_export', stranger)).statusCode, 404);
  // a milestone that does not exist, and one of another project
  assert.equal((await webGet(app, '/secret/vault/-/milestones/99', member)).statusCode, 404);
  assert.equal((await webGet(app, '/secret/vault/-/milestones/abc', member)).statusCode, 404);
  // users are public pages
  const users = pageUrls([await api(ctx, 'GET', `/api/v4/users/${owner.id}`), await api(ctx, 'GET', `/api/v4/users/${outsider.id}`)], EXTERNAL_URL);
  assert.deepEqual([...users].sort(), ['/outsider', '/owner']);
  await expectPages(app, users, stranger, null, 'users');
});

test('translation web_urls: a private translation project is for administrators; public ones for everyone', async (t) => {
  const ctx = await startTestServer(t);
  const { app, seed } = ctx;
  await seed.user({ username: 'visitor' });
  const fixture = await repoWith(t, ctx, {
    'po/cs.po':
      'msgid ""\nmsgstr ""\n"Language: cs\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n\nmsgid "Hello"\nmsgstr "Ahoj"\n\nmsgid "Bye"\nmsgstr ""\n',
  });
  await createProject(ctx, { name: 'Open', slug: 'open' });
  await createComponent(ctx, 'open', { repo: fixture.repo });
  await createProject(ctx, { name: 'Closed', slug: 'closed', access_control: 100 });
  await createComponent(ctx, 'closed', { repo: fixture.repo });
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url, headers: AS_ROOT });
    assert.equal(res.statusCode, 200, `${url} ${res.body.slice(0, 200)}`);
    return res.json();
  };
  const collect = async (slug: string) => {
    const urls = new Set<string>();
    for (const u of [
      `/api/projects/${slug}/`,
      `/api/components/${slug}/po/`,
      `/api/components/${slug}/po/translations/`,
      `/api/translations/${slug}/po/cs/`,
      `/api/translations/${slug}/po/cs/units/`,
    ])
      pageUrls(await get(u), EXTERNAL_URL, urls);
    return urls;
  };
  const open = await collect('open');
  // languages are nobody's secret: the private project's source language is a public page
  const closed = [...(await collect('closed'))].filter((u) => !u.startsWith('/languages/'));
  for (const want of ['/projects/open/', '/projects/open/po/', '/projects/open/po/cs/', '/translate/open/po/cs/'])
    assert.ok(open.has(want), `${want} in ${[...open].join(', ')}`);
  assert.ok(
    [...open].some((u) => u.startsWith('/translate/open/po/cs/?checksum=')),
    'a unit URL',
  );
  const languages = pageUrls(await get('/api/languages/cs/'), EXTERNAL_URL);
  assert.deepEqual([...languages], ['/languages/cs/']);

  const root = await webSignIn(app, 'root', 'root-password-1');
  const visitor = await webSignIn(app, 'visitor');
  await expectPages(app, closed, root, visitor, 'private translation project');
  await expectPages(app, [...open, ...languages], visitor, null, 'public translation project');
  for (const u of open) assert.ok([200, 302].includes((await webGet(app, u)).statusCode), `anonymous ${u}`);
});
