// The translation editor: the page of a unit (by checksum, by offset, with q filters), Save through the
// domain code of PATCH /api/units/:id/ then the next unit of the filter, Suggest, accept and delete,
// comments, plural forms with their labels, read-only viewers, and bad input that changes nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { assets } from '../../src/web/assets.ts';
import { buildTestApp, type TestApp } from '../helpers/build-app.ts';
import { AS_ROOT, getJson, poComponent, SITE } from '../helpers/translation.ts';
import { type WebSession, webGet, webPost, webSignIn } from '../helpers/web.ts';

const UNITS = '/api/translations/hello/po/cs/units/';
const EDITOR = '/translate/hello/po/cs/';

interface WireUnit {
  id: number;
  /** plural forms joined by U+001E, as the API sends them */
  source: string;
  target: string;
  state: number;
  web_url: string;
  pending: boolean;
}

async function units(ctx: TestApp): Promise<WireUnit[]> {
  return (await getJson(ctx, UNITS)).results;
}

async function unitBySource(ctx: TestApp, source: string): Promise<WireUnit> {
  const u = (await units(ctx)).find((x) => x.source.split('\u001e')[0] === source);
  assert.ok(u, `no unit ${source}`);
  return u;
}

const forms = (s: string) => s.split('\u001e');
const targetOf = async (ctx: TestApp, id: number) => forms((await getJson(ctx, `/api/units/${id}/`)).target);
const pathOf = (webUrl: string) => webUrl.slice(SITE.length);
const textareas = (html: string) => [...html.matchAll(/<textarea id="target-(\d+)" name="target"[^>]*>\n?([^<]*)<\/textarea>/g)].map((m) => m[2]);
const h1s = (html: string) => html.match(/<h1[\s>]/g)?.length ?? 0;

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const root = await webSignIn(ctx.app, 'root', 'root-password-1');
  return { ctx, root };
}

async function changes(ctx: TestApp, unitId: number) {
  return ctx.c.db.kysely.selectFrom('translation_changes').select(['action', 'target', 'user_id']).where('unit_id', '=', unitId).orderBy('id').execute();
}

test('the unit web_url the API emits is the editor page with exactly the unit: source, location, state, translation, navigation', async (t) => {
  const { ctx, root } = await setup(t);
  const hello = await unitBySource(ctx, 'Hello, world!');
  assert.match(hello.web_url, /^http:\/\/.+\/translate\/hello\/po\/cs\/\?checksum=[0-9a-f]{16}$/);
  for (const s of [root, null]) {
    const res = await webGet(ctx.app, pathOf(hello.web_url), s);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(h1s(res.body), 1);
    assert.match(res.body, /<div class="editor-string" lang="en" dir="ltr">Hello, world!<\/div>/);
    assert.match(res.body, /<dt>Location<\/dt><dd><code>src\/main.c:10<\/code><\/dd>/);
    assert.match(res.body, /<dt>State<\/dt><dd>Translated<\/dd>/);
    assert.deepEqual(textareas(res.body), ['Ahoj, světe!']);
    assert.match(res.body, /<label class="FormControl-label" for="target-0">Translation<\/label>/);
    assert.match(res.body, />1 \/ 4</);
    assert.doesNotMatch(res.body, /Orange|Pomeranč/);
  }
  // the signed-in translator gets the form; the anonymous a read-only page with a sign-in link
  const signed = await webGet(ctx.app, pathOf(hello.web_url), root);
  assert.match(signed.body, /<form method="post" action="\/-\/translate\/unit\/\d+\/save" id="editor-form"/);
  assert.match(signed.body, /<button type="submit" class="btn btn-primary mr-2" data-editor-save="" aria-keyshortcuts="Control\+Enter">Save<\/button>/);
  assert.match(signed.body, /aria-keyshortcuts="Alt\+ArrowRight Alt\+PageDown"/);
  assert.match(signed.body, /Keyboard shortcuts/);
  const anon = await webGet(ctx.app, pathOf(hello.web_url));
  assert.doesNotMatch(anon.body, /editor-form|>Save</);
  assert.match(anon.body, /readonly/);
  assert.match(anon.body, />Sign in<\/a> to translate/);

  // notes, fuzzy state and the other languages of the same string
  const orange = await unitBySource(ctx, 'Orange');
  const page = await webGet(ctx.app, pathOf(orange.web_url), root);
  assert.match(page.body, /<dt>Notes<\/dt><dd class="editor-pre">The fruit<\/dd>/);
  assert.match(page.body, /<dt>State<\/dt><dd>Needs editing<\/dd>/);
  assert.match(page.body, /<input type="checkbox" name="fuzzy" value="1" checked\/?>/);
  assert.match(page.body, />2 \/ 4</);
  assert.match(page.body, /href="\/translate\/hello\/po\/de\/\?checksum=[0-9a-f]{16}">German<\/a>/);
});

