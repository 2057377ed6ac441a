// Project settings → Deploy keys as a web page: Maintainers list, add (with write access), enable a key of
// their other projects or a public one, and remove keys; Developers 403, outsiders 404; a refused key
// shows GitLab's messages and writes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { assertAccessible, chromiumAvailable, launchBrowser, newContext, screenshot, signInWithForm } from '../helpers/browser.ts';
import { buildTestApp } from '../helpers/build-app.ts';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

function sshString(b: Buffer | string): Buffer {
  const buf = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length);
  return Buffer.concat([len, buf]);
}

/** A new "ssh-ed25519 AAAA… comment" public key and its SHA256 fingerprint. */
function ed25519(comment: string): { text: string; sha256: string } {
  const { publicKey } = crypto.generateKeyPairSync('ed25519');
  const blob = Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url'))]);
  return {
    text: `ssh-ed25519 ${blob.toString('base64')} ${comment}`,
    sha256: 'SHA256:' + crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, ''),
  };
}

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const env = await buildTestApp(t);
  const { seed, c } = env;
  const owner = await seed.user({ username: 'olga' });
  const maintainer = await seed.user({ username: 'max' });
  const dev = await seed.user({ username: 'devi' });
  await seed.user({ username: 'otto' });
  const admin = await seed.user({ username: 'ada', is_admin: true });
  const project = await seed.project({ owner, path: 'app', name: 'App' });
  const lib = await seed.project({ owner, path: 'lib', name: 'Lib' });
  await seed.member({ project }, maintainer, 40);
  await seed.member({ project: lib }, maintainer, 40);
  await seed.member({ project }, dev, 30);
  const links = () => c.db.kysely.selectFrom('deploy_keys_projects').select(['deploy_key_id', 'project_id', 'can_push']).orderBy('id').execute();
  const keys = () => c.db.kysely.selectFrom('keys').select(['id', 'title', 'public']).orderBy('id').execute();
  return { ...env, owner, maintainer, admin, project, lib, links, keys, base: '/olga/app' };
}

test('deploy keys page: Maintainers only (Developers 403, outsiders and anonymous 404); the tab on the other settings pages', async (t) => {
  const { app, project, base } = await setup(t);
  const s = { max: await webSignIn(app, 'max'), devi: await webSignIn(app, 'devi'), otto: await webSignIn(app, 'otto') };
  const ok = await webGet(app, `${base}/-/deploy_keys`, s.max);
  assert.equal(ok.statusCode, 200);
  assert.equal((ok.body.match(/<h1/g) ?? []).length, 1);
  assert.match(ok.body, /<label class="FormControl-label" for="deploy_key_title">Title<\/label>/);
  assert.match(ok.body, /<label class="FormControl-label" for="deploy_key_key">Key<\/label>/);
  assert.match(ok.body, /id="deploy_key_can_push" name="can_push" value="1"> Grant write permissions to this key/);
  assert.match(ok.body, /No deploy keys are enabled on this project\./);
  assert.equal((await webGet(app, `${base}/-/deploy_keys`, s.devi)).statusCode, 403);
  assert.equal((await webGet(app, `${base}/-/deploy_keys`, s.otto)).statusCode, 404);
  assert.equal((await webGet(app, `${base}/-/deploy_keys`)).statusCode, 404);
  assert.match((await webGet(app, `${base}/-/edit`, s.max)).body, /href="\/olga\/app\/-\/deploy_keys"[^>]*>Deploy keys</);

  const k = ed25519('x@y');
  assert.equal((await webPost(app, `/-/p/${project.id}/deploy_keys`, s.devi, { title: 'x', key: k.text })).statusCode, 403);
  assert.equal((await webPost(app, `/-/p/${project.id}/deploy_keys`, s.otto, { title: 'x', key: k.text })).statusCode, 404);
  assert.equal((await webPost(app, '/-/p/abc/deploy_keys', s.max, { title: 'x', key: k.text })).statusCode, 404);
  assert.equal((await webPost(app, `/-/p/${project.id}/deploy_keys/abc/enable`, s.max)).statusCode, 404);
});

test('add a deploy key with write access, a refused key, the same key again; remove it', async (t) => {
  const { app, project, base, links, keys } = await setup(t);
  const s = await webSignIn(app, 'max');
  const bad = await webPost(app, `/-/p/${project.id}/deploy_keys`, s, { title: 'Broken', key: 'ssh-ed25519 AAAAnotakey', can_push: ['0', '1'] });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /Key type is forbidden\. Must be RSA, DSA, ECDSA, ED25519, ECDSA_SK, or ED25519_SK/);
  assert.match(bad.body, /Fingerprint sha256 cannot be generated/);
  assert.match(bad.body, /value="Broken"/);
  assert.deepEqual(await keys(), []);

  const k = ed25519('ci@build');
  const add = await webPost(app, `/-/p/${project.id}/deploy_keys`, s, { title: 'CI', key: k.text, can_push: ['0', '1'] });
  assert.equal(add.statusCode, 303);
  assert.equal(add.headers.location, `${base}/-/deploy_keys`);
  const [key] = await keys();
  assert.deepEqual(await links(), [{ deploy_key_id: key.id, project_id: project.id, can_push: 1 }]);
  const page = (await webGet(app, `${base}/-/deploy_keys`, s)).body;
  assert.match(page, /Enabled deploy keys \(1\)/);
  assert.ok(page.includes(k.sha256));
  assert.match(page, /Write access/);

  // the same key again: nothing new
  const again = await webPost(app, `/-/p/${project.id}/deploy_keys`, s, { title: 'CI again', key: k.text, can_push: '0' });
  assert.equal(again.statusCode, 303);
  assert.equal((await keys()).length, 1);
  assert.equal((await links()).length, 1);

  const removed = await webPost(app, `/-/p/${project.id}/deploy_keys/${key.id}/disable`, s);
  assert.equal(removed.statusCode, 303);
  assert.deepEqual(await links(), []);
  assert.deepEqual(await keys(), []);
  assert.equal((await webPost(app, `/-/p/${project.id}/deploy_keys/${key.id}/disable`, s)).statusCode, 404);
});

