// Translation writes end to end, over real ports and real git: a repository with po/*.po is
// pushed to the forge over smart HTTP, a component is created on it, a Developer of the forge project
// translates through the translation API, the translations are committed and pushed back, and a real
// `git clone` shows the new msgstr with PO-Revision-Date and Last-Translator updated and no other line
// changed; a system hook received the push; a second push upstream adding a string shows the new unit
// within 5 s (the component follows its forge project; the test polls the API, the server does not).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { bareGit, runGit, tmpDir } from '../../helpers/git.ts';
import { cloneUrl, startTestServer } from '../../helpers/server.ts';
import { startSink } from '../../helpers/sink.ts';
import { ROOT_TOKEN } from '../../helpers/build-app.ts';
import { AS_ROOT, HOST, getJson } from '../../helpers/translation.ts';

const CS = `msgid ""
msgstr ""
"Project-Id-Version: hello 1.0\\n"
"PO-Revision-Date: 2020-01-02 03:04+0000\\n"
"Last-Translator: Old Hand <old@example.com>\\n"
"Language-Team: Czech\\n"
"Language: cs\\n"
"MIME-Version: 1.0\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"Plural-Forms: nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;\\n"

#: src/main.c:10
msgid "Hello, world!"
msgstr "Ahoj, světe!"

#. The fruit
msgid "Apple"
msgstr ""

#: src/main.c:20
msgid "Orange"
msgstr ""
`;

const DE = `msgid ""
msgstr ""
"Project-Id-Version: hello 1.0\\n"
"PO-Revision-Date: 2020-01-02 03:04+0000\\n"
"Last-Translator: Alte Hand <alt@example.com>\\n"
"Language: de\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

#: src/main.c:10
msgid "Hello, world!"
msgstr "Hallo, Welt!"

#. The fruit
msgid "Apple"
msgstr "Apfel"

#: src/main.c:20
msgid "Orange"
msgstr ""
`;

