// Adding and removing translations: POST /api/components/:p/:c/translations/ → 201 {"data": …} with the
// new file committed on the component's branch (from new_base, header set for the language; the empty
// file of a monolingual format), change 48; DELETE /api/translations/:p/:c/:lang/ → 204 with the file
// removed by a commit, rows gone, change 25; permissions, locks and bad inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { API, AS_ROOT, CS_PO, DE_PO, HOST, SITE, createComponent, createProject, getJson, repoWith } from '../../helpers/translation.ts';

const POT = `msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: \\n"
"Plural-Forms: nplurals=INTEGER; plural=EXPRESSION;\\n"

#: src/main.c:10
msgid "Hello, world!"
msgstr ""

#. The fruit
msgid "Orange"
msgstr ""

msgid "Apple"
msgstr ""

#, c-format
msgid "%d file"
msgid_plural "%d files"
msgstr[0] ""
msgstr[1] ""
`;

async function setup(t: { after(fn: () => unknown): void }, ctx: TestApp, attrs: Record<string, unknown> = { new_base: 'po/hello.pot' }) {
  const fixture = await repoWith(t, ctx, { 'po/cs.po': CS_PO, 'po/de.po': DE_PO, 'po/hello.pot': POT });
  await createProject(ctx);
  await createComponent(ctx, 'hello', { repo: fixture.repo, ...attrs });
  return fixture;
}

async function componentRow(ctx: TestApp, slug = 'po') {
  return ctx.c.db.kysely.selectFrom('components').selectAll().where('slug', '=', slug).executeTakeFirstOrThrow();
}

function git(ctx: TestApp, componentId: number, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', ctx.c.translation.vcs.mirrorDir(componentId), ...args], { encoding: 'utf8' });
}

/** a commit's message as stored */
function message(ctx: TestApp, componentId: number, sha: string): string {
  const raw = git(ctx, componentId, 'cat-file', 'commit', sha);
  return raw.slice(raw.indexOf('\n\n') + 2);
}

async function signedIn(ctx: TestApp, username?: string) {
  const user = await ctx.seed.user(username ? { username } : {});
  const { token } = await ctx.seed.token(user);
  return { user, headers: { ...HOST, authorization: `Token ${token}` } };
}

/** a Developer (30) of the forge project the component follows: translates, does not manage */
async function developer(ctx: TestApp) {
  const who = await signedIn(ctx);
  const component = await componentRow(ctx);
  const project = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', component.platform_project_id!).executeTakeFirstOrThrow();
  await ctx.seed.member({ project }, who.user, 30);
  return who;
}

const add = (ctx: TestApp, headers: Record<string, string>, payload: unknown, url = '/api/components/hello/po/translations/') =>
  ctx.app.inject({ method: 'POST', url, headers, payload: payload as object });

test('POST …/translations/: 201 {"data"}, the file from new_base with its header, one commit by the actor, rows and change 48', async (t) => {
  const ctx = await buildTestApp(t);
  await setup(t, ctx);
  const before = await componentRow(ctx);

  const res = await add(ctx, AS_ROOT, { language_code: 'fr' });
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.headers.allow, 'GET, POST, HEAD, OPTIONS');
  const { data } = res.json();
  assert.deepEqual(Object.keys(res.json()), ['data']);
  assert.equal(data.component, undefined);
  assert.equal(data.language.code, 'fr');
  assert.equal(data.language_code, 'fr');
  assert.equal(data.filename, 'po/fr.po');
  assert.equal(data.is_source, false);
  assert.equal(data.total, 4);
  assert.equal(data.translated, 0);
  assert.equal(data.url, `${API}/translations/hello/po/fr/`);
  assert.equal(data.web_url, `${SITE}/projects/hello/po/fr/`);
  assert.match(data.revision, /^[0-9a-f]{40}$/);
  assert.deepEqual(data, await getJson(ctx, '/api/translations/hello/po/fr/').then(({ component, ...rest }) => rest));

  // one commit on the local branch, authored by root, the add message; only po/fr.po added
  const after = await componentRow(ctx);
  assert.notEqual(after.head, before.head);
  assert.equal(git(ctx, after.id, 'rev-parse', `${after.head}^`).trim(), before.head);
  assert.equal(message(ctx, after.id, after.head), 'Added translation using Hearth (French)\n\n');
  assert.equal(git(ctx, after.id, 'diff', '--name-status', before.head, after.head).trim(), 'A\tpo/fr.po');
  const root = await ctx.c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
  assert.equal(git(ctx, after.id, 'log', '-1', '--format=%an', after.head).trim(), root.name);
  const file = git(ctx, after.id, 'show', `${after.head}:po/fr.po`);
  assert.equal(file, POT.replace('"Language: \\n"', '"Language: fr\\n"').replace('nplurals=INTEGER; plural=EXPRESSION;', 'nplurals=2; plural=n > 1;'));

  const change = await ctx.c.db.kysely
    .selectFrom('translation_changes')
    .selectAll()
    .where('translation_id', '=', data.id)
    .where('action', '=', 48)
    .executeTakeFirstOrThrow();
  assert.equal(change.user_id, root.id);
  assert.equal(change.target, 'fr');
  const changes = await getJson(ctx, '/api/translations/hello/po/fr/changes/?action=48');
  assert.equal(changes.results[0].action_name, 'Added new language');
  const list = await getJson(ctx, '/api/components/hello/po/translations/');
  assert.deepEqual(
    list.results.map((r: { language_code: string }) => r.language_code),
    ['en', 'cs', 'de', 'fr'],
  );
  // a form body works too
  const form = await ctx.app.inject({
    method: 'POST',
    url: '/api/components/hello/po/translations/',
    headers: { ...AS_ROOT, 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'language_code=sk',
  });
  assert.equal(form.statusCode, 201, form.body);
  assert.equal(form.json().data.filename, 'po/sk.po');
});

