// Translation file uploads with method=add (Weblate's handle_add_upload: the strings the translation
// lacks are added, all in one commit) and method=source (Weblate's handle_source: the source translation
// of a bilingual gettext component takes a new set of source strings; every translation file follows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { AS_ROOT, CS_PO, DE_PO, HOST, createComponent, poComponent, repoWith, jsonComponent } from '../../helpers/translation.ts';
import { componentRow, translationRow, unitsOf, multipart } from '../../helpers/files.ts';

function upload(ctx: TestApp, url: string, fields: Record<string, string | Buffer>, headers: Record<string, string> = AS_ROOT) {
  const m = multipart(fields, 'upload');
  return ctx.app.inject({ method: 'POST', url, headers: { ...headers, ...m.headers }, payload: m.payload });
}

async function commitCount(ctx: TestApp): Promise<number> {
  const c = await componentRow(ctx);
  let n = 0;
  let sha: string | undefined = c.head;
  const mirror = ctx.c.translation.vcs.mirror(c.id);
  while (sha) {
    const commit = await mirror.commit(sha);
    n++;
    sha = commit?.parents[0];
  }
  return n;
}

async function fileOf(ctx: TestApp, path: string): Promise<string> {
  const c = await componentRow(ctx);
  const bytes = await ctx.c.translation.writes.files.fileAt(c, path);
  return bytes ? bytes.toString('utf8') : '';
}

const ADD = `msgid ""
msgstr ""
"Language: cs\\n"

msgid "Apple"
msgstr "Jablko"

msgid "Pear"
msgstr "Hruška"

msgctxt "menu"
msgid "Open"
msgstr ""

#, fuzzy
msgid "Plum"
msgstr "Švestka"
`;

test('method=add: the strings the translation lacks are added in one commit (change 31 each); existing ones skipped; fuzzy as asked', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const commits = await commitCount(ctx);
  const url = '/api/translations/hello/po/cs/file/';
  const res = await upload(ctx, url, { file: Buffer.from(ADD), method: 'add' });
  assert.equal(res.statusCode, 200, res.body);
  // Apple exists (skipped), Pear and Open added, Plum fuzzy (left out without fuzzy)
  assert.deepEqual(res.json(), { not_found: 0, skipped: 1, accepted: 2, total: 4, result: true, count: 4 });
  assert.equal(await commitCount(ctx), commits + 1);
  const cs = await fileOf(ctx, 'po/cs.po');
  assert.equal(cs, `${CS_PO}\nmsgid "Pear"\nmsgstr "Hruška"\n\nmsgctxt "menu"\nmsgid "Open"\nmsgstr ""\n`);
  // de.po untouched
  assert.equal(await fileOf(ctx, 'po/de.po'), DE_PO);
  const units = (await unitsOf(ctx, 'cs')).map((u) => [u.source, u.context, u.target, u.state, u.pending]);
  assert.deepEqual(units.slice(4), [
    ['Pear', '', 'Hruška', 20, 0],
    ['Open', 'menu', '', 0, 0],
  ]);
  const tr = await translationRow(ctx, 'cs');
  const changes = await ctx.c.db.kysely
    .selectFrom('translation_changes')
    .select(['action', 'target'])
    .where('translation_id', '=', tr.id)
    .where('action', '=', 31)
    .orderBy('id')
    .execute();
  assert.deepEqual(
    changes.map((c) => [c.action, c.target]),
    [
      [31, 'Hruška'],
      [31, ''],
    ],
  );
  assert.equal(tr.total, 6);

  // again: nothing to add, no commit
  const again = await upload(ctx, url, { file: Buffer.from(ADD), method: 'add' });
  assert.deepEqual(again.json(), { not_found: 0, skipped: 3, accepted: 0, total: 4, result: false, count: 4 });
  assert.equal(await commitCount(ctx), commits + 1);

  // fuzzy=process adds Plum as needing editing
  const fuzzy = await upload(ctx, url, { file: Buffer.from(ADD), method: 'add', fuzzy: 'process' });
  assert.deepEqual(fuzzy.json(), { not_found: 0, skipped: 3, accepted: 1, total: 4, result: true, count: 4 });
  assert.match(await fileOf(ctx, 'po/cs.po'), /\n#, fuzzy\nmsgid "Plum"\nmsgstr "Švestka"\n$/);
  const plum = (await unitsOf(ctx, 'cs')).find((u) => u.source === 'Plum')!;
  assert.equal(plum.state, 10);
});