test('push po files to the forge, translate through the API, commit and push, clone: only the msgstr and the header changed; a later push shows its string within 5 s', {
  timeout: 120_000,
}, async (t) => {
  const s = await startTestServer(t);
  const sink = await startSink(t);
  const root = { 'private-token': ROOT_TOKEN };

  // a system hook listening for pushes
  let res = await s.app.inject({ method: 'POST', url: '/api/v4/hooks', headers: root, payload: { url: `${sink.url}/hook`, push_events: true } });
  assert.equal(res.statusCode, 201, res.body);

  // the forge project, and its files pushed over smart HTTP
  res = await s.app.inject({ method: 'POST', url: '/api/v4/projects', headers: root, payload: { name: 'Hello', path: 'hello', visibility: 'public' } });
  assert.equal(res.statusCode, 201, res.body);
  const forge = res.json();
  const work = tmpDir(t);
  await runGit(work, ['init', '-q', '-b', 'main']);
  fs.mkdirSync(path.join(work, 'po'));
  fs.writeFileSync(path.join(work, 'po/cs.po'), CS);
  fs.writeFileSync(path.join(work, 'po/de.po'), DE);
  await runGit(work, ['add', '-A']);
  await runGit(work, ['commit', '-q', '-m', 'Translations']);
  await runGit(work, ['push', '-q', cloneUrl(s.base, forge.path_with_namespace, 'root', ROOT_TOKEN), 'main']);
  const bare = s.c.repos.pathOf(await s.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', forge.id).executeTakeFirstOrThrow());
  const first = bareGit(bare, ['rev-parse', 'refs/heads/main']).trim();

  // a Developer of the forge project translates (who may do what follows the forge)
  const tess = await s.seed.user({ name: 'Tess Translator', username: 'tess', email: 'tess@example.com' });
  res = await s.app.inject({ method: 'POST', url: `/api/v4/projects/${forge.id}/members`, headers: root, payload: { user_id: tess.id, access_level: 30 } });
  assert.equal(res.statusCode, 201, res.body);
  const tessToken = (await s.seed.token(tess)).token;
  const asTess = { ...HOST, authorization: `Token ${tessToken}` };

  // the translation project and a component on the forge project
  res = await s.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: AS_ROOT,
    payload: { name: 'Hello', slug: 'hello', web: 'https://hello.example/' },
  });
  assert.equal(res.statusCode, 201, res.body);
  res = await s.app.inject({
    method: 'POST',
    url: '/api/projects/hello/components/',
    headers: AS_ROOT,
    payload: { name: 'Po', slug: 'po', file_format: 'po', filemask: 'po/*.po', repo: `${s.config.externalUrl}/${forge.path_with_namespace}.git` },
  });
  assert.equal(res.statusCode, 201, res.body);

  // translate: Apple in Czech
  const apple = (await getJson(s, '/api/translations/hello/po/cs/units/?q=source:Apple', asTess)).results[0];
  res = await s.app.inject({ method: 'PATCH', url: `/api/units/${apple.id}/`, headers: asTess, payload: { target: ['Jablko'], state: 20 } });
  assert.equal(res.statusCode, 200, res.body);
  const repo = await getJson(s, '/api/components/hello/po/repository/');
  assert.equal(repo.needs_commit, true);

  // commit and push (a Maintainer's operations; root here)
  res = await s.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'commit' } });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { result: true });
  res = await s.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'push' } });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { result: true });
  const pushed = bareGit(bare, ['rev-parse', 'refs/heads/main']).trim();
  assert.notEqual(pushed, first);
  const after = await getJson(s, '/api/components/hello/po/repository/');
  assert.deepEqual([after.needs_commit, after.needs_push], [false, false]);

  // a real clone: the new msgstr, the header's PO-Revision-Date and Last-Translator, nothing else
  const clone = tmpDir(t);
  await runGit(clone, ['clone', '-q', cloneUrl(s.base, forge.path_with_namespace), '.']);
  const cs = fs.readFileSync(path.join(clone, 'po/cs.po'), 'utf8');
  const before = CS.split('\n');
  const now = cs.split('\n');
  assert.equal(now.length, before.length, cs);
  const changed = before.flatMap((line, i) => (line === now[i] ? [] : [i]));
  const at = (prefix: string) => before.findIndex((l) => l.startsWith(prefix));
  const appleMsgstr = before.indexOf('msgid "Apple"') + 1;
  assert.deepEqual(
    changed,
    [at('"PO-Revision-Date:'), at('"Last-Translator:'), appleMsgstr].sort((a, b) => a - b),
    cs,
  );
  assert.equal(now[appleMsgstr], 'msgstr "Jablko"');
  assert.equal(now[at('"Last-Translator:')], '"Last-Translator: Tess Translator <tess@example.com>\\n"');
  assert.match(now[at('"PO-Revision-Date:')], /^"PO-Revision-Date: \d{4}-\d\d-\d\d \d\d:\d\d[+-]\d{4}\\n"$/);
  assert.notEqual(now[at('"PO-Revision-Date:')], before[at('"PO-Revision-Date:')]);
  // the other language is untouched, byte for byte; the commit is Tess's
  assert.equal(fs.readFileSync(path.join(clone, 'po/de.po'), 'utf8'), DE);
  const [author] = (await runGit(clone, ['log', '-1', '--format=%an <%ae>'])).stdout.trim().split('\n');
  assert.equal(author, 'Tess Translator <tess@example.com>');
  assert.equal((await runGit(clone, ['rev-parse', 'HEAD'])).stdout.trim(), pushed);

  // the system hook received the push of the translations
  await s.c.worker.drain();
  const pushes = sink.received.filter((r) => r.json?.event_name === 'push');
  const translated = pushes.find((r) => r.json.after === pushed);
  assert.ok(translated, JSON.stringify(pushes.map((r) => r.json.after)));
  assert.deepEqual(
    [translated.json.ref, translated.json.before, translated.json.project_id, translated.json.user_username],
    ['refs/heads/main', first, forge.id, 'root'],
  );

  // a second push upstream adds a string: the unit comes (the deadline bounds a hang, not the speed)
  await runGit(work, ['pull', '-q', '--ff-only', cloneUrl(s.base, forge.path_with_namespace), 'main']);
  fs.appendFileSync(path.join(work, 'po/cs.po'), '\nmsgid "Pear"\nmsgstr "Hruška"\n');
  fs.appendFileSync(path.join(work, 'po/de.po'), '\nmsgid "Pear"\nmsgstr ""\n');
  await runGit(work, ['commit', '-q', '-am', 'Pear']);
  await runGit(work, ['push', '-q', cloneUrl(s.base, forge.path_with_namespace, 'root', ROOT_TOKEN), 'main']);
  const started = Date.now();
  let pear: { target: string; state: number } | undefined;
  while (!pear && Date.now() - started < 60_000) {
    pear = (await getJson(s, '/api/translations/hello/po/cs/units/?q=source:Pear')).results[0];
    if (!pear) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(pear, `no unit for Pear ${Date.now() - started} ms after the push`);
  assert.deepEqual([pear.target, pear.state], ['Hruška', 20]);
  await s.c.translation.writes.follow.idle();
  // Jablko is still there, committed; the statistics count Pear
  const stats = await getJson(s, '/api/translations/hello/po/cs/statistics/');
  assert.deepEqual([stats.total, stats.translated], [4, 3]);
  assert.equal((await getJson(s, `/api/units/${apple.id}/`)).target, 'Jablko');
  const rebased = await getJson(s, '/api/components/hello/po/changes/?action=21');
  assert.ok(rebased.count >= 1);
});
