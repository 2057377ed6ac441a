// Components backed by git: created from a project of this server, scanned before the response;
// translations, units, statistics (hand-computed), changes, file download, repository, lock; bad
// inputs leave nothing behind; a pull after a push rescans what changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp } from '../../helpers/build-app.ts';
import { API, AS_ROOT, CS_PO, DE_PO, HOST, SITE, createProject, getJson, poComponent, repoWith } from '../../helpers/translation.ts';

const stats = (o: Partial<Record<string, number>>) => {
  const z = (k: string) => o[k] ?? 0;
  return {
    total: z('total'),
    total_words: z('total_words'),
    total_chars: z('total_chars'),
    translated: z('translated'),
    translated_words: z('translated_words'),
    translated_chars: z('translated_chars'),
    fuzzy: z('fuzzy'),
    failing: z('failing'),
    readonly: z('readonly'),
  };
};
const pick = (s: Record<string, unknown>) =>
  Object.fromEntries(
    ['total', 'total_words', 'total_chars', 'translated', 'translated_words', 'translated_chars', 'fuzzy', 'failing', 'readonly'].map((k) => [k, s[k]]),
  );

test('a po component from a project of this server: component, translations, units, statistics, changes', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture, component } = await poComponent(t, ctx);
  assert.equal(component.url, `${API}/components/hello/po/`);
  assert.equal(component.repo, fixture.repo);
  assert.equal(component.branch, 'main');
  assert.equal(component.vcs, 'git');
  assert.equal(component.git_export, `${SITE}/git/hello/po/`);
  assert.equal(component.project.slug, 'hello');
  assert.equal(component.source_language.code, 'en');
  assert.deepEqual(Object.keys(component), [
    'name',
    'slug',
    'id',
    'source_language',
    'project',
    'vcs',
    'repo',
    'git_export',
    'branch',
    'filemask',
    'template',
    'edit_template',
    'new_base',
    'file_format',
    'license',
    'license_url',
    'agreement',
    'web_url',
    'url',
    'repository_url',
    'translations_url',
    'statistics_url',
    'lock_url',
    'changes_list_url',
    'task_url',
    'new_lang',
    'language_code_style',
    'push',
    'check_flags',
    'priority',
    'enforced_checks',
    'restricted',
    'language_regex',
    'locked',
  ]);

  const translations = await getJson(ctx, '/api/components/hello/po/translations/');
  assert.deepEqual(
    translations.results.map((r: any) => [
      r.language.code,
      r.language_code,
      r.filename,
      r.is_source,
      r.is_template,
      r.total,
      r.translated,
      r.fuzzy,
      r.failing_checks,
    ]),
    [
      ['en', 'en', '', true, false, 4, 4, 0, 0],
      ['cs', 'cs', 'po/cs.po', false, false, 4, 2, 1, 0],
      ['de', 'de', 'po/de.po', false, false, 4, 4, 0, 1],
    ],
  );
  assert.equal(translations.results[0].component, undefined);
  const cs = await getJson(ctx, '/api/translations/hello/po/cs/');
  assert.equal(cs.component.url, component.url);
  assert.equal(cs.revision.length, 40);
  assert.deepEqual(
    {
      translated_percent: cs.translated_percent,
      fuzzy_percent: cs.fuzzy_percent,
      total_words: cs.total_words,
      translated_words: cs.translated_words,
      fuzzy_words: cs.fuzzy_words,
      last_change: cs.last_change,
      last_author: cs.last_author,
    },
    { translated_percent: 50, fuzzy_percent: 25, total_words: 8, translated_words: 6, fuzzy_words: 1, last_change: null, last_author: null },
  );
  for (const k of ['url', 'repository_url', 'file_url', 'statistics_url', 'changes_list_url', 'units_list_url'])
    assert.match(cs[k], /^http:\/\/weblate\.test\/api\/translations\/hello\/po\/cs\//);
  assert.equal(cs.share_url, `${SITE}/engage/hello/-/cs/`);
  assert.equal(cs.translate_url, `${SITE}/translate/hello/po/cs/`);

  // units: whole bodies, plural forms joined by U+001E, signed 64-bit hashes as JSON numbers
  const res = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/units/', headers: AS_ROOT });
  assert.match(res.body, /"id_hash":-?\d{15,19},/);
  const units = res.json();
  assert.equal(units.count, 4);
  const [hello, orange, apple, files] = units.results;
  // source_unit: the unit of the source translation (English) with the same id_hash
  const sourceHello = (await getJson(ctx, '/api/translations/hello/po/en/units/')).results[0];
  assert.deepEqual([sourceHello.source, sourceHello.source_unit], ['Hello, world!', `${API}/units/${sourceHello.id}/`]);
  assert.deepEqual(hello, {
    translation: `${API}/translations/hello/po/cs/`,
    source: 'Hello, world!',
    previous_source: '',
    target: 'Ahoj, světe!',
    id_hash: hello.id_hash,
    content_hash: hello.content_hash,
    location: 'src/main.c:10',
    context: '',
    note: '',
    flags: '',
    state: 20,
    fuzzy: false,
    translated: true,
    approved: false,
    position: 1,
    has_suggestion: false,
    has_comment: false,
    has_failing_check: false,
    num_words: 2,
    source_unit: `${API}/units/${sourceHello.id}/`,
    priority: 100,
    id: hello.id,
    web_url: `${SITE}/translate/hello/po/cs/?checksum=${(BigInt(res.body.match(/"id_hash":(-?\d+)/)![1]) + 2n ** 63n).toString(16).padStart(16, '0')}`,
    url: `${API}/units/${hello.id}/`,
    explanation: '',
    extra_flags: '',
    pending: false,
    timestamp: hello.timestamp,
    last_updated: hello.last_updated,
    language_code: 'cs',
  });
  assert.deepEqual([orange.state, orange.fuzzy, orange.note, apple.state, apple.target], [10, true, 'The fruit', 0, '']);
  assert.deepEqual(
    [files.source, files.target, files.flags, files.num_words],
    ['%d file\u001e%d files', '%d soubor\u001e%d soubory\u001e%d souborů', 'c-format', 4],
  );
  assert.deepEqual(await getJson(ctx, `/api/units/${hello.id}/`), hello);
  const de = (await getJson(ctx, '/api/translations/hello/po/de/units/')).results;
  assert.deepEqual(
    de.map((u: any) => [u.source, u.has_failing_check]),
    [
      ['Hello, world!', false],
      ['Orange', true],
      ['Apple', false],
      ['%d file\u001e%d files', false],
    ],
  );
  assert.equal(
    (await ctx.c.db.kysely.selectFrom('units').select('failing_checks').where('id', '=', de[1].id).executeTakeFirstOrThrow()).failing_checks,
    'same',
  );

  // statistics, computed by hand: words and chars on the source
  const tstats = await getJson(ctx, '/api/translations/hello/po/cs/statistics/');
  assert.deepEqual(pick(tstats), stats({ total: 4, total_words: 8, total_chars: 40, translated: 2, translated_words: 6, translated_chars: 29, fuzzy: 1 }));
  assert.deepEqual(
    [tstats.code, tstats.name, tstats.url, tstats.translate_url, tstats.translated_chars_percent, tstats.recent_changes],
    ['cs', 'Czech', `${SITE}/projects/hello/po/cs/`, `${SITE}/translate/hello/po/cs/`, 72.5, 0],
  );
  const cstats = await getJson(ctx, '/api/components/hello/po/statistics/');
  assert.deepEqual(
    cstats.results.map((r: any) => [r.code, r.translated, r.failing]),
    [
      ['en', 4, 0],
      ['cs', 2, 0],
      ['de', 4, 1],
    ],
  );
  const pstats = await getJson(ctx, '/api/projects/hello/statistics/');
  assert.deepEqual(
    pick(pstats),
    stats({ total: 12, total_words: 24, total_chars: 120, translated: 10, translated_words: 22, translated_chars: 109, fuzzy: 1, failing: 1, readonly: 4 }),
  );
  assert.deepEqual(
    [pstats.translated_percent, pstats.translated_words_percent, pstats.failing_percent, pstats.name, pstats.url],
    [83.3, 91.6, 8.3, 'Hello', `${SITE}/projects/hello/`],
  );
  const raw = await ctx.app.inject({ method: 'GET', url: '/api/projects/hello/statistics/', headers: AS_ROOT });
  assert.match(raw.body, /"fuzzy_chars_percent":5\.0,/);
  const langs = await getJson(ctx, '/api/projects/hello/languages/');
  assert.deepEqual(
    langs.map((l: any) => [l.code, l.total, l.translated, l.url]),
    [
      ['cs', 4, 2, `${SITE}/projects/hello/-/cs/`],
      ['en', 4, 4, `${SITE}/projects/hello/-/en/`],
      ['de', 4, 4, `${SITE}/projects/hello/-/de/`],
    ].sort((a: any, _b: any) => (a[0] === 'cs' ? -1 : 0)),
  );
  const lstats = await getJson(ctx, '/api/languages/de/statistics/');
  assert.deepEqual([lstats.total, lstats.translated, lstats.failing, lstats.name, lstats.url], [4, 4, 1, 'German', `${SITE}/languages/de/`]);

  // changes: 51 Created component, then 13 New source string per source unit; newest first
  const changes = await getJson(ctx, '/api/components/hello/po/changes/');
  assert.equal(changes.count, 5);
  assert.deepEqual(changes.results.map((c: any) => [c.action, c.action_name]).sort(), [
    [13, 'New source string'],
    [13, 'New source string'],
    [13, 'New source string'],
    [13, 'New source string'],
    [51, 'Created component'],
  ]);
  const created = changes.results.find((c: any) => c.action === 51);
  assert.deepEqual(created, {
    unit: null,
    component: `${API}/components/hello/po/`,
    translation: null,
    glossary_term: null,
    user: `${API}/users/root/`,
    author: `${API}/users/root/`,
    timestamp: created.timestamp,
    action: 51,
    target: 'Po',
    old: '',
    details: {},
    id: created.id,
    action_name: 'Created component',
    url: `${API}/changes/${created.id}/`,
  });
  assert.match(created.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$/);
  const source = changes.results.find((c: any) => c.action === 13);
  assert.equal(source.translation, `${API}/translations/hello/po/en/`);
  assert.deepEqual(await getJson(ctx, `/api/changes/${created.id}/`), created);
  const user = await getJson(ctx, '/api/users/root/');
  assert.deepEqual([user.username, user.full_name, user.is_superuser, user.url], ['root', 'Administrator', true, `${API}/users/root/`]);
});