test('method=add on the source translation of a bilingual component: it has no file (Weblate answers the same)', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const res = await upload(ctx, '/api/translations/hello/po/en/file/', { file: Buffer.from('msgid "Pear"\nmsgstr ""\n'), method: 'add' });
  assert.deepEqual([res.statusCode, res.json()], [400, { method: 'No translation file, try using method=source.' }]);
});

test('method=add: permissions and the places it does not work', async (t) => {
  const ctx = await buildTestApp(t);
  await jsonComponent(t, ctx, {
    'locales/en.json': '{\n  "hello": "Hello"\n}\n',
    'locales/cs.json': '{\n  "hello": "Ahoj"\n}\n',
  });
  const file = Buffer.from('{"hello": "Hi", "bye": "Bye"}');
  // a monolingual translation: strings are added to the source
  let res = await upload(ctx, '/api/translations/hello/app/cs/file/', { file, method: 'add' });
  assert.deepEqual([res.statusCode, res.json()], [400, { method: 'This method is not available here. Try adding to the source instead of the translation.' }]);
  // the template takes them (edit_template is on by default)
  res = await upload(ctx, '/api/translations/hello/app/en/file/', { file, method: 'add' });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { not_found: 0, skipped: 1, accepted: 1, total: 2, result: true, count: 2 });
  const app = await componentRow(ctx, 'app');
  const en = await ctx.c.translation.writes.files.fileAt(app, 'locales/en.json');
  assert.equal(en?.toString(), '{\n  "hello": "Hello",\n  "bye": "Bye"\n}\n');
  const cs = (await unitsOf(ctx, 'cs', 'app')).map((u) => [u.context, u.source, u.target]);
  assert.deepEqual(cs, [
    ['hello', 'Hello', 'Ahoj'],
    ['bye', 'Bye', ''],
  ]);
  // anonymous: 401
  res = await upload(ctx, '/api/translations/hello/app/en/file/', { file, method: 'add' }, HOST);
  assert.equal(res.statusCode, 401);
});

const TEMPLATE = `msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

#: src/main.c:10
msgid "Hello, world!"
msgstr ""

msgid "Apple"
msgstr ""

msgid "Banana"
msgstr ""

#, c-format
msgid "%d file"
msgid_plural "%d files"
msgstr[0] ""
msgstr[1] ""
`;

test('method=source: every translation file keeps what stays, loses what went, gets the new strings; one commit; the rows follow', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const commits = await commitCount(ctx);
  // a translation upload is refused
  let res = await upload(ctx, '/api/translations/hello/po/cs/file/', { file: Buffer.from(TEMPLATE), method: 'source' });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [400, { method: 'This method is not available here. Check your permissions or use different translation object.' }],
  );
  res = await upload(ctx, '/api/translations/hello/po/en/file/', { file: Buffer.from(TEMPLATE), method: 'source' });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { not_found: 0, skipped: 0, accepted: 4, total: 4, result: true, count: 4 });
  assert.equal(await commitCount(ctx), commits + 1);
  assert.equal(
    await fileOf(ctx, 'po/cs.po'),
    CS_PO.replace('#. The fruit\n#, fuzzy\nmsgid "Orange"\nmsgstr "Pomeranč"\n\n', '') + '\nmsgid "Banana"\nmsgstr ""\n',
  );
  assert.equal(await fileOf(ctx, 'po/de.po'), DE_PO.replace('#. The fruit\nmsgid "Orange"\nmsgstr "Orange"\n\n', '') + '\nmsgid "Banana"\nmsgstr ""\n');
  const de = (await unitsOf(ctx, 'de')).map((u) => [u.source.split('\u001e')[0], u.target]);
  assert.deepEqual(de, [
    ['Hello, world!', 'Hallo, Welt!'],
    ['Apple', 'Apfel'],
    ['%d file', '%d Datei\u001e%d Dateien'],
    ['Banana', ''],
  ]);
  const en = (await unitsOf(ctx, 'en')).map((u) => u.source.split('\u001e')[0]);
  assert.deepEqual(en.sort(), ['%d file', 'Apple', 'Banana', 'Hello, world!']);
});