test('POST …/translations/: bad inputs, permissions, new_lang, locks, bilingual without new_base — nothing committed', async (t) => {
  const ctx = await buildTestApp(t);
  await setup(t, ctx);
  const head = (await componentRow(ctx)).head;

  const anon = await add(ctx, HOST, { language_code: 'fr' });
  assert.equal(anon.statusCode, 401);
  assert.equal(anon.headers['www-authenticate'], 'Token');
  const stranger = await signedIn(ctx);
  const denied = await add(ctx, stranger.headers, { language_code: 'fr' });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { detail: 'Can not create translation' });
  assert.equal((await add(ctx, AS_ROOT, { language_code: 'fr' }, '/api/components/hello/nope/translations/')).statusCode, 404);

  const cases: [unknown, Record<string, string[]>][] = [
    [{}, { language_code: ['This field is required.'] }],
    [{ language_code: '' }, { language_code: ['This field is required.'] }],
    [{ language_code: 5 }, { language_code: ['Not a valid string.'] }],
    [{ language_code: 'xx-nope' }, { language_code: ['No language code "xx-nope" found!'] }],
    [{ language_code: '../../etc' }, { language_code: ['No language code "../../etc" found!'] }],
    [{ language_code: 'cs' }, { language_code: ["Could not add 'cs'!"] }],
    [{ language_code: 'en' }, { language_code: ["Could not add 'en'!"] }],
  ];
  for (const [payload, expected] of cases) {
    const res = await add(ctx, AS_ROOT, payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), expected, JSON.stringify(payload));
  }

  // a Developer of the forge project adds languages — unless adding is turned off (component.edit then)
  const dev = await developer(ctx);
  await ctx.c.db.kysely.updateTable('components').set({ new_lang: 'contact' }).where('slug', '=', 'po').execute();
  const off = await add(ctx, dev.headers, { language_code: 'fr' });
  assert.equal(off.statusCode, 403);
  assert.deepEqual(off.json(), { detail: 'Adding new translations is turned off in the component configuration.' });
  await ctx.c.db.kysely.updateTable('components').set({ new_lang: 'add', locked: 1 }).where('slug', '=', 'po').execute();
  const locked = await add(ctx, dev.headers, { language_code: 'fr' });
  assert.equal(locked.statusCode, 403);
  assert.deepEqual(locked.json(), { detail: 'This translation is currently locked.' });
  await ctx.c.db.kysely.updateTable('components').set({ locked: 0, new_base: '' }).where('slug', '=', 'po').execute();
  const noBase = await add(ctx, dev.headers, { language_code: 'fr' });
  assert.equal(noBase.statusCode, 403);
  assert.deepEqual(noBase.json(), { detail: 'You have set up Weblate to add new translation files, but did not provide base file to do that.' });

  // nothing was committed or created
  assert.equal((await componentRow(ctx)).head, head);
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/fr/', headers: HOST })).statusCode, 404);
  assert.equal(await ctx.c.db.kysely.selectFrom('translation_changes').select('id').where('action', '=', 48).executeTakeFirst(), undefined);

  // with its base back, the developer adds one
  await ctx.c.db.kysely.updateTable('components').set({ new_base: 'po/hello.pot' }).where('slug', '=', 'po').execute();
  const ok = await add(ctx, dev.headers, { language_code: 'fr' });
  assert.equal(ok.statusCode, 201, ok.body);
  const c = await componentRow(ctx);
  assert.equal(git(ctx, c.id, 'log', '-1', '--format=%an <%ae>', c.head).trim(), `${dev.user.name} <${dev.user.email}>`);
});