test('units q search, changes filters and their errors', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const q = async (query: string, url = '/api/units/') =>
    (await getJson(ctx, `${url}?q=${encodeURIComponent(query)}`)).results.map((u: any) => `${u.language_code}:${u.source.split('\u001e')[0]}`);
  assert.deepEqual(await q('state:<translated'), ['cs:Orange', 'cs:Apple']);
  assert.deepEqual(await q('is:fuzzy OR (language:de AND source:apple)'), ['cs:Orange', 'de:Apple']);
  assert.deepEqual(await q('has:plural', '/api/translations/hello/po/de/units/'), ['de:%d file']);
  assert.deepEqual(await q('check:same'), ['de:Orange']);
  assert.deepEqual(await q('"Hello, world" NOT language:en'), ['cs:Hello, world!', 'de:Hello, world!']);
  const next = await getJson(ctx, '/api/units/?q=state:>=translated&page_size=2');
  assert.equal(next.count, 10);
  assert.equal(next.next, `${API}/units/?page=2&page_size=2&q=state%3A%3E%3Dtranslated`);
  for (const [bad, msg] of [
    ['state:nonsense', 'Could not parse query string: Unsupported state: nonsense'],
    ['foo:bar', 'Could not parse query string: Unsupported field: foo'],
    ['source:r"(.*){1,32000}[bc]"', 'Could not parse query string: Invalid regular expression: invalid repeat count: `{1,32000}`'],
  ]) {
    const res = await ctx.app.inject({ method: 'GET', url: `/api/units/?q=${encodeURIComponent(bad)}`, headers: AS_ROOT });
    assert.equal(res.statusCode, 400, bad);
    assert.deepEqual(res.json(), { q: msg });
  }
  const paren = await ctx.app.inject({ method: 'GET', url: `/api/translations/hello/po/cs/units/?q=${encodeURIComponent('(source:a')}`, headers: AS_ROOT });
  assert.equal(paren.statusCode, 400);
  assert.match(paren.json().q, /^Could not parse query string: /);

  const actions = async (query: string) => (await getJson(ctx, `/api/changes/?${query}`)).results.map((c: any) => c.action);
  assert.deepEqual(await actions('action=50&action=51'), [51, 50]);
  assert.deepEqual(await actions('user=root&action=50'), [50]);
  assert.deepEqual(await actions('user=nobody'), []);
  assert.deepEqual(await actions('timestamp_after=2999-01-01'), []);
  assert.equal((await actions('timestamp_before=2999-01-01T00:00:00Z')).length, 6);
  for (const [query, body] of [
    ['action=999', { action: ['Select a valid choice. 999 is not one of the available choices.'] }],
    ['action=x', { action: ['Select a valid choice. x is not one of the available choices.'] }],
    ['timestamp_after=yesterday', { timestamp: ['Enter a valid date/time.'] }],
  ] as const) {
    const res = await ctx.app.inject({ method: 'GET', url: `/api/changes/?${query}`, headers: AS_ROOT });
    assert.equal(res.statusCode, 400, query);
    assert.deepEqual(res.json(), body);
  }
  const page = await ctx.app.inject({ method: 'GET', url: '/api/changes/?page=9', headers: AS_ROOT });
  assert.equal(page.statusCode, 404);
  assert.deepEqual(page.json(), { detail: 'Invalid page.' });
});

