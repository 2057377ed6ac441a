// The web interface's plumbing: the HTML 404 page, assets with immutable caching, the session from the
// sign-in form, the CSRF check of page forms, and the namespace dispatcher's 404 for hidden projects.
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { webGet, webSignIn } from '../helpers/web.ts';

test('an unknown page is the HTML 404 page with the layout, for the anonymous and the signed in', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const anon = await webGet(app, '/no/such/thing');
  assert.equal(anon.statusCode, 404);
  assert.equal(anon.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(anon.headers['cache-control'], 'max-age=0, private, must-revalidate');
  assert.match(String(anon.headers['content-security-policy']), /script-src 'self'/);
  assert.match(anon.body, /^<!DOCTYPE html>\n<html lang="en"/);
  assert.match(anon.body, /<main id="main-content" tabindex="-1">/);
  assert.match(anon.body, /<h1 class="blankslate-heading">Page not found<\/h1>/);
  assert.doesNotMatch(anon.body, /csrf-token/);
  assert.match(anon.body, /Sign in<\/a>/);

  const user = await seed.user({ username: 'alice' });
  const s = await webSignIn(app, user.username);
  assert.match(s.csrf, /^[A-Za-z0-9_-]{43}$/);
  const signed = await webGet(app, '/no/such/thing', s);
  assert.equal(signed.statusCode, 404);
  assert.match(signed.body, new RegExp(`<meta name="csrf-token" content="${s.csrf}">`));
  assert.match(signed.body, /<a class="Header-link mr-3" href="\/alice">alice<\/a>/);
  // API paths keep the API's own 404
  const api = await webGet(app, '/api/v4/no_such_thing');
  assert.deepEqual(api.json(), { error: '404 Not Found' });
});

test('assets: content-hashed names, a year of immutable caching, brotli and gzip, 304 on the etag', async (t) => {
  const { app } = await buildTestApp(t);
  const page = await webGet(app, '/nothing-here');
  const css = /href="(\/-\/assets\/app-[0-9a-f]{16}\.css)"/.exec(page.body)?.[1];
  const js = /src="(\/-\/assets\/app-[0-9a-f]{16}\.js)"/.exec(page.body)?.[1];
  assert.ok(css && js, 'the layout links both assets');
  const br = await app.inject({ method: 'GET', url: css!, headers: { 'accept-encoding': 'gzip, deflate, br' } });
  assert.equal(br.statusCode, 200);
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(br.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.equal(br.headers['content-type'], 'text/css; charset=utf-8');
  const text = zlib.brotliDecompressSync(br.rawPayload).toString();
  assert.match(text, /\.Header\{|\.Header \{/);
  const gz = await app.inject({ method: 'GET', url: js!, headers: { 'accept-encoding': 'gzip' } });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.match(zlib.gunzipSync(gz.rawPayload).toString(), /htmx/);
  const again = await app.inject({ method: 'GET', url: js!, headers: { 'if-none-match': String(gz.headers.etag) } });
  assert.equal(again.statusCode, 304);
  const missing = await webGet(app, '/-/assets/app-0000000000000000.css');
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.headers['content-type'], 'text/html; charset=utf-8');
});

test('a private project is the 404 page for an outsider, exactly like a project that does not exist', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const owner = await seed.user();
  const outsider = await seed.user();
  const p = await seed.project({ owner, visibility: 'private' });
  const full = `${owner.username}/${p.path}`;
  const s = await webSignIn(app, outsider.username);
  const hidden = await webGet(app, `/${full}`, s);
  const none = await webGet(app, `/${owner.username}/does-not-exist`, s);
  assert.equal(hidden.statusCode, 404);
  assert.equal(none.statusCode, 404);
  assert.equal(hidden.body.replace(/csrf-token" content="[^"]+"/, ''), none.body.replace(/csrf-token" content="[^"]+"/, ''));
});
