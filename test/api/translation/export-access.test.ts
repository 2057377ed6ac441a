// The git export of a component whose repository is a project of this server asks what cloning that
// project asks (read_code), even when the translation project is public: anonymous callers are asked
// for credentials, users who cannot read the project's code get 404, Reporters and administrators
// clone; the check is made at each request (a source made private later closes the export).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../../helpers/server.ts';
import { fixtureEnv, tmpDir } from '../../helpers/git.ts';
import { AS_ROOT, CS_PO, DE_PO, createComponent, createProject, repoWith } from '../../helpers/translation.ts';
import { ROOT_TOKEN } from '../../helpers/build-app.ts';

const git = (args: string[], cwd?: string) => promisify(execFile)('git', args, { cwd, env: fixtureEnv() });

function withAuth(base: string, user: string, secret: string): string {
  const u = new URL(base);
  u.username = user;
  u.password = secret;
  return u.toString();
}

test('git export of a private project of this server: read_code on the source project is needed, not only the public component', async (t) => {
  const ctx = await startTestServer(t, {}, { selfUrl: true });
  const fixture = await repoWith(t, ctx, { 'po/cs.po': CS_PO, 'po/de.po': DE_PO, 'secret/keys.txt': 'not for translators\n' }, 'private');
  // a branch that is not the component's, to show what a clone would expose
  fixture.wt.checkout('internal', true).write('internal.txt', 'internal\n').commit('Internal');
  fixture.wt.push('internal');
  await createProject(ctx);
  const component = await createComponent(ctx, 'hello', { repo: fixture.repo });
  assert.equal(component.git_export, `${ctx.base}/git/hello/po/`);
  // the component itself is public: its translations are readable anonymously
  const units = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/units/', headers: { host: 'weblate.test' } });
  assert.equal(units.statusCode, 200);

  const exportUrl = `${ctx.base}/git/hello/po/`;
  const refs = (headers: Record<string, string> = {}) => fetch(`${exportUrl}info/refs?service=git-upload-pack`, { headers });
  const basic = (user: string, secret: string) => ({ authorization: 'Basic ' + Buffer.from(`${user}:${secret}`).toString('base64') });

  // anonymous: asked for credentials, for the advertisement and for the pack
  const anon = await refs();
  assert.equal(anon.status, 401);
  assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic/);
  const pack = await fetch(`${exportUrl}git-upload-pack`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-git-upload-pack-request' },
    body: '0000',
  });
  assert.equal(pack.status, 401);
  await assert.rejects(git(['clone', '-q', exportUrl, path.join(tmpDir(t), 'anon')]), /Authentication failed|could not read Username|401/);

  // a user with no access to the source project, and a Guest (no read_code on a private project): 404
  const stranger = await ctx.seed.user({ password: 'stranger-pass-1' });
  const guest = await ctx.seed.user({ password: 'guest-pass-1' });
  const { platform_project_id } = await ctx.c.db.kysely
    .selectFrom('components')
    .select('platform_project_id')
    .where('slug', '=', 'po')
    .executeTakeFirstOrThrow();
  const source = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', platform_project_id!).executeTakeFirstOrThrow();
  await ctx.seed.member({ project: source }, guest, 10);
  for (const [u, p] of [
    [stranger.username, 'stranger-pass-1'],
    [guest.username, 'guest-pass-1'],
  ]) {
    assert.equal((await refs(basic(u, p))).status, 404, u);
    await assert.rejects(git(['clone', '-q', withAuth(exportUrl, u, p), path.join(tmpDir(t), u)]), /not found|404/);
  }

  // a Reporter of the source project clones it (every branch, as the mirror holds them)
  const reporter = await ctx.seed.user({ password: 'reporter-pass-1' });
  await ctx.seed.member({ project: source }, reporter, 20);
  const dir = path.join(tmpDir(t), 'reporter');
  await git(['clone', '-q', withAuth(exportUrl, reporter.username, 'reporter-pass-1'), dir]);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'po')).sort(), ['cs.po', 'de.po']);
  assert.equal(fs.readFileSync(path.join(dir, 'secret/keys.txt'), 'utf8'), 'not for translators\n');
  // administrators too (a token as the password)
  await git(['clone', '-q', withAuth(exportUrl, 'root', ROOT_TOKEN), path.join(tmpDir(t), 'root')]);
  // still read-only
  assert.equal((await fetch(`${exportUrl}info/refs?service=git-receive-pack`, { headers: basic(reporter.username, 'reporter-pass-1') })).status, 403);

  // access is checked at each request: the Reporter removed, the export closes for them
  await ctx.c.db.kysely.deleteFrom('members').where('user_id', '=', reporter.id).execute();
  assert.equal((await refs(basic(reporter.username, 'reporter-pass-1'))).status, 404);
  // and the component's own API answers as before (its translations are what it publishes)
  const file = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/file/', headers: AS_ROOT });
  assert.equal(file.statusCode, 200);
});

test('git export of a public project of this server: anyone who sees the component clones; made private, it closes', async (t) => {
  const ctx = await startTestServer(t, {}, { selfUrl: true });
  const fixture = await repoWith(t, ctx, { 'po/cs.po': CS_PO, 'po/de.po': DE_PO });
  await createProject(ctx);
  await createComponent(ctx, 'hello', { repo: fixture.repo });
  const exportUrl = `${ctx.base}/git/hello/po/`;
  const dir = path.join(tmpDir(t), 'anon');
  await git(['clone', '-q', exportUrl, dir]);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'po')).sort(), ['cs.po', 'de.po']);
  // the source project made private after the component was created
  const res = await ctx.app.inject({
    method: 'PUT',
    url: `/api/v4/projects/${encodeURIComponent(fixture.fullPath)}`,
    headers: { 'private-token': ROOT_TOKEN },
    payload: { visibility: 'private' },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal((await fetch(`${exportUrl}info/refs?service=git-upload-pack`)).status, 401);
  // the source project removed: nobody clones its copy through the export
  const del = await ctx.app.inject({
    method: 'DELETE',
    url: `/api/v4/projects/${encodeURIComponent(fixture.fullPath)}`,
    headers: { 'private-token': ROOT_TOKEN },
  });
  assert.equal(del.statusCode, 202, del.body);
  assert.equal(
    (
      await fetch(`${exportUrl}info/refs?service=git-upload-pack`, {
        headers: { authorization: 'Basic ' + Buffer.from(`root:${ROOT_TOKEN}`).toString('base64') },
      })
    ).status,
    404,
  );
});