test('component creation refuses bad input with DRF field errors and leaves no row and no mirror', async (t) => {
  const ctx = await buildTestApp(t);
  const fixture = await repoWith(t, ctx, { 'po/cs.po': CS_PO, 'json/en.json': '{"a": "A"}\n', 'broken/cs.po': 'msgid "x"\nmsgstr \n"' });
  await createProject(ctx);
  const post = (payload: Record<string, unknown>) => ctx.app.inject({ method: 'POST', url: '/api/projects/hello/components/', headers: AS_ROOT, payload });
  const ok = { name: 'Po', slug: 'po', repo: fixture.repo, file_format: 'po', filemask: 'po/*.po' };
  const cases: [Record<string, unknown>, unknown][] = [
    [
      {},
      {
        name: ['This field is required.'],
        slug: ['This field is required.'],
        repo: ['This field is required.'],
        filemask: ['This field is required.'],
        file_format: ['This field is required.'],
      },
    ],
    [
      { ...ok, file_format: 'nope' },
      { file_format: [`"nope" is not a valid choice. Known formats: ${(await import('../../../src/formats/registry.ts')).formatIds().join(', ')}.`] },
    ],
    [{ ...ok, filemask: 'po/cs.po' }, { filemask: ['File mask does not contain * as a language placeholder!'] }],
    [{ ...ok, filemask: '../*.po' }, { filemask: ['Enter a relative path inside the repository.'] }],
    [
      { ...ok, template: 'po/en.po' },
      { template: ['You can not use a base file for bilingual translation.'], file_format: ['You can not use a base file for bilingual translation.'] },
    ],
    [
      { ...ok, file_format: 'aresource', filemask: 'res/values-*/strings.xml' },
      {
        template: ['You need to provide a base file for monolingual translation.'],
        file_format: ['You need to provide a base file for monolingual translation.'],
      },
    ],
    [
      { ...ok, slug: 'a b', enforced_checks: 'same', edit_template: 'maybe', priority: 'x' },
      {
        slug: ['Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.'],
        edit_template: ['Must be a valid boolean.'],
        priority: ['A valid integer is required.'],
        enforced_checks: ['Enforced checks has to be a list.'],
      },
    ],
    [{ ...ok, repo: 'ssh://example.com/x.git' }, { repo: ['Unsupported repository URL: use an http(s) URL or a project of this server.'] }],
    [{ ...ok, repo: 'ext::sh -c touch% /tmp/pwned' }, { repo: ['Unsupported repository URL: use an http(s) URL or a project of this server.'] }],
    [{ ...ok, repo: `${SITE}/nobody/nothing.git` }, { repo: ['The repository was not found.'] }],
    [{ ...ok, repo: 'http://127.0.0.1:1/x.git' }, { repo: ['Requests to localhost are not allowed'] }],
    [{ ...ok, branch: 'nope' }, { branch: ['The branch nope was not found in the repository.'] }],
    [{ ...ok, branch: '--upload-pack=touch' }, { branch: ['Enter a valid branch name.'] }],
    [{ ...ok, filemask: 'xx/*.po' }, { filemask: ['The file mask did not match any files.'] }],
    [{ ...ok, filemask: 'broken/*.po' }, { filemask: [/^Could not parse broken\/cs\.po: /] }],
  ];
  for (const [payload, body] of cases) {
    const res = await post(payload);
    assert.equal(res.statusCode, 400, `${JSON.stringify(payload)} → ${res.body}`);
    const got = res.json();
    if (!Object.values(body as Record<string, unknown[]>).some((v) => v[0] instanceof RegExp)) assert.deepEqual(got, body);
    else {
      assert.deepEqual(Object.keys(got).sort(), Object.keys(body as object).sort(), res.body);
      for (const [k, v] of Object.entries(body as Record<string, unknown[]>)) {
        if (v[0] instanceof RegExp) assert.match(got[k][0], v[0]);
        else assert.deepEqual(got[k], v);
      }
    }
  }
  const k = ctx.c.db.kysely;
  assert.deepEqual(await k.selectFrom('components').select('id').execute(), []);
  assert.deepEqual(await k.selectFrom('units').select('id').execute(), []);
  assert.deepEqual(await k.selectFrom('translation_changes').select('action').execute(), [{ action: 50 }]);
  const mirrors = path.join(ctx.dataDir, 'repositories', '@translation');
  assert.deepEqual(fs.existsSync(mirrors) ? fs.readdirSync(mirrors) : [], []);

  assert.equal((await post(ok)).statusCode, 201);
  const dup = await post({ ...ok, name: 'PO' });
  assert.equal(dup.statusCode, 400);
  assert.deepEqual(dup.json(), { name: ['Component with this Component name already exists.'], slug: ['Component with this URL slug already exists.'] });
  const user = await ctx.seed.user();
  const { token } = await ctx.seed.token(user, { scopes: ['api'] });
  const denied = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/hello/components/',
    headers: { ...HOST, authorization: `Token ${token}` },
    payload: { ...ok, slug: 'x', name: 'X' },
  });
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { detail: 'Can not create components' });
});

