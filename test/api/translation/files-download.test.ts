// Translation file downloads (reference §1.5): the file as it would be committed (pending edits written
// in, every other byte as stored), conversions with ?format= and ?q=, Last-Modified/If-Modified-Since,
// a component's zip, and render() with an author (the PO header a commit writes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { getFormat } from '../../../src/formats/registry.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { AS_ROOT, CS_PO, DE_PO, HOST, createComponent, createProject, poComponent, repoWith, jsonComponent } from '../../helpers/translation.ts';
import { componentRow, edit, readMo, translationRow, unitsOf, unzip } from '../../helpers/files.ts';

const CS_EDITED = CS_PO.replace('#, fuzzy\nmsgid "Orange"\nmsgstr "Pomeranč"', 'msgid "Orange"\nmsgstr "Pomeranč"').replace(
  'msgid "Apple"\nmsgstr ""',
  'msgid "Apple"\nmsgstr "Jablko"',
);

const get = (ctx: TestApp, url: string, headers: Record<string, string> = AS_ROOT) => ctx.app.inject({ method: 'GET', url, headers });
/** the dates of a generated PO header, which follow the clock */
const undate = (s: string) => s.replace(/\d{4}-\d\d-\d\d \d\d:\d\d\+0000/g, 'DATE');

test('a translation file is the file as it would be committed: pending edits written in, every other byte as stored', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const url = '/api/translations/hello/po/cs/file/';
  let res = await get(ctx, url);
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, CS_PO);
  assert.equal(res.headers['content-type'], 'text/x-po');
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-po-cs.po');
  assert.equal(res.headers.allow, 'GET, POST, PUT, HEAD, OPTIONS');
  const stored = String(res.headers['last-modified']);
  assert.ok(!Number.isNaN(Date.parse(stored)));

  await edit(ctx, 'cs', { Apple: [['Jablko'], 20], Orange: [['Pomeranč'], 20] });
  res = await get(ctx, url);
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, CS_EDITED);
  const modified = String(res.headers['last-modified']);
  assert.ok(Date.parse(modified) >= Date.parse(stored));
  // the repository is as it was; the edits stay pending until committed
  const component = await componentRow(ctx);
  const cs = await translationRow(ctx, 'cs');
  assert.equal((await ctx.c.translation.writes.files.storedBytes(component, cs)).toString(), CS_PO);
  assert.deepEqual(
    (await unitsOf(ctx, 'cs')).map((u) => [u.source, u.pending]),
    [
      ['Hello, world!', 0],
      ['Orange', 1],
      ['Apple', 1],
      ['%d file\u001e%d files', 0],
    ],
  );

  // If-Modified-Since: 304 without a body from the last modification on, 200 before it
  res = await get(ctx, url, { ...AS_ROOT, 'if-modified-since': modified });
  assert.equal(res.statusCode, 304);
  assert.equal(res.body, '');
  res = await get(ctx, url, { ...AS_ROOT, 'if-modified-since': new Date(Date.parse(modified) - 60_000).toUTCString() });
  assert.equal(res.statusCode, 200);
  res = await get(ctx, url, { ...AS_ROOT, 'if-modified-since': 'not a date' });
  assert.equal(res.statusCode, 200);

  // anyone who sees the project downloads it; HEAD answers the headers
  res = await get(ctx, url, HOST);
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, CS_EDITED);
  res = await ctx.app.inject({ method: 'HEAD', url, headers: AS_ROOT });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-po-cs.po');

  // the source translation of a bilingual component has no file; unknown objects are 404
  for (const missing of ['/api/translations/hello/po/en/file/', '/api/translations/hello/po/fr/file/', '/api/translations/hello/nope/cs/file/']) {
    res = await get(ctx, missing);
    assert.equal(res.statusCode, 404, missing);
    assert.deepEqual(res.json(), { detail: 'Not found.' });
  }

  // a restricted component is invisible to a user who is not a member
  await ctx.app.inject({ method: 'PATCH', url: '/api/components/hello/po/', headers: AS_ROOT, payload: { restricted: true } });
  const user = await ctx.seed.user();
  const { token } = await ctx.seed.token(user);
  res = await get(ctx, url, { ...HOST, authorization: `Token ${token}` });
  assert.equal(res.statusCode, 404);
  assert.deepEqual(res.json(), { detail: 'Not found.' });
});