test('DELETE /api/translations/:p/:c/:lang/: 204, the file removed by a commit, rows (and suggestions) gone, change 25', async (t) => {
  const ctx = await buildTestApp(t);
  await setup(t, ctx);
  const before = await componentRow(ctx);
  const de = await getJson(ctx, '/api/translations/hello/po/de/');
  const units = await getJson(ctx, '/api/translations/hello/po/de/units/');
  const apple = units.results.find((u: { source: string }) => u.source === 'Apple');
  assert.equal(
    (await ctx.app.inject({ method: 'POST', url: `/api/units/${apple.id}/suggestions/`, headers: AS_ROOT, payload: { target: 'Apfelchen' } })).statusCode,
    201,
  );

  const anon = await ctx.app.inject({ method: 'DELETE', url: '/api/translations/hello/po/de/', headers: HOST });
  assert.equal(anon.statusCode, 401);
  const dev = await developer(ctx);
  const denied = await ctx.app.inject({ method: 'DELETE', url: '/api/translations/hello/po/de/', headers: dev.headers });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { detail: 'Can not delete translation' });
  const source = await ctx.app.inject({ method: 'DELETE', url: '/api/translations/hello/po/en/', headers: AS_ROOT });
  assert.equal(source.statusCode, 403);
  assert.deepEqual(source.json(), { detail: 'Can not delete translation' });
  assert.equal((await ctx.app.inject({ method: 'DELETE', url: '/api/translations/hello/po/fr/', headers: AS_ROOT })).statusCode, 404);
  assert.equal((await componentRow(ctx)).head, before.head);

  const res = await ctx.app.inject({ method: 'DELETE', url: '/api/translations/hello/po/de/', headers: AS_ROOT });
  assert.equal(res.statusCode, 204);
  assert.equal(res.body, '');
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/de/', headers: HOST })).statusCode, 404);
  assert.equal(await ctx.c.db.kysely.selectFrom('units').select('id').where('translation_id', '=', de.id).executeTakeFirst(), undefined);
  assert.equal(await ctx.c.db.kysely.selectFrom('suggestions').select('id').executeTakeFirst(), undefined);

  const after = await componentRow(ctx);
  assert.equal(git(ctx, after.id, 'rev-parse', `${after.head}^`).trim(), before.head);
  assert.equal(git(ctx, after.id, 'diff', '--name-status', before.head, after.head).trim(), 'D\tpo/de.po');
  assert.equal(message(ctx, after.id, after.head), 'Deleted translation using Hearth (German)\n\n');
  const removed = await ctx.c.db.kysely.selectFrom('translation_changes').selectAll().where('component_id', '=', after.id).where('action', '=', 25).execute();
  assert.equal(removed.length, 1);
  assert.equal(removed[0].target, 'po/de.po');
  const list = await getJson(ctx, '/api/components/hello/po/translations/');
  assert.deepEqual(
    list.results.map((r: { language_code: string }) => r.language_code),
    ['en', 'cs'],
  );
});

test("a monolingual component: the new file is the format's empty file, its units come from the template", async (t) => {
  const ctx = await buildTestApp(t);
  const fixture = await repoWith(t, ctx, {
    'locales/en.json': '{\n  "hello": "Hello",\n  "bye": "Bye"\n}\n',
    'locales/cs.json': '{\n  "hello": "Ahoj"\n}\n',
  });
  await createProject(ctx);
  await createComponent(ctx, 'hello', {
    name: 'Json',
    slug: 'json',
    repo: fixture.repo,
    file_format: 'json',
    filemask: 'locales/*.json',
    template: 'locales/en.json',
  });
  const res = await add(ctx, AS_ROOT, { language_code: 'de' }, '/api/components/hello/json/translations/');
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().data.filename, 'locales/de.json');
  assert.equal(res.json().data.total, 2);
  assert.equal(res.json().data.translated, 0);
  const c = await componentRow(ctx, 'json');
  assert.equal(git(ctx, c.id, 'show', `${c.head}:locales/de.json`), '{}\n');
});