test('by offset and with q filters: N / total in the filtered set, first/previous/next/last, beyond the end the last, bad offsets 404', async (t) => {
  const { ctx, root } = await setup(t);
  const second = await webGet(ctx.app, `${EDITOR}?offset=2`, root);
  assert.equal(second.statusCode, 200);
  assert.match(second.body, /Orange/);
  assert.match(second.body, />2 \/ 4</);
  assert.match(
    second.body,
    /href="\/translate\/hello\/po\/cs\/\?offset=1" rel="prev"|rel="prev" href="\/translate\/hello\/po\/cs\/\?offset=1"|data-editor-prev/,
  );

  const untranslated = await webGet(ctx.app, `${EDITOR}?q=${encodeURIComponent('state:<translated')}`, root);
  assert.equal(untranslated.statusCode, 200);
  assert.match(untranslated.body, />1 \/ 2</);
  assert.match(untranslated.body, /Orange/);
  assert.match(untranslated.body, /<input type="hidden" name="q" value="state:&lt;translated"/);
  const next = await webGet(ctx.app, `${EDITOR}?q=${encodeURIComponent('state:<translated')}&offset=2`, root);
  assert.match(next.body, />2 \/ 2</);
  assert.match(next.body, /<div class="editor-string" lang="en" dir="ltr">Apple<\/div>/);

  const beyond = await webGet(ctx.app, `${EDITOR}?offset=99`, root);
  assert.equal(beyond.statusCode, 200);
  assert.match(beyond.body, />4 \/ 4</);
  assert.match(beyond.body, /%d files/);

  for (const bad of ['?offset=0', '?offset=abc', '?offset=-1', '?checksum=zz', '?checksum=0123456789abcdef']) {
    const res = await webGet(ctx.app, `${EDITOR}${bad}`, root);
    assert.equal(res.statusCode, 404, bad);
    assert.match(res.body, /Page not found/);
  }
  for (const bad of ['/translate/hello/po/xx/', '/translate/hello/nope/cs/', '/translate/nope/po/cs/'])
    assert.equal((await webGet(ctx.app, bad, root)).statusCode, 404, bad);

  const none = await webGet(ctx.app, `${EDITOR}?q=${encodeURIComponent('source:nothing-like-this')}`, root);
  assert.equal(none.statusCode, 200);
  assert.match(none.body, /No strings match the search/);
  const broken = await webGet(ctx.app, `${EDITOR}?q=${encodeURIComponent('state:<<')}`, root);
  assert.equal(broken.statusCode, 400);
  assert.match(broken.body, /Could not parse query string/);

  // a checksum outside the filter: the unit without the filter
  const hello = await unitBySource(ctx, 'Hello, world!');
  const outside = await webGet(ctx.app, `${pathOf(hello.web_url)}&q=${encodeURIComponent('state:<translated')}`, root);
  assert.equal(outside.statusCode, 303);
  assert.equal(outside.headers.location, pathOf(hello.web_url));
});

test('save: through the unit edit (target, state, change record, pending), then 303 to the next unit of the same filter; at the end the translation page', async (t) => {
  const { ctx, root } = await setup(t);
  const q = 'state:<translated';
  const orange = await unitBySource(ctx, 'Orange');
  const apple = await unitBySource(ctx, 'Apple');
  const saved = await webPost(ctx.app, `/-/translate/unit/${orange.id}/save`, root, { target: 'Oranž', q });
  assert.equal(saved.statusCode, 303, saved.body.slice(0, 400));
  assert.equal(saved.headers.location, `${pathOf(apple.web_url).replace('?', `?q=${encodeURIComponent(q)}&`)}`);
  const after = await getJson(ctx, `/api/units/${orange.id}/`);
  assert.deepEqual([after.target, after.state, after.pending], ['Oranž', 20, true]);
  assert.ok((await changes(ctx, orange.id)).some((c) => c.target === 'Oranž' && (c.action === 2 || c.action === 5)));

  // "Needs editing" keeps it fuzzy; the last unit of the filter ends on the translation page
  const last = await webPost(ctx.app, `/-/translate/unit/${apple.id}/save`, root, { target: 'Jablko', fuzzy: '1', q });
  assert.equal(last.statusCode, 303);
  assert.equal(last.headers.location, '/projects/hello/po/cs/');
  const a = await getJson(ctx, `/api/units/${apple.id}/`);
  assert.deepEqual([a.target, a.state], ['Jablko', 10]);
  const stats = await getJson(ctx, '/api/translations/hello/po/cs/statistics/');
  assert.equal(stats.translated, 3);
});