test('a push and a pull rescan only the changed file: changes 21 and 59, statistics follow, unit ids kept', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const before = (await getJson(ctx, '/api/translations/hello/po/cs/units/')).results;
  const deRevision = (await getJson(ctx, '/api/translations/hello/po/de/')).revision;
  fixture.wt.write('po/cs.po', CS_PO.replace('msgid "Apple"\nmsgstr ""', 'msgid "Apple"\nmsgstr "Jablko"').replace('#, fuzzy\n', ''));
  fixture.wt.commit('Translate apple');
  fixture.wt.push('main');
  const pull = await ctx.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'pull' } });
  assert.equal(pull.statusCode, 200);
  assert.deepEqual(pull.json(), { result: true });
  const after = (await getJson(ctx, '/api/translations/hello/po/cs/units/')).results;
  assert.deepEqual(
    after.map((u: any) => u.id),
    before.map((u: any) => u.id),
  );
  assert.deepEqual(
    after.map((u: any) => [u.target.split('\u001e')[0], u.state]),
    [
      ['Ahoj, světe!', 20],
      ['Pomeranč', 20],
      ['Jablko', 20],
      ['%d soubor', 20],
    ],
  );
  const cs = await getJson(ctx, '/api/translations/hello/po/cs/statistics/');
  assert.deepEqual([cs.translated, cs.fuzzy, cs.translated_percent], [4, 0, 100]);
  assert.equal((await getJson(ctx, '/api/translations/hello/po/de/')).revision, deRevision);
  const changes = (await getJson(ctx, '/api/components/hello/po/changes/?action=21&action=59')).results;
  assert.deepEqual(changes.map((c: any) => [c.action, c.action_name, c.unit]).sort(), [
    [21, 'Rebased repository', null],
    [59, 'String updated in the repository', `${API}/units/${before[1].id}/`],
    [59, 'String updated in the repository', `${API}/units/${before[2].id}/`],
  ]);
  const again = await ctx.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'pull' } });
  assert.deepEqual(again.json(), { result: true });
  assert.equal((await getJson(ctx, '/api/components/hello/po/changes/?action=21')).count, 1);

  // a new language file and a removed one
  fixture.wt.write('po/fr.po', DE_PO.replace('Language: de', 'Language: fr'));
  fixture.wt.rm('po/de.po');
  fixture.wt.commit('French instead of German');
  fixture.wt.push('main');
  // file-scan reads the files at the local head (Weblate's do_file_scan does not fetch): pull first
  await ctx.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'pull' } });
  await ctx.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'file-scan' } });
  assert.deepEqual(
    (await getJson(ctx, '/api/components/hello/po/translations/')).results.map((r: any) => r.language.code),
    ['en', 'cs', 'fr'],
  );
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/de/', headers: AS_ROOT })).statusCode, 404);
  assert.equal((await getJson(ctx, '/api/components/hello/po/changes/?action=25')).results[0].target, 'po/de.po');
});