test('conversions with ?format= (and ?q=): po, mo, xliff, csv, tmx, tbx; wrong formats and queries are 400', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  await edit(ctx, 'cs', { Apple: [['Jablko'], 20] });
  const url = '/api/translations/hello/po/cs/file/';

  let res = await get(ctx, `${url}?format=po`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/x-po; charset=utf-8');
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-po-cs.po');
  assert.equal(
    undate(res.body),
    `msgid ""
msgstr ""
"Project-Id-Version: Czech (Hello)\\n"
"Report-Msgid-Bugs-To: \\n"
"POT-Creation-Date: DATE\\n"
"PO-Revision-Date: DATE\\n"
"Last-Translator: Automatically generated\\n"
"Language-Team: Czech <http://hearth.test/translate/hello/po/cs/>\\n"
"Language: cs\\n"
"MIME-Version: 1.0\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"Plural-Forms: nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;\\n"
"X-Generator: Hearth\\n"

#: src/main.c:10
msgid "Hello, world!"
msgstr "Ahoj, světe!"

#. The fruit
#, fuzzy
msgid "Orange"
msgstr "Pomeranč"

msgid "Apple"
msgstr "Jablko"

#, c-format
msgid "%d file"
msgid_plural "%d files"
msgstr[0] "%d soubor"
msgstr[1] "%d soubory"
msgstr[2] "%d souborů"
`,
  );

  res = await get(ctx, `${url}?format=mo`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/x-gettext-catalog; charset=utf-8');
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-po-cs.mo');
  const mo = readMo(res.rawPayload);
  assert.match(mo.get('')!, /^Project-Id-Version: Czech \(Hello\)\n/);
  mo.delete('');
  // translated units only (the fuzzy Orange is left out), plurals as NUL-separated forms
  assert.deepEqual(
    [...mo],
    [
      ['%d file\0%d files', '%d soubor\0%d soubory\0%d souborů'],
      ['Apple', 'Jablko'],
      ['Hello, world!', 'Ahoj, světe!'],
    ],
  );

  res = await get(ctx, `${url}?format=xliff`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/x-xliff+xml; charset=utf-8');
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-po-cs.xlf');
  assert.equal(
    res.body,
    `<?xml version="1.0" encoding="utf-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:1.1" version="1.1">
  <file original="hello-po-cs" source-language="en" target-language="cs" datatype="po">
    <body>
      <trans-unit id="2b88fd5b87c20740">
        <source>Hello, world!</source>
        <target state="translated">Ahoj, světe!</target>
        <context-group name="po-reference" purpose="location"><context context-type="sourcefile">src/main.c</context><context context-type="linenumber">10</context></context-group>
      </trans-unit>
      <trans-unit id="64304c80fe1f083c">
        <source>Orange</source>
        <target state="needs-translation">Pomeranč</target>
        <note from="developer">The fruit</note>
      </trans-unit>
      <trans-unit id="2659b9c7d659adfb">
        <source>Apple</source>
        <target state="translated">Jablko</target>
      </trans-unit>
      <group id="bb035cc5d2307ee6" restype="x-gettext-plurals">
        <trans-unit id="bb035cc5d2307ee6[0]" weblate-flags="c-format">
          <source>%d file</source>
          <target state="translated">%d soubor</target>
        </trans-unit>
        <trans-unit id="bb035cc5d2307ee6[1]" weblate-flags="c-format">
          <source>%d files</source>
          <target state="translated">%d soubory</target>
        </trans-unit>
        <trans-unit id="bb035cc5d2307ee6[2]" weblate-flags="c-format">
          <source>%d files</source>
          <target state="translated">%d souborů</target>
        </trans-unit>
      </group>
    </body>
  </file>
</xliff>
`,
  );
  // the XLIFF 1.1 flavour reads back with the xliff format
  res = await get(ctx, `${url}?format=xliff11`);
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /datatype="plaintext"/);

  res = await get(ctx, `${url}?format=csv`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-po-cs.csv');
  assert.equal(
    res.body,
    [
      '"location","source","target","id","fuzzy","context","translator_comments","developer_comments"',
      '"src/main.c:10","Hello, world!","Ahoj, světe!","","False","","",""',
      '"","Orange","Pomeranč","","True","","","The fruit"',
      '"","Apple","Jablko","","False","","",""',
      // Weblate's guard against spreadsheet formulas
      `"","'%d file'","'%d soubor'","","False","","",""`,
      '',
    ].join('\r\n'),
  );

  res = await get(ctx, `${url}?format=tmx`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/x-tmx; charset=utf-8');
  assert.equal(
    res.body,
    `<?xml version="1.0" encoding="utf-8"?>
<tmx version="1.4">
  <header creationtool="Hearth" creationtoolversion="1" segtype="sentence" o-tmf="UTF-8" adminlang="en" srclang="en" datatype="PlainText"/>
  <body>
    <tu>
      <tuv xml:lang="en"><seg>Hello, world!</seg></tuv>
      <tuv xml:lang="cs"><seg>Ahoj, světe!</seg></tuv>
    </tu>
    <tu>
      <tuv xml:lang="en"><seg>Apple</seg></tuv>
      <tuv xml:lang="cs"><seg>Jablko</seg></tuv>
    </tu>
    <tu>
      <tuv xml:lang="en"><seg>%d file</seg></tuv>
      <tuv xml:lang="cs"><seg>%d soubor</seg></tuv>
    </tu>
  </body>
</tmx>
`,
  );

  res = await get(ctx, `${url}?format=tbx`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-po-cs.tbx');
  assert.match(
    res.body,
    /<termEntry>\n {8}<langSet xml:lang="en"><tig><term>Apple<\/term><\/tig><\/langSet>\n {8}<langSet xml:lang="cs"><tig><term>Jablko<\/term>/,
  );

  // ?q= filters the converted units
  res = await get(ctx, `${url}?format=csv&q=${encodeURIComponent('source:Apple OR state:>=translated AND source:Hello')}`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(
    res.body.split('\r\n').map((l) => l.split(',')[1]),
    ['"source"', '"Hello', '"Apple"', undefined],
  );

  for (const [query, status, body] of [
    ['?format=xlsx', 400, { format: 'Conversion to xlsx is not supported' }],
    ['?format=api', 400, { format: 'Conversion to api is not supported' }],
    ['?format=json', 400, { format: 'File format is not compatible with this translation' }],
    ['?format=aresource', 400, { format: 'File format is not compatible with this translation' }],
    ['?q=Apple', 400, { q: 'Query string is ignored without format' }],
    ['?format=po&q=state:nonsense', 400, null],
  ] as const) {
    res = await get(ctx, `${url}${query}`);
    assert.equal(res.statusCode, status, query);
    if (body) assert.deepEqual(res.json(), body, query);
    else assert.match(res.json().q, /^Could not parse query string: /, query);
  }
  // an empty q is no query
  assert.equal((await get(ctx, `${url}?q=`)).statusCode, 200);
  // converted, the source translation of a bilingual component has its units although it has no file
  res = await get(ctx, '/api/translations/hello/po/en/file/?format=csv');
  assert.equal(res.statusCode, 200);
  assert.equal(res.body.split('\r\n').length, 6);
});

test('a monolingual JSON translation: a key the file lacks is added by an edit; json, aresource, strings conversions; mo is refused', async (t) => {
  const ctx = await buildTestApp(t);
  await jsonComponent(t, ctx, {
    'locales/en.json': '{\n  "hello": "Hello",\n  "bye": "Goodbye",\n  "empty": "Empty"\n}\n',
    'locales/pt-BR.json': '{\n  "hello": "Olá",\n  "bye": ""\n}\n',
  });
  await edit(ctx, 'pt_BR', { bye: [['Tchau'], 20], empty: [['Vazio "x"'], 20] }, { componentSlug: 'app' });
  const url = '/api/translations/hello/app/pt_BR/file/';
  let res = await get(ctx, url);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-app-pt_BR.json');
  assert.equal(res.body, '{\n  "hello": "Olá",\n  "bye": "Tchau",\n  "empty": "Vazio \\"x\\""\n}\n');

  res = await get(ctx, `${url}?format=json`);
  assert.equal(res.statusCode, 200);
  // the server's JSON responses carry no charset parameter (http/plugins/conventions.ts)
  assert.equal(res.headers['content-type'], 'application/json');
  assert.equal(res.body, '{\n    "hello": "Olá",\n    "bye": "Tchau",\n    "empty": "Vazio \\"x\\""\n}\n');
  res = await get(ctx, `${url}?format=aresource`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-disposition'], 'attachment; filename=hello-app-pt_BR.xml');
  assert.equal(
    res.body,
    '<?xml version="1.0" encoding="utf-8"?>\n<resources>\n    <string name="hello">Olá</string>\n    <string name="bye">Tchau</string>\n    <string name="empty">Vazio \\"x\\"</string>\n</resources>\n',
  );
  res = await get(ctx, `${url}?format=strings`);
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '"hello" = "Olá";\n"bye" = "Tchau";\n"empty" = "Vazio \\"x\\"";\n');
  res = await get(ctx, `${url}?format=mo`);
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { format: 'File format is not compatible with this translation' });
  // the template is the source translation's file
  res = await get(ctx, '/api/translations/hello/app/en/file/');
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '{\n  "hello": "Hello",\n  "bye": "Goodbye",\n  "empty": "Empty"\n}\n');

  // the component's zip holds the template and the translations
  res = await get(ctx, '/api/components/hello/app/file/');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(
    [...unzip(res.rawPayload)].map(([n, b]) => [n, b.toString()]),
    [
      ['locales/en.json', '{\n  "hello": "Hello",\n  "bye": "Goodbye",\n  "empty": "Empty"\n}\n'],
      ['locales/pt-BR.json', '{\n  "hello": "Olá",\n  "bye": "Tchau",\n  "empty": "Vazio \\"x\\""\n}\n'],
    ],
  );
});

test("a component's file is a zip of its translation files, pending edits written in; zip:<exporter> converts each", async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  await edit(ctx, 'cs', { Apple: [['Jablko'], 20], Orange: [['Pomeranč'], 20] });
  const url = '/api/components/hello/po/file/';
  let res = await get(ctx, url);
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/zip');
  assert.equal(res.headers['content-disposition'], 'attachment; filename="hello-po.zip"');
  assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
  assert.deepEqual(
    [...unzip(res.rawPayload)].map(([n, b]) => [n, b.toString()]),
    [
      ['po/cs.po', CS_EDITED],
      ['po/de.po', DE_PO],
    ],
  );
  const modified = String(res.headers['last-modified']);
  assert.equal((await get(ctx, url, { ...AS_ROOT, 'if-modified-since': modified })).statusCode, 304);
  assert.equal((await get(ctx, `${url}?format=zip`, HOST)).statusCode, 200);

  res = await get(ctx, `${url}?format=zip:csv`);
  assert.equal(res.statusCode, 200);
  const entries = unzip(res.rawPayload);
  assert.deepEqual([...entries.keys()], ['po/cs.csv', 'po/de.csv']);
  assert.match(entries.get('po/cs.csv')!.toString(), /^"location","source","target"/);

  for (const [query, body] of [
    ['?format=tar', { format: 'Conversion to tar is not supported' }],
    ['?format=zip:xlsx', { format: 'Conversion to xlsx is not supported' }],
    ['?format=zip:json', { format: 'File format is not compatible with this translation' }],
  ] as const) {
    res = await get(ctx, `${url}${query}`);
    assert.equal(res.statusCode, 400, query);
    assert.deepEqual(res.json(), body, query);
  }
  res = await get(ctx, '/api/components/hello/nope/file/');
  assert.equal(res.statusCode, 404);
});

test('render for a commit: the PO header gets PO-Revision-Date and Last-Translator, only the given units are written', async (t) => {
  const ctx = await buildTestApp(t);
  const de = DE_PO.replace('"Language: de\\n"', '"PO-Revision-Date: 2020-01-01 00:00+0000\\n"\n"Language: de\\n"');
  await poComponent(t, ctx, { 'po/cs.po': CS_PO, 'po/de.po': de });
  await edit(ctx, 'cs', { Apple: [['Jablko'], 20], Orange: [['Pomeranč'], 20] });
  const files = ctx.c.translation.writes.files;
  const component = await componentRow(ctx);
  const cs = await translationRow(ctx, 'cs');
  const author = { name: 'Jana Nováková', email: 'jana@example.com' };
  const now = new Date('2026-11-26T17:05:42Z');
  // missing header fields are added at the end of the header
  let out = await files.render(component, cs, { author, now });
  assert.equal(
    out.toString(),
    CS_EDITED.replace(
      '"Plural-Forms: nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;\\n"\n',
      '"Plural-Forms: nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;\\n"\n"PO-Revision-Date: 2026-11-26 17:05+0000\\n"\n"Last-Translator: Jana Nováková <jana@example.com>\\n"\n',
    ),
  );
  // only the units asked for
  const apple = (await unitsOf(ctx, 'cs')).filter((u) => u.source === 'Apple');
  out = await files.render(component, cs, { units: apple });
  assert.equal(out.toString(), CS_PO.replace('msgid "Apple"\nmsgstr ""', 'msgid "Apple"\nmsgstr "Jablko"'));
  // nothing pending: the bytes as stored; an existing header field is rewritten in place
  const deRow = await translationRow(ctx, 'de');
  assert.equal((await files.render(component, deRow)).toString(), de);
  out = await files.render(component, deRow, { author, now });
  assert.equal(
    out.toString(),
    de
      .replace('"PO-Revision-Date: 2020-01-01 00:00+0000\\n"', '"PO-Revision-Date: 2026-11-26 17:05+0000\\n"')
      .replace(
        '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n',
        '"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n"Last-Translator: Jana Nováková <jana@example.com>\\n"\n',
      ),
  );
});

/** Each format's fixture (test/formats/fixtures) as a component: where its files go, the mask, the template, the language edited. */
const FORMAT_CASES: { id: string; files: Record<string, string>; filemask: string; template?: string; language: string }[] = [
  { id: 'po', files: { 'po/cs.po': 'po/cs.po' }, filemask: 'po/*.po', language: 'cs' },
  { id: 'po-mono', files: { 'l/en.po': 'po-mono/en.po', 'l/cs.po': 'po-mono/cs.po' }, filemask: 'l/*.po', template: 'l/en.po', language: 'cs' },
  { id: 'json', files: { 'l/en.json': 'json/en.json', 'l/cs.json': 'json/cs.json' }, filemask: 'l/*.json', template: 'l/en.json', language: 'cs' },
  {
    id: 'json-nested',
    files: { 'l/en.json': 'json-nested/en.json', 'l/de.json': 'json-nested/de.json' },
    filemask: 'l/*.json',
    template: 'l/en.json',
    language: 'de',
  },
  { id: 'i18next', files: { 'l/en.json': 'i18next/en.json', 'l/cs.json': 'i18next/cs.json' }, filemask: 'l/*.json', template: 'l/en.json', language: 'cs' },
  {
    id: 'i18nextv4',
    files: { 'l/en.json': 'i18nextv4/en.json', 'l/pl.json': 'i18nextv4/pl.json' },
    filemask: 'l/*.json',
    template: 'l/en.json',
    language: 'pl',
  },
  {
    id: 'aresource',
    files: { 'res/values/strings.xml': 'aresource/strings.xml', 'res/values-cs/strings.xml': 'aresource/cs/strings.xml' },
    filemask: 'res/values-*/strings.xml',
    template: 'res/values/strings.xml',
    language: 'cs',
  },
  { id: 'xliff', files: { 'x/cs.xlf': 'xliff/cs.xlf' }, filemask: 'x/*.xlf', language: 'cs' },
  {
    id: 'properties',
    files: { 'p/en.properties': 'properties/en.properties', 'p/cs.properties': 'properties/cs.properties' },
    filemask: 'p/*.properties',
    template: 'p/en.properties',
    language: 'cs',
  },
  {
    id: 'strings',
    files: { 's/en.strings': 'strings/en.strings', 's/cs.strings': 'strings/cs.strings' },
    filemask: 's/*.strings',
    template: 's/en.strings',
    language: 'cs',
  },
  { id: 'yaml', files: { 'y/en.yml': 'yaml/en.yml', 'y/cs.yml': 'yaml/cs.yml' }, filemask: 'y/*.yml', template: 'y/en.yml', language: 'cs' },
  { id: 'csv', files: { 'c/en.csv': 'csv/en.csv', 'c/de.csv': 'csv/de.csv' }, filemask: 'c/*.csv', template: 'c/en.csv', language: 'de' },
];

test('every format: the download of one edited unit changes that entry only, every other byte as stored', async (t) => {
  const ctx = await buildTestApp(t);
  await createProject(ctx);
  const fixtures = new URL('../../formats/fixtures/', import.meta.url);
  for (const fc of FORMAT_CASES) {
    // bytes as they are (the .strings template is UTF-16)
    const files = Object.fromEntries(Object.entries(fc.files).map(([to, from]) => [to, readFileSync(new URL(from, fixtures))]));
    const fixture = await repoWith(t, ctx, files as unknown as Record<string, string>);
    const slug = `f-${fc.id}`;
    await createComponent(ctx, 'hello', {
      name: slug,
      slug,
      repo: fixture.repo,
      file_format: fc.id,
      filemask: fc.filemask,
      ...(fc.template ? { template: fc.template } : {}),
    });
    const unit = (await unitsOf(ctx, fc.language, slug)).find((u) => u.state === 20)!;
    assert.ok(unit, fc.id);
    const target = unit.target.split('\u001e').map((_, i) => `Edited ${i} “✓” "q" 'a'`);
    await edit(ctx, fc.language, { [unit.context || unit.source]: [target, 20] }, { componentSlug: slug });

    const res = await get(ctx, `/api/translations/hello/${slug}/${fc.language}/file/`);
    assert.equal(res.statusCode, 200, `${fc.id}: ${res.body}`);
    const rendered = res.rawPayload;
    const component = await componentRow(ctx, slug);
    const translation = await translationRow(ctx, fc.language, slug);
    const stored = await ctx.c.translation.writes.files.storedBytes(component, translation);
    const format = getFormat(fc.id)!;
    const opts = { template: fc.template ? files[fc.template] : undefined, language: translation.language_code };
    const before = format.parse(stored, opts).units;
    const after = format.parse(rendered, opts).units;
    const i = before.findIndex((u) => u.context === unit.context && u.source.join('\u001e') === unit.source);
    assert.ok(i >= 0, `${fc.id}: the unit is in the file`);
    assert.deepEqual(after[i].target, target, fc.id);
    assert.deepEqual(
      after.filter((_, j) => j !== i),
      before.filter((_, j) => j !== i),
      fc.id,
    );
    const [start, end] = format.locate!(stored, before[i].id, opts)!;
    assert.ok(rendered.subarray(0, start).equals(stored.subarray(0, start)), `${fc.id}: the bytes before the entry are unchanged`);
    assert.ok(rendered.subarray(rendered.length - (stored.length - end)).equals(stored.subarray(end)), `${fc.id}: the bytes after the entry are unchanged`);
  }
});