test('plural units: one labelled textarea per form of the language; a save with the wrong number of forms is 422 with what was typed, nothing saved', async (t) => {
  const { ctx, root } = await setup(t);
  const files = await unitBySource(ctx, '%d file');
  const page = await webGet(ctx.app, pathOf(files.web_url), root);
  assert.equal(page.statusCode, 200);
  assert.deepEqual(textareas(page.body), ['%d soubor', '%d soubory', '%d souborů']);
  const labels = [...page.body.matchAll(/<label class="FormControl-label" for="target-\d">([^<]+)<\/label>/g)].map((m) => m[1]);
  assert.equal(labels.length, 3);
  assert.match(labels[0], /^One \(1\)$/);
  assert.match(labels[1], /^Few \(2, 3, 4\)$/);
  assert.match(labels[2], /^(Other|Many) \(0, 5, 6, 7, 8, 9, …\)$/);
  assert.match(page.body, /Singular|One/);
  assert.match(page.body, /<dt>Flags<\/dt><dd><code>c-format<\/code><\/dd>/);

  const bad = await webPost(ctx.app, `/-/translate/unit/${files.id}/save`, root, { target: ['%d x', '%d y'] });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /Number of plurals does not match/);
  assert.deepEqual(textareas(bad.body), ['%d x', '%d y', '']);
  assert.deepEqual(await targetOf(ctx, files.id), forms(files.target));

  const good = await webPost(ctx.app, `/-/translate/unit/${files.id}/save`, root, { target: ['%d a', '%d b', '%d c'] });
  assert.equal(good.statusCode, 303);
  assert.deepEqual(await targetOf(ctx, files.id), ['%d a', '%d b', '%d c']);
});

test('a contributor suggests (no Save); a forged save is 403 and changes nothing; the translator accepts or deletes; comments', async (t) => {
  const { ctx, root } = await setup(t);
  const user = await ctx.seed.user({ username: 'carol' });
  const carol = await webSignIn(ctx.app, user.username);
  const apple = await unitBySource(ctx, 'Apple');
  const page = await webGet(ctx.app, pathOf(apple.web_url), carol);
  assert.equal(page.statusCode, 200);
  assert.doesNotMatch(page.body, />Save</);
  assert.match(page.body, /<form method="post" action="\/-\/translate\/unit\/\d+\/suggest" id="editor-form"/);
  assert.match(page.body, />Suggest<\/button>/);

  const forged = await webPost(ctx.app, `/-/translate/unit/${apple.id}/save`, carol, { target: 'Hacked' });
  assert.equal(forged.statusCode, 403);
  assert.match(forged.headers['content-type'] as string, /text\/html/);
  assert.deepEqual(await targetOf(ctx, apple.id), ['']);

  for (const text of ['Jablíčko', 'Jabko']) {
    const res = await webPost(ctx.app, `/-/translate/unit/${apple.id}/suggest`, carol, { target: text });
    assert.equal(res.statusCode, 303);
    // the page (its data cached for the tables' versions) shows each suggestion at once
    const seen = await webGet(ctx.app, pathOf(apple.web_url), root);
    assert.match(seen.body, new RegExp(`>${text}<`));
  }
  const dup = await webPost(ctx.app, `/-/translate/unit/${apple.id}/suggest`, carol, { target: 'Jabko' });
  assert.equal(dup.statusCode, 422);
  assert.match(dup.body, /already suggested/);
  const list = await getJson(ctx, `/api/units/${apple.id}/suggestions/`);
  assert.deepEqual(
    list.map((s: { target: string }) => forms(s.target)),
    [['Jablíčko'], ['Jabko']],
  );
  // carol may delete her own, not accept
  const carolView = await webGet(ctx.app, pathOf(apple.web_url), carol);
  assert.doesNotMatch(carolView.body, />Accept</);
  assert.match(carolView.body, />Delete</);
  const notAllowed = await webPost(ctx.app, `/-/translate/suggestion/${list[0].id}/accept`, carol, {});
  assert.equal(notAllowed.statusCode, 403);

  const rootView = await webGet(ctx.app, pathOf(apple.web_url), root);
  assert.match(rootView.body, />Jablíčko</);
  assert.match(rootView.body, new RegExp(`action="/-/translate/suggestion/${list[0].id}/accept"`));
  const accepted = await webPost(ctx.app, `/-/translate/suggestion/${list[0].id}/accept`, root, {});
  assert.equal(accepted.statusCode, 303);
  assert.equal(accepted.headers.location, pathOf(apple.web_url));
  assert.deepEqual(await targetOf(ctx, apple.id), ['Jablíčko']);
  const deleted = await webPost(ctx.app, `/-/translate/suggestion/${list[1].id}/delete`, root, {});
  assert.equal(deleted.statusCode, 303);
  assert.deepEqual(await getJson(ctx, `/api/units/${apple.id}/suggestions/`), []);
  assert.equal((await webPost(ctx.app, `/-/translate/suggestion/${list[1].id}/delete`, root, {})).statusCode, 404);

  const commented = await webPost(ctx.app, `/-/translate/unit/${apple.id}/comment`, carol, { comment: 'Is this the fruit?', scope: 'translation' });
  assert.equal(commented.statusCode, 303);
  const comments = await getJson(ctx, `/api/units/${apple.id}/comments/`);
  assert.deepEqual(
    comments.map((c: { comment: string; scope: string }) => [c.comment, c.scope]),
    [['Is this the fruit?', 'translation']],
  );
  const withComment = await webGet(ctx.app, pathOf(apple.web_url), root);
  assert.match(withComment.body, /<p class="editor-pre mb-1">Is this the fruit\?<\/p>/);
  assert.match(withComment.body, /Suggestion accepted/);
  const blank = await webPost(ctx.app, `/-/translate/unit/${apple.id}/comment`, carol, { comment: '  ' });
  assert.equal(blank.statusCode, 303);
  assert.equal((await getJson(ctx, `/api/units/${apple.id}/comments/`)).length, 1);
});

