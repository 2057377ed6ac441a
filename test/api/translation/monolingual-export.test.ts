// A monolingual component (JSON with a template), aliases and codes as written in file names, and the
// component's mirror cloned with git from its git_export URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp } from '../../helpers/build-app.ts';
import { startTestServer } from '../../helpers/server.ts';
import { fixtureEnv, tmpDir } from '../../helpers/git.ts';
import { AS_ROOT, getJson, poComponent, jsonComponent } from '../../helpers/translation.ts';

test('a monolingual JSON component: source from the template, codes as written (pt-BR), keys as context', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture, component } = await jsonComponent(t, ctx, {
    'locales/en.json': '{\n  "hello": "Hello",\n  "bye": "Goodbye",\n  "empty": ""\n}\n',
    'locales/pt-BR.json': '{\n  "hello": "Olá",\n  "bye": ""\n}\n',
    'locales/cs_CZ.json': '{\n  "hello": "Ahoj",\n  "bye": "Nashledanou",\n  "empty": "Prázdné"\n}\n',
    'locales/README.md': 'not a translation\n',
  });
  assert.equal(component.template, 'locales/en.json');
  const translations = (await getJson(ctx, '/api/components/hello/app/translations/')).results;
  assert.deepEqual(
    translations.map((r: any) => [r.language.code, r.language_code, r.filename, r.is_template, r.is_source, r.total, r.translated]),
    [
      ['en', 'en', 'locales/en.json', true, true, 3, 2],
      ['cs', 'cs_CZ', 'locales/cs_CZ.json', false, false, 3, 3],
      ['pt_BR', 'pt-BR', 'locales/pt-BR.json', false, false, 3, 1],
    ],
  );
  const pt = (await getJson(ctx, '/api/translations/hello/app/pt_BR/units/')).results;
  assert.deepEqual(
    pt.map((u: any) => [u.context, u.source, u.target, u.state]),
    [
      ['hello', 'Hello', 'Olá', 20],
      ['bye', 'Goodbye', '', 0],
      ['empty', '', '', 0],
    ],
  );
  const en = (await getJson(ctx, '/api/translations/hello/app/en/units/')).results;
  assert.deepEqual(
    en.map((u: any) => [u.context, u.source, u.target, u.state]),
    [
      ['hello', 'Hello', 'Hello', 20],
      ['bye', 'Goodbye', 'Goodbye', 20],
      ['empty', '', '', 0],
    ],
  );
  // monolingual id_hash is over the key only: the same for every language
  assert.equal(pt[0].id_hash, en[0].id_hash);
  const file = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/app/pt_BR/file/', headers: AS_ROOT });
  assert.equal(file.headers['content-disposition'], 'attachment; filename=hello-app-pt_BR.json');
  assert.equal(file.body, '{\n  "hello": "Olá",\n  "bye": ""\n}\n');
  // a missing template
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/hello/components/',
    headers: AS_ROOT,
    payload: { name: 'B', slug: 'b', repo: fixture.repo, file_format: 'json', filemask: 'locales/*.json', template: 'locales/xx.json' },
  });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { template: ['The template file locales/xx.json was not found in the repository.'] });
});

test('git_export: the component mirror clones with git; it is read-only and follows the component visibility', async (t) => {
  const ctx = await startTestServer(t, {}, { selfUrl: true });
  await poComponent(t, ctx);
  const dir = path.join(tmpDir(t), 'clone');
  // the server runs in this process: git must run asynchronously
  const git = (args: string[], cwd?: string) => promisify(execFile)('git', args, { cwd, env: fixtureEnv() });
  await git(['clone', '-q', `${ctx.base}/git/hello/po/`, dir]);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'po')).sort(), ['cs.po', 'de.po']);
  fs.writeFileSync(path.join(dir, 'x'), 'x');
  await git(['add', 'x'], dir);
  await git(['-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-qm', 'x'], dir);
  await assert.rejects(git(['push', '-q', 'origin', 'HEAD:main'], dir), /Authentication failed|could not read Username|403|401/);
  await ctx.app.inject({ method: 'PATCH', url: '/api/components/hello/po/', headers: AS_ROOT, payload: { restricted: true } });
  const res = await fetch(`${ctx.base}/git/hello/po/info/refs?service=git-upload-pack`);
  assert.equal(res.status, 401);
  const missing = await fetch(`${ctx.base}/git/hello/nope/info/refs?service=git-upload-pack`);
  assert.equal(missing.status, 401);
});