test('repository operations: the body is checked before the permission; lock; file download with Last-Modified', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const user = await ctx.seed.user();
  const { token } = await ctx.seed.token(user, { scopes: ['api'] });
  const asUser = { ...HOST, authorization: `Token ${token}` };
  const op = (headers: Record<string, string>, payload: unknown) =>
    ctx.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers, payload: payload as object });
  let res = await op(asUser, { operation: 'invalid' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { operation: ['"invalid" is not a valid choice.'] });
  res = await op(asUser, { operation: 'push' });
  assert.equal(res.statusCode, 403);
  res = await op(HOST, { operation: 'push' });
  assert.equal(res.statusCode, 401);
  assert.deepEqual((await op(AS_ROOT, { operation: 'commit' })).json(), { result: true });
  const repo = await getJson(ctx, '/api/components/hello/po/repository/');
  assert.deepEqual(Object.keys(repo), [
    'needs_commit',
    'needs_merge',
    'needs_push',
    'url',
    'remote_commit',
    'weblate_commit',
    'status',
    'merge_failure',
    'outgoing_commits',
    'missing_commits',
    'pending_units',
  ]);
  assert.equal(repo.url, `${API}/components/hello/po/repository/`);
  assert.equal(repo.remote_commit.summary, 'Add translations');
  // the view raises PermissionDenied: 403 for anonymous callers too (reference §5.3)
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/components/hello/po/repository/', headers: HOST })).statusCode, 403);
  assert.deepEqual(await getJson(ctx, '/api/projects/hello/repository/'), {
    needs_commit: false,
    needs_merge: false,
    needs_push: false,
    url: `${API}/projects/hello/repository/`,
    remote_commit: null,
    weblate_commit: null,
    status: null,
    merge_failure: null,
    outgoing_commits: null,
    missing_commits: null,
    pending_units: { total: 0, errors_skipped: 0, commit_policy_skipped: 0, eligible_for_commit: 0 },
  });
  assert.equal((await getJson(ctx, '/api/translations/hello/po/cs/repository/')).url, `${API}/translations/hello/po/cs/repository/`);

  assert.deepEqual(await getJson(ctx, '/api/components/hello/po/lock/', HOST), { locked: false });
  const lock = (headers: Record<string, string>, payload: unknown) =>
    ctx.app.inject({ method: 'POST', url: '/api/components/hello/po/lock/', headers, payload: payload as object });
  assert.equal((await lock(asUser, {})).statusCode, 403);
  res = await lock(AS_ROOT, {});
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { lock: ['This field is required.'] });
  assert.deepEqual((await lock(AS_ROOT, { lock: 1 })).json(), { locked: true });
  assert.deepEqual(await getJson(ctx, '/api/components/hello/po/lock/'), { locked: true });
  assert.deepEqual((await lock(AS_ROOT, { lock: 'false' })).json(), { locked: false });
  assert.deepEqual(
    (await getJson(ctx, '/api/components/hello/po/changes/?action=14&action=15')).results.map((c: any) => c.action_name),
    ['Component unlocked', 'Component locked'],
  );

  const file = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/file/', headers: AS_ROOT });
  assert.equal(file.statusCode, 200);
  assert.equal(file.body, CS_PO);
  assert.equal(file.headers['content-type'], 'text/x-po');
  assert.equal(file.headers['content-disposition'], 'attachment; filename=hello-po-cs.po');
  const lastModified = String(file.headers['last-modified']);
  assert.equal(
    (await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/file/', headers: { ...AS_ROOT, 'if-modified-since': lastModified } }))
      .statusCode,
    304,
  );
  res = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/file/?format=xlsx', headers: AS_ROOT });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { format: 'Conversion to xlsx is not supported' });
  res = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/file/?q=x', headers: AS_ROOT });
  assert.deepEqual(res.json(), { q: 'Query string is ignored without format' });
  res = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/en/file/', headers: AS_ROOT });
  assert.equal(res.statusCode, 404);
});