test('bad input changes nothing: missing CSRF 422, bad ids 404, the anonymous to sign-in, an invisible project 404', async (t) => {
  const { ctx, root } = await setup(t);
  const apple = await unitBySource(ctx, 'Apple');
  const noToken = await ctx.app.inject({
    method: 'POST',
    url: `/-/translate/unit/${apple.id}/save`,
    headers: { cookie: root.cookie },
    payload: { target: 'X' },
  });
  assert.equal(noToken.statusCode, 422);
  assert.match(noToken.body, /authenticity token/);
  for (const id of ['abc', '0', '99999999', '99999999999999999999']) {
    const res = await webPost(ctx.app, `/-/translate/unit/${id}/save`, root, { target: 'X' });
    assert.equal(res.statusCode, 404, id);
    assert.equal((await webPost(ctx.app, `/-/translate/suggestion/${id}/accept`, root, {})).statusCode, 404, id);
  }
  const anon = await ctx.app.inject({ method: 'POST', url: `/-/translate/unit/${apple.id}/save`, payload: { target: 'X' } });
  assert.equal(anon.statusCode, 303);
  assert.equal(anon.headers.location, '/users/sign_in');
  assert.deepEqual(await targetOf(ctx, apple.id), ['']);
  assert.equal((await changes(ctx, apple.id)).length, 0);

  const patched = await ctx.app.inject({ method: 'PATCH', url: '/api/projects/hello/', headers: AS_ROOT, payload: { access_control: 100 } });
  assert.equal(patched.statusCode, 200, patched.body);
  const stranger = await webSignIn(ctx.app, (await ctx.seed.user({ username: 'dave' })).username);
  for (const s of [null, stranger] as (WebSession | null)[]) {
    assert.equal((await webGet(ctx.app, pathOf(apple.web_url), s)).statusCode, 404);
  }
  assert.equal((await webPost(ctx.app, `/-/translate/unit/${apple.id}/save`, stranger, { target: 'X' })).statusCode, 404);
  assert.equal((await webPost(ctx.app, `/-/translate/unit/${apple.id}/suggest`, stranger, { target: 'X' })).statusCode, 404);
  assert.equal((await webGet(ctx.app, pathOf(apple.web_url), root)).statusCode, 200);
});

test('the editor page is light: HTML + CSS + JS under 150 KB compressed', async (t) => {
  const { ctx, root } = await setup(t);
  const page = await webGet(ctx.app, `${EDITOR}?offset=4`, root);
  assert.equal(page.statusCode, 200);
  const a = assets();
  const total = zlib.gzipSync(page.body).length + a.css.br.length + a.js.br.length;
  assert.ok(total < 150 * 1024, `${total} bytes`);
  assert.match(page.body, new RegExp(`src="/-/assets/${a.js.name}"`));
  assert.match(a.js.body.toString(), /data-editor-next/);
});