test('method=source: a monolingual component or another format answers 400, a broken file 400 and nothing changes', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const head = (await componentRow(ctx)).head;
  const res = await upload(ctx, '/api/translations/hello/po/en/file/', { file: Buffer.from('msgid "a"\nmsgstr "b"\nmsgstr "c"\n'), method: 'source' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(Object.keys(res.json()), ['file']);
  assert.equal((await componentRow(ctx)).head, head);

  const fixture = await repoWith(t, ctx, { 'locales/en.json': '{\n  "hello": "Hello"\n}\n', 'locales/cs.json': '{\n  "hello": "Ahoj"\n}\n' });
  await createComponent(ctx, 'hello', {
    name: 'App',
    slug: 'app',
    repo: fixture.repo,
    file_format: 'json',
    filemask: 'locales/*.json',
    template: 'locales/en.json',
  });
  const r2 = await upload(ctx, '/api/translations/hello/app/en/file/', { file: Buffer.from('{"x": "y"}'), method: 'source' });
  assert.deepEqual(
    [r2.statusCode, r2.json()],
    [400, { method: 'This method is not available here. Check your permissions or use different translation object.' }],
  );
});

test('method=source: pending edits are committed first and kept; the new_base becomes the uploaded file', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx, { 'po/cs.po': CS_PO, 'po/de.po': DE_PO, 'po/hello.pot': TEMPLATE.replace('msgid "Banana"\nmsgstr ""\n\n', '') });
  await ctx.c.db.kysely.updateTable('components').set({ new_base: 'po/hello.pot' }).execute();
  const apple = (await unitsOf(ctx, 'cs')).find((u) => u.source === 'Apple')!;
  const patch = await ctx.app.inject({ method: 'PATCH', url: `/api/units/${apple.id}/`, headers: AS_ROOT, payload: { target: ['Jablko'], state: 20 } });
  assert.equal(patch.statusCode, 200, patch.body);
  const res = await upload(ctx, '/api/translations/hello/po/en/file/', { file: Buffer.from(TEMPLATE), method: 'source' });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { not_found: 0, skipped: 0, accepted: 4, total: 4, result: true, count: 4 });
  assert.equal(await fileOf(ctx, 'po/hello.pot'), TEMPLATE);
  const cs = await fileOf(ctx, 'po/cs.po');
  assert.match(cs, /msgid "Apple"\nmsgstr "Jablko"\n/);
  assert.match(cs, /\nmsgid "Banana"\nmsgstr ""\n$/);
  assert.doesNotMatch(cs, /Orange/);
  const after = (await unitsOf(ctx, 'cs')).map((u) => [u.source.split('\u001e')[0], u.target, u.pending]);
  assert.deepEqual(after, [
    ['Hello, world!', 'Ahoj, světe!', 0],
    ['Apple', 'Jablko', 0],
    ['%d file', '%d soubor\u001e%d soubory\u001e%d souborů', 0],
    ['Banana', '', 0],
  ]);
});

test('method=add: 5,000 new strings in one upload, one commit (its speed: bench/translation-writes.ts)', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const commits = await commitCount(ctx);
  let po = 'msgid ""\nmsgstr ""\n"Language: cs\\n"\n\n';
  for (let i = 0; i < 5000; i++) po += `msgid "New string number ${i}"\nmsgstr "Nový řetězec ${i}"\n\n`;
  const res = await upload(ctx, '/api/translations/hello/po/cs/file/', { file: Buffer.from(po), method: 'add' });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { not_found: 0, skipped: 0, accepted: 5000, total: 5000, result: true, count: 5000 });
  assert.equal(await commitCount(ctx), commits + 1);
  const cs = await fileOf(ctx, 'po/cs.po');
  assert.ok(cs.startsWith(`${CS_PO}\nmsgid "New string number 0"\nmsgstr "Nový řetězec 0"\n\nmsgid "New string number 1"\n`));
  assert.ok(cs.endsWith('msgid "New string number 4999"\nmsgstr "Nový řetězec 4999"\n'));
  assert.equal((await translationRow(ctx, 'cs')).total, 5004);
});

test('method=add keeps a CRLF file CRLF', async (t) => {
  const ctx = await buildTestApp(t);
  const crlf = CS_PO.replace(/\n/g, '\r\n');
  await poComponent(t, ctx, { 'po/cs.po': crlf, 'po/de.po': DE_PO });
  const res = await upload(ctx, '/api/translations/hello/po/cs/file/', {
    file: Buffer.from('msgid "Pear"\nmsgstr "Hruška"\n\nmsgid "Plum"\nmsgstr "Švestka"\n'),
    method: 'add',
  });
  assert.deepEqual(res.json(), { not_found: 0, skipped: 0, accepted: 2, total: 2, result: true, count: 2 });
  assert.equal(await fileOf(ctx, 'po/cs.po'), `${crlf}\r\nmsgid "Pear"\r\nmsgstr "Hruška"\r\n\r\nmsgid "Plum"\r\nmsgstr "Švestka"\r\n`);
});