test('enable a key of another project of the viewer, or a public one', async (t) => {
  const { app, c, seed, admin, maintainer, project, lib, base, links } = await setup(t);
  const adminActor = { ...(await seed.token(admin)) };
  const fromLib = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${lib.id}/deploy_keys`,
    headers: adminActor.headers,
    payload: { title: 'Lib key', key: ed25519('lib').text },
  });
  const pub = await app.inject({
    method: 'POST',
    url: '/api/v4/deploy_keys',
    headers: adminActor.headers,
    payload: { title: 'Shared key', key: ed25519('pub').text },
  });
  const hidden = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${(await seed.project()).id}/deploy_keys`,
    headers: adminActor.headers,
    payload: { title: 'Hidden key', key: ed25519('hid').text },
  });
  const [libKey, pubKey, hiddenKey] = [fromLib.json(), pub.json(), hidden.json()];
  void maintainer;

  const s = await webSignIn(app, 'max');
  let page = (await webGet(app, `${base}/-/deploy_keys`, s)).body;
  const section = (id: string) => page.slice(page.indexOf(`id="${id}"`), page.indexOf('</section>', page.indexOf(`id="${id}"`)));
  assert.match(section('deploy-keys-private'), /Lib key/);
  assert.match(section('deploy-keys-public'), /Shared key/);
  assert.doesNotMatch(page, /Hidden key/);

  for (const id of [libKey.id, pubKey.id]) {
    const res = await webPost(app, `/-/p/${project.id}/deploy_keys/${id}/enable`, s);
    assert.equal(res.statusCode, 303);
  }
  assert.equal((await webPost(app, `/-/p/${project.id}/deploy_keys/${hiddenKey.id}/enable`, s)).statusCode, 404);
  assert.deepEqual(
    (await links()).filter((l) => l.project_id === project.id),
    [
      { deploy_key_id: libKey.id, project_id: project.id, can_push: 0 },
      { deploy_key_id: pubKey.id, project_id: project.id, can_push: 0 },
    ],
  );
  page = (await webGet(app, `${base}/-/deploy_keys`, s)).body;
  assert.match(section('deploy-keys-enabled'), /Lib key[\s\S]*Shared key/);
  assert.match(section('deploy-keys-private'), /No deploy keys of your other projects to enable here\./);
  assert.match(section('deploy-keys-public'), /No public deploy keys to enable here\./);
  // removing the public key keeps it for everyone else
  await webPost(app, `/-/p/${project.id}/deploy_keys/${pubKey.id}/disable`, s);
  assert.deepEqual(
    (await c.db.kysely.selectFrom('keys').select('id').where('id', '=', pubKey.id).execute()).map((r) => r.id),
    [pubKey.id],
  );
});

test('in a real browser: add a key with write access through the form, enable another; the page passes axe', {
  skip: skipWithout(chromiumAvailable, 'chromium'),
}, async (t) => {
  assertTool(chromiumAvailable, 'chromium');
  const { base, seed, c, app } = await startTestServer(t);
  const owner = await seed.user({ username: 'bria', password: 'bria-password-1' });
  const project = await seed.project({ owner, path: 'site', name: 'Site' });
  const lib = await seed.project({ owner, path: 'lib', name: 'Lib' });
  const headers = (await seed.token(owner)).headers;
  const other = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${lib.id}/deploy_keys`,
    headers,
    payload: { title: 'Lib key', key: ed25519('lib').text },
  });
  assert.equal(other.statusCode, 201);
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, base)).newPage();
  await signInWithForm(page, 'bria', 'bria-password-1');

  await page.goto('/bria/site/-/deploy_keys');
  await assertAccessible(page, 'the deploy keys page');
  const k = ed25519('ci@browser');
  await page.getByLabel('Title').fill('Browser key');
  await page.getByLabel('Key', { exact: true }).fill(k.text);
  await page.getByLabel('Grant write permissions to this key').check();
  await page.getByRole('button', { name: 'Add key' }).click();
  await page.waitForURL(/\/bria\/site\/-\/deploy_keys$/);
  await page.getByRole('button', { name: 'Enable Lib key' }).click();
  await page.waitForURL(/\/bria\/site\/-\/deploy_keys$/);
  assert.equal(await page.getByRole('button', { name: /^Remove / }).count(), 2);
  await assertAccessible(page, 'the deploy keys page with keys');
  await screenshot(page, 'project-settings-deploy-keys');

  const links = await c.db.kysely
    .selectFrom('deploy_keys_projects')
    .innerJoin('keys', 'keys.id', 'deploy_keys_projects.deploy_key_id')
    .select(['keys.title', 'deploy_keys_projects.can_push'])
    .where('deploy_keys_projects.project_id', '=', project.id)
    .orderBy('deploy_keys_projects.id')
    .execute();
  assert.deepEqual(links, [
    { title: 'Browser key', can_push: 1 },
    { title: 'Lib key', can_push: 0 },
  ]);
});