test('visibility: restricted components and private projects are 404 and absent from lists; anonymous callers do not see VCS fields', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const patch = await ctx.app.inject({ method: 'PATCH', url: '/api/components/hello/po/', headers: AS_ROOT, payload: { restricted: true } });
  assert.equal(patch.statusCode, 200);
  assert.equal(patch.json().restricted, true);
  const user = await ctx.seed.user();
  const { token } = await ctx.seed.token(user, { scopes: ['api'] });
  const asUser = { ...HOST, authorization: `Token ${token}` };
  for (const url of [
    '/api/components/hello/po/',
    '/api/translations/hello/po/cs/',
    '/api/translations/hello/po/cs/units/',
    '/api/components/hello/po/statistics/',
    '/api/languages/cs/',
  ]) {
    const res = await ctx.app.inject({ method: 'GET', url, headers: asUser });
    assert.equal(res.statusCode, 404, url);
  }
  for (const url of ['/api/components/', '/api/translations/', '/api/units/']) assert.equal((await getJson(ctx, url, asUser)).count, 0, url);
  assert.equal((await getJson(ctx, '/api/projects/hello/statistics/', asUser)).total, 0);
  assert.deepEqual(
    (await getJson(ctx, '/api/changes/', asUser)).results.map((c: any) => c.action),
    [50],
  );
  await ctx.app.inject({ method: 'PATCH', url: '/api/components/hello/po/', headers: AS_ROOT, payload: { restricted: false } });
  const anon = await getJson(ctx, '/api/components/hello/po/', HOST);
  assert.deepEqual([anon.vcs, anon.repo, anon.branch, anon.filemask, anon.git_export, anon.push, anon.file_format], [null, null, null, null, null, null, 'po']);
  assert.equal((await getJson(ctx, '/api/languages/cs/', asUser)).code, 'cs');
  const del = await ctx.app.inject({ method: 'DELETE', url: '/api/components/hello/po/', headers: asUser });
  assert.equal(del.statusCode, 403);
  assert.equal((await ctx.app.inject({ method: 'DELETE', url: '/api/components/hello/po/', headers: AS_ROOT })).statusCode, 204);
  assert.deepEqual(await ctx.c.db.kysely.selectFrom('units').select('id').execute(), []);
  assert.equal(fs.existsSync(ctx.c.translation.vcs.mirrorDir(1)), false);
  assert.deepEqual(
    (await getJson(ctx, '/api/changes/')).results.map((c: any) => [c.action, c.target]),
    [
      [38, 'po'],
      [50, 'Hello'],
    ],
  );
});
