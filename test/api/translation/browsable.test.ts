// Translation API: DRF's browsable API (format=api, Accept: text/html), content negotiation (format),
// OPTIONS with SimpleMetadata, and view names/descriptions declared by routes or derived from URLs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { buildTestApp, EXTERNAL_URL, ROOT_TOKEN } from '../../helpers/build-app.ts';
import { loadConfig } from '../../../src/config.ts';
import { createContainer } from '../../../src/container.ts';
import { buildApp } from '../../../src/app.ts';
import { ALLOW_DETAIL_RW, ALLOW_LIST_RW, drfHeaders, drfView, replaceQueryParam } from '../../../src/http/translation/drf.ts';
import { prettyJsonHtml, renderPage } from '../../../src/http/translation/browsable.ts';
import { derivedView } from '../../../src/http/translation/metadata.ts';

const TOKEN = { authorization: `Token ${ROOT_TOKEN}` };
const HOST = { host: 'weblate.test' };
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const RENDERS = ['application/json', 'text/html'];
const PARSES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

const unescape = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
/** Every href of the page, entity-decoded. */
const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => unescape(m[1]));
/** The JSON text shown in the response-info block (tags removed, entities decoded). */
function shownJson(html: string): string {
  const m = /<div class="response-info"><pre><span class="meta nocode">[\s\S]*?\n\n<\/span>([\s\S]*?)<\/pre><\/div>/.exec(html);
  assert.ok(m, 'response-info block');
  return unescape(m[1].replace(/<a href="[^"]*" rel="nofollow">|<\/a>/g, ''));
}
const tag = (html: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(html)?.[1];
const breadcrumbs = (html: string) =>
  /<ul class="breadcrumb">\n([\s\S]*?)\n\s*<\/ul>/
    .exec(html)?.[1]
    .split('\n')
    .map((l) => l.trim());

test('GET /api/?format=api: DRF page with title, breadcrumbs, request line, headers block and linked JSON', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/?format=api', headers: HOST });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(res.headers.allow, 'GET, HEAD, OPTIONS');
  assert.equal(res.headers.vary, 'Accept');
  const html = res.body;
  assert.ok(html.startsWith('<!DOCTYPE html>\n<html>\n'));
  assert.equal(tag(html, 'title'), 'Api Root – Django REST framework');
  assert.equal(tag(html, 'h1'), 'Api Root');
  assert.deepEqual(breadcrumbs(html), ['<li class="active"><a href="/api/?format=api">Api Root</a></li>']);
  assert.ok(html.includes('<div class="description"><p>The default basic root view for DefaultRouter</p></div>'));
  assert.ok(html.includes('<pre><b>GET</b> /api/?format=api</pre>'));
  // the lists of the root (more as routes are added), each a link carrying format=api
  const root = (await app.inject({ method: 'GET', url: '/api/?format=api', headers: { ...HOST, accept: 'application/json' } })).body;
  assert.equal(root, (await app.inject({ method: 'GET', url: '/api/?format=api', headers: HOST })).body, 'Accept does not override format=api');
  const lists = (await app.inject({ method: 'GET', url: '/api/?format=json', headers: HOST })).json() as Record<string, string>;
  assert.equal(lists.languages, 'http://weblate.test/api/languages/?format=json');
  const links = Object.values(lists)
    .map((v) => v.replace('format=json', 'format=api'))
    .map((u) => `<a href="${u}" rel="nofollow">${u}</a>`);
  assert.ok(
    html.includes(
      '<div class="response-info"><pre><span class="meta nocode"><b>HTTP 200 OK</b>\n' +
        '<b>Allow:</b> <span class="lit">GET, HEAD, OPTIONS</span>\n' +
        '<b>Content-Type:</b> <span class="lit">application/json</span>\n' +
        '<b>Vary:</b> <span class="lit">Accept</span>\n' +
        '\n' +
        '</span>{\n' +
        Object.keys(lists)
          .map((k, i) => `    "${k}": "${links[i]}"`)
          .join(',\n') +
        '\n}</pre></div>',
    ),
  );
  assert.ok(
    html.includes(
      '    "languages": "<a href="http://weblate.test/api/languages/?format=api" rel="nofollow">http://weblate.test/api/languages/?format=api</a>"',
    ),
  );
  // format buttons: the same request in json and api; no pagination on a non-list
  assert.ok(
    html.includes(
      '<a class="btn format-option" href="/api/?format=json" rel="nofollow">json</a><a class="btn format-option" href="/api/?format=api" rel="nofollow">api</a>',
    ),
  );
  assert.ok(!html.includes('class="pagination"'));
  // self-contained: inline CSS, no scripts, no external assets
  assert.ok(html.includes('<style>'));
  assert.doesNotMatch(html, /<script|<link |src="/);
  assert.deepEqual(hrefs(html), [
    'http://hearth.test/',
    '/api/?format=api',
    '/api/?format=api',
    '/api/?format=json',
    '/api/?format=api',
    ...Object.values(lists).map((u) => u.replace('format=json', 'format=api')),
  ]);
});

test('GET /api/languages/?format=api: the list page with pagination controls, every API link keeps format=api', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/languages/?format=api&page_size=2&page=2', headers: { ...HOST, ...TOKEN } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
  const html = res.body;
  assert.equal(tag(html, 'title'), 'Language List – Django REST framework');
  assert.equal(tag(html, 'h1'), 'Language List');
  assert.deepEqual(breadcrumbs(html), [
    '<li><a href="/api/?format=api">Api Root</a></li>',
    '<li class="active"><a href="/api/languages/?format=api">Language List</a></li>',
  ]);
  assert.ok(html.includes('<div class="description"><p>Languages API.</p></div>'));
  assert.ok(html.includes('<pre><b>GET</b> /api/languages/?format=api&amp;page_size=2&amp;page=2</pre>'));
  assert.ok(
    html.includes(
      '<b>HTTP 200 OK</b>\n<b>Allow:</b> <span class="lit">GET, POST, HEAD, OPTIONS</span>\n<b>Content-Type:</b> <span class="lit">application/json</span>\n<b>Vary:</b> <span class="lit">Accept</span>\n\n</span>{\n    "count": 799,\n',
    ),
  );
  assert.ok(
    html.includes(
      '<nav class="pagination-nav"><ul class="pagination">' +
        '<li><a href="http://weblate.test/api/languages/?format=api&amp;page_size=2" rel="prev">&laquo; Previous</a></li>' +
        '<li><a href="http://weblate.test/api/languages/?format=api&amp;page=3&amp;page_size=2" rel="next">Next &raquo;</a></li></ul></nav>',
    ),
  );
  // format buttons replace format and keep the other parameters, sorted (DRF replace_query_param)
  assert.ok(html.includes('href="/api/languages/?format=json&amp;page=2&amp;page_size=2" rel="nofollow">json</a>'));

  // the JSON shown is the body indented by 4 spaces (Python json.dumps(indent=4)), with next/previous carrying format=api
  const shown = shownJson(html);
  const data = JSON.parse(shown);
  assert.equal(shown, JSON.stringify(data, null, 4));
  assert.equal(data.next, 'http://weblate.test/api/languages/?format=api&page=3&page_size=2');
  assert.equal(data.previous, 'http://weblate.test/api/languages/?format=api&page_size=2');
  const json = (await app.inject({ method: 'GET', url: '/api/languages/?page_size=2&page=2&format=json', headers: { ...HOST, ...TOKEN } })).json();
  assert.deepEqual(data, JSON.parse(JSON.stringify(json).replace(/format=json/g, 'format=api')));
  assert.ok(
    html.includes('"url": "<a href="http://weblate.test/api/languages/abr/?format=api" rel="nofollow">http://weblate.test/api/languages/abr/?format=api</a>"'),
  );

  // every link into the API carries format=api (the json button excepted); the others are web pages
  const all = hrefs(html);
  const api = all.filter((h) => new URL(h, 'http://weblate.test').pathname.startsWith('/api/'));
  const other = all.filter((h) => !api.includes(h));
  assert.equal(api.length, 3 + 2 + 2 + 2 + 2 * 2); // crumbs and GET, json/api buttons, pagination, next/previous, url and statistics_url ×2
  for (const h of api) if (!h.includes('format=json')) assert.match(h, /[?&]format=api(&|$)/, h);
  assert.deepEqual(
    api.filter((h) => h.includes('format=json')),
    ['/api/languages/?format=json&page=2&page_size=2'],
  );
  assert.deepEqual(other, ['http://hearth.test/', 'http://hearth.test/languages/abr/', 'http://hearth.test/languages/ace/']);

  // the last page: previous only, next disabled
  const last = (await app.inject({ method: 'GET', url: '/api/languages/?format=api&page=last&page_size=500', headers: TOKEN })).body;
  assert.ok(
    last.includes(
      '<li><a href="http://localhost:80/api/languages/?format=api&amp;page_size=500" rel="prev">&laquo; Previous</a></li><li class="disabled"><span>Next &raquo;</span></li>',
    ),
  );
  // a single page has no controls (DRF display_page_controls)
  const anon = (await app.inject({ method: 'GET', url: '/api/languages/?format=api' })).body;
  assert.ok(anon.includes('</span>{\n    "count": 0,\n    "next": null,\n    "previous": null,\n    "results": []\n}</pre>'));
  assert.ok(!anon.includes('class="pagination"'));
});

test('GET /api/languages/cs/?format=api: the instance page; data is HTML-escaped', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: '/api/languages/cs/?format=api', headers: { ...HOST, ...TOKEN } });
  assert.equal(res.statusCode, 200);
  const html = res.body;
  assert.equal(tag(html, 'title'), 'Language Instance – Django REST framework');
  assert.equal(tag(html, 'h1'), 'Language Instance');
  assert.deepEqual(breadcrumbs(html), [
    '<li><a href="/api/?format=api">Api Root</a></li>',
    '<li><a href="/api/languages/?format=api">Language List</a></li>',
    '<li class="active"><a href="/api/languages/cs/?format=api">Language Instance</a></li>',
  ]);
  assert.ok(html.includes('<pre><b>GET</b> /api/languages/cs/?format=api</pre>'));
  assert.ok(
    html.includes(
      '<b>HTTP 200 OK</b>\n<b>Allow:</b> <span class="lit">GET, PUT, PATCH, DELETE, HEAD, OPTIONS</span>\n<b>Content-Type:</b> <span class="lit">application/json</span>\n<b>Vary:</b> <span class="lit">Accept</span>\n\n</span>{\n    "id": ',
    ),
  );
  assert.ok(html.includes('        "formula": "(n==1) ? 0 : (n&gt;=2 &amp;&amp; n&lt;=4) ? 1 : 2",\n'));
  assert.ok(html.includes('    "web_url": "<a href="http://hearth.test/languages/cs/" rel="nofollow">http://hearth.test/languages/cs/</a>",\n'));
  assert.ok(
    html.includes(
      '    "statistics_url": "<a href="http://weblate.test/api/languages/cs/statistics/?format=api" rel="nofollow">http://weblate.test/api/languages/cs/statistics/?format=api</a>"\n}</pre>',
    ),
  );
  assert.ok(html.includes('    "aliases": [\n        "ces",\n'));
  for (const h of hrefs(html))
    if (new URL(h, 'http://weblate.test').pathname.startsWith('/api/') && !h.includes('format=json')) assert.match(h, /[?&]format=api(&|$)/, h);

  // markup in data, in the view's URL and in the query is shown as text
  const json = { ...TOKEN, 'content-type': 'application/json' };
  const created = await app.inject({
    method: 'POST',
    url: '/api/languages/',
    headers: json,
    payload: { code: 'xss', name: '<script>alert("x")</script> & <b>', plural: { number: 2, formula: 'n != 1' } },
  });
  assert.equal(created.statusCode, 201, created.body);
  const xss = (await app.inject({ method: 'GET', url: '/api/languages/xss/?format=api&q=%3Cb%3E', headers: TOKEN })).body;
  assert.ok(xss.includes('    "name": "&lt;script&gt;alert(\\"x\\")&lt;/script&gt; &amp; &lt;b&gt;",\n'));
  assert.doesNotMatch(xss, /<script|<b>[^<]*<\/script/);
  assert.ok(xss.includes('<pre><b>GET</b> /api/languages/xss/?format=api&amp;q=%3Cb%3E</pre>'));
  // a request target with raw markup (clients may send it unencoded)
  const raw = renderPage({
    name: 'A <b>',
    description: '',
    method: 'GET',
    fullPath: '/api/x/?q=<i>"',
    status: 200,
    headers: [],
    body: '',
    breadcrumbs: [],
    formats: [],
    pagination: null,
    siteUrl: 'http://hearth.test',
  });
  assert.ok(raw.includes('<title>A &lt;b&gt; – Django REST framework</title>'));
  assert.ok(raw.includes('<pre><b>GET</b> /api/x/?q=&lt;i&gt;"</pre>'));
  assert.ok(raw.includes('href="/api/x/?q=&lt;i&gt;&quot;" rel="nofollow" title="Make a GET request on the A &lt;b&gt; resource">GET</a>'));
  assert.doesNotMatch(raw, /<i>|A <b>/);
});

test('errors render as DRF pages too: 404, 401 with WWW-Authenticate, 405 from the view', async (t) => {
  const { app } = await buildTestApp(t);
  const missing = await app.inject({ method: 'GET', url: '/api/languages/xx-nope/?format=api', headers: { ...HOST, ...TOKEN } });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(missing.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
  assert.equal(tag(missing.body, 'title'), 'Language Instance – Django REST framework');
  assert.equal(tag(missing.body, 'h1'), 'Language Instance');
  assert.ok(
    missing.body.includes(
      '<div class="response-info"><pre><span class="meta nocode"><b>HTTP 404 Not Found</b>\n' +
        '<b>Allow:</b> <span class="lit">GET, PUT, PATCH, DELETE, HEAD, OPTIONS</span>\n' +
        '<b>Content-Type:</b> <span class="lit">application/json</span>\n' +
        '<b>Vary:</b> <span class="lit">Accept</span>\n\n' +
        '</span>{\n    "detail": "Not found."\n}</pre></div>',
    ),
  );
  const page = await app.inject({ method: 'GET', url: '/api/languages/?format=api&page=99', headers: TOKEN });
  assert.equal(page.statusCode, 404);
  assert.ok(page.body.includes('</span>{\n    "detail": "Invalid page."\n}</pre>'));

  const bad = await app.inject({ method: 'GET', url: '/api/languages/?format=api', headers: { authorization: 'Token nope' } });
  const badJson = await app.inject({ method: 'GET', url: '/api/languages/', headers: { authorization: 'Token nope' } });
  assert.equal(bad.statusCode, 401);
  assert.equal(bad.headers['content-type'], 'text/html; charset=utf-8');
  assert.ok(
    bad.body.includes(
      '<b>HTTP 401 Unauthorized</b>\n<b>Allow:</b> <span class="lit">GET, POST, HEAD, OPTIONS</span>\n<b>Content-Type:</b> <span class="lit">application/json</span>\n' +
        '<b>Vary:</b> <span class="lit">Accept</span>\n<b>WWW-Authenticate:</b> <span class="lit">Token</span>\n\n</span>{\n    "detail": ' +
        JSON.stringify(badJson.json().detail) +
        '\n}</pre>',
    ),
  );
  const created = await app.inject({
    method: 'POST',
    url: '/api/languages/?format=api',
    headers: { ...HOST, ...TOKEN, 'content-type': 'application/json' },
    payload: { code: 'zz_new', name: 'Z', plural: { number: 1, formula: '0' } },
  });
  assert.equal(created.statusCode, 201);
  assert.ok(created.body.includes('<pre><b>POST</b> /api/languages/?format=api</pre>'));
  assert.ok(
    created.body.includes(
      '<b>HTTP 201 Created</b>\n<b>Allow:</b> <span class="lit">GET, POST, HEAD, OPTIONS</span>\n<b>Content-Type:</b> <span class="lit">application/json</span>\n<b>Location:</b> <span class="lit">http://weblate.test/api/languages/zz_new/?format=api</span>\n<b>Vary:</b> <span class="lit">Accept</span>\n\n',
    ),
  );
  const deleted = await app.inject({ method: 'DELETE', url: '/api/languages/zz_new/?format=api', headers: TOKEN });
  assert.equal(deleted.statusCode, 204);
  assert.equal(deleted.body, '');

  // no route: the catch-all answers, not a DRF view
  const none = await app.inject({ method: 'GET', url: '/api/nothing-here/?format=api' });
  assert.equal(none.statusCode, 404);
  assert.deepEqual(none.json(), { detail: 'Not found.' });
  // a method the path does not serve: the view answers it (DRF http_method_not_allowed), after authentication
  const method = await app.inject({ method: 'POST', url: '/api/languages/cs/?format=api', headers: TOKEN });
  assert.equal(method.statusCode, 405);
  assert.equal(method.headers.allow, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS');
  assert.ok(method.body.includes('<b>HTTP 405 Method Not Allowed</b>') && method.body.includes('"detail": "Method \\"POST\\" not allowed."'));
});

test('content negotiation: Accept text/html, format=json wins, unknown format is 404 before authentication', async (t) => {
  const { app } = await buildTestApp(t);
  const browser = await app.inject({ method: 'GET', url: '/api/', headers: { ...HOST, accept: BROWSER_ACCEPT } });
  assert.equal(browser.statusCode, 200);
  assert.equal(browser.headers['content-type'], 'text/html; charset=utf-8');
  assert.ok(browser.body.includes('<pre><b>GET</b> /api/</pre>'));
  // without ?format the links stay plain (the browser keeps asking for HTML)
  assert.ok(browser.body.includes('"languages": "<a href="http://weblate.test/api/languages/" rel="nofollow">http://weblate.test/api/languages/</a>"'));
  assert.deepEqual(breadcrumbs(browser.body), ['<li class="active"><a href="/api/">Api Root</a></li>']);

  const cases: [Record<string, string>, string, string][] = [
    [{ accept: 'text/html' }, '/api/', 'text/html; charset=utf-8'],
    [{ accept: 'text/*' }, '/api/', 'text/html; charset=utf-8'],
    [{ accept: 'text/html' }, '/api/?format=json', 'application/json'],
    [{ accept: 'application/json' }, '/api/', 'application/json'],
    [{ accept: 'application/json; indent=4' }, '/api/', 'application/json'],
    [{ accept: '*/*' }, '/api/', 'application/json'],
    [{ accept: 'application/json, text/html' }, '/api/', 'application/json'], // same precedence: renderer order
    [{ accept: 'text/html, application/json;q=0.1' }, '/api/', 'application/json'], // DRF ignores q
    [{ accept: 'text/html;level=1, application/json' }, '/api/', 'text/html; charset=utf-8'], // more specific first
    [{}, '/api/', 'application/json'],
    [{}, '/api/?format=api', 'text/html; charset=utf-8'],
    [{ accept: 'application/json' }, '/api/?format=api', 'text/html; charset=utf-8'],
    [{}, '/api/?format=', 'application/json'],
  ];
  for (const [headers, url, type] of cases) {
    const res = await app.inject({ method: 'GET', url, headers });
    assert.equal(res.statusCode, 200, `${JSON.stringify(headers)} ${url}`);
    assert.equal(res.headers['content-type'], type, `${JSON.stringify(headers)} ${url}`);
  }
  const json = await app.inject({ method: 'GET', url: '/api/?format=json', headers: HOST });
  assert.equal(json.headers['content-type'], 'application/json');
  assert.ok(json.body.startsWith('{"') && json.body.includes('"languages":"http://weblate.test/api/languages/?format=json"'), json.body);
  for (const url of Object.values(json.json() as Record<string, string>)) assert.match(url, /^http:\/\/weblate\.test\/api\/[a-z-]+\/\?format=json$/);

  for (const url of ['/api/?format=xml', '/api/languages/?format=csv', '/api/languages/cs/?format=API', '/api/?format=api&format=yaml']) {
    const res = await app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
    assert.equal(res.statusCode, 404, url);
    assert.equal(res.headers['content-type'], 'application/json', url);
    assert.deepEqual(res.json(), { detail: 'Not found.' }, url);
  }
  // negotiation comes before authentication (a bad token would be 401) and keeps the view's headers
  const early = await app.inject({ method: 'GET', url: '/api/languages/?format=xml', headers: { authorization: 'Token nope' } });
  assert.equal(early.statusCode, 404);
  assert.equal(early.headers.allow, 'GET, POST, HEAD, OPTIONS');
  assert.equal(early.headers.vary, 'Accept');
  assert.deepEqual(early.json(), { detail: 'Not found.' });
  const write = await app.inject({ method: 'POST', url: '/api/languages/?format=xml', headers: { 'content-type': 'application/json' }, payload: '{bad json' });
  assert.equal(write.statusCode, 404);

  // HEAD (exposeHeadRoutes) negotiates the same way and sends no body
  const get = await app.inject({ method: 'GET', url: '/api/languages/?format=api', headers: TOKEN });
  const head = await app.inject({ method: 'HEAD', url: '/api/languages/?format=api', headers: TOKEN });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.body.replace('<pre><b>GET</b>', '<pre><b>HEAD</b>'))));
  assert.equal(head.headers.allow, 'GET, POST, HEAD, OPTIONS');
  assert.equal(head.body, '');
  const headJson = await app.inject({ method: 'HEAD', url: '/api/languages/', headers: TOKEN });
  assert.equal(headJson.headers['content-type'], 'application/json');
  assert.equal(headJson.body, '');
  assert.equal((await app.inject({ method: 'HEAD', url: '/api/?format=xml' })).statusCode, 404);

  // the platform API knows nothing of it
  const platform = await app.inject({ method: 'GET', url: '/api/v4/version?format=xml', headers: { 'private-token': ROOT_TOKEN, accept: 'text/html' } });
  assert.equal(platform.statusCode, 200);
  assert.equal(platform.headers['content-type'], 'application/json');
});

test('OPTIONS: SimpleMetadata on every translation path, with the path Allow header', async (t) => {
  const { app, seed } = await buildTestApp(t);
  const meta = (name: string, description: string) => ({ name, description, renders: RENDERS, parses: PARSES });
  const cases: [string, string, ReturnType<typeof meta>][] = [
    ['/api/', 'GET, HEAD, OPTIONS', meta('Api Root', 'The default basic root view for DefaultRouter')],
    ['/api/languages/', ALLOW_LIST_RW, meta('Language List', 'Languages API.')],
    ['/api/languages', ALLOW_LIST_RW, meta('Language List', 'Languages API.')],
    ['/api/languages/cs/', ALLOW_DETAIL_RW, meta('Language Instance', 'Languages API.')],
    ['/api/languages/no-such-language/', ALLOW_DETAIL_RW, meta('Language Instance', 'Languages API.')],
  ];
  const { token } = await seed.token(await seed.user());
  for (const headers of [{}, TOKEN, { authorization: `Token ${token}` }]) {
    for (const [url, allow, body] of cases) {
      const res = await app.inject({ method: 'OPTIONS', url, headers });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-type'], 'application/json', url);
      assert.equal(res.headers.allow, allow, url);
      assert.equal(res.headers.vary, 'Accept', url);
      // languages routes declare no write forms: no actions, even for a signed-in caller
      assert.equal(res.body, JSON.stringify(body), url);
    }
  }
  const bad = await app.inject({ method: 'OPTIONS', url: '/api/languages/', headers: { authorization: 'Token nope' } });
  assert.equal(bad.statusCode, 401);
  assert.equal(bad.headers['www-authenticate'], 'Token');
  assert.deepEqual(bad.json(), (await app.inject({ method: 'GET', url: '/api/languages/', headers: { authorization: 'Token nope' } })).json());
  const unknown = await app.inject({ method: 'OPTIONS', url: '/api/languages/?format=xml' });
  assert.equal(unknown.statusCode, 404);
  const html = await app.inject({ method: 'OPTIONS', url: '/api/languages/?format=api', headers: HOST });
  assert.equal(html.statusCode, 200);
  assert.equal(html.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(tag(html.body, 'h1'), 'Language List');
  assert.ok(html.body.includes('<pre><b>OPTIONS</b> /api/languages/?format=api</pre>'));
  assert.ok(
    html.body.includes(
      '</span>{\n    "name": "Language List",\n    "description": "Languages API.",\n    "renders": [\n        "application/json",\n        "text/html"\n    ],\n',
    ),
  );
  // the platform API still answers OPTIONS as before
  const platform = await app.inject({ method: 'OPTIONS', url: '/api/v4/projects' });
  assert.notEqual(platform.statusCode, 200);
});

/** The real app with extra routes (buildApp's `extend`), on a temporary SQLite file. */
async function appWith(t: { after(fn: () => unknown): void }, extend: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-test-'));
  const config = loadConfig(
    { DATA_DIR: dataDir, EXTERNAL_URL, LOG_LEVEL: 'silent', HEARTH_ROOT_PASSWORD: 'root-password-1', HEARTH_ROOT_TOKEN: ROOT_TOKEN },
    { databaseUrl: null },
  );
  const c = await createContainer(config, { log: pino({ level: 'silent' }) });
  const app = await buildApp(c, extend);
  t.after(async () => {
    await app.close();
    await c.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return app;
}

test('routes declare view name, description and OPTIONS actions; undeclared routes get DRF-derived names', async (t) => {
  const POST = {
    // declared out of order: SimpleMetadata's order is restored
    name: { label: 'Widget name', type: 'string', required: true, read_only: false, max_length: 60, help_text: 'Display name' },
    slug: { type: 'slug', required: true, read_only: false, label: 'URL slug', max_length: 60 },
    url: { type: 'field', required: false, read_only: true, label: 'Url' },
  };
  const PUT = { name: POST.name };
  const CONFIG = { api: 'translation' as const, auth: 'optional' as const };
  const body = (req: FastifyRequest) => ({ url: `http://${req.host}/api/widgets/1/`, note: '<em>' });
  const app = await appWith(t, (app) => {
    app.get(
      '/api/widgets/',
      { config: { ...CONFIG, view: drfView('Widget List', 'Widgets API.\n\nSecond <paragraph>.') }, onRequest: drfHeaders(ALLOW_LIST_RW) },
      async (req) => ({ count: 0, next: null, previous: null, results: [body(req)] }),
    );
    app.post('/api/widgets/', { config: { ...CONFIG, view: { actions: { POST } } }, onRequest: drfHeaders(ALLOW_LIST_RW) }, async (_req, reply) =>
      reply.code(201).send({}),
    );
    app.get(
      '/api/widgets/:id/',
      { config: { ...CONFIG, view: drfView('Widget Instance', 'Widgets API.', { PUT, POST }) }, onRequest: drfHeaders('GET, PUT, HEAD, OPTIONS') },
      async (req) => body(req),
    );
    app.put('/api/widgets/:id/', { config: CONFIG, onRequest: drfHeaders('GET, PUT, HEAD, OPTIONS') }, async (req) => body(req));
    // no view, no drfHeaders: derived name, Allow from the methods
    app.get('/api/widgets/:id/machinery_settings/', { config: CONFIG }, async (_req, reply) =>
      reply.type('application/json').send('{"id_hash":12345678901234567890}'),
    );
    app.post('/api/widgets/:id/machinery_settings/', { config: CONFIG }, async () => ({}));
    // a raw download reads ?format= itself
    app.get<{ Querystring: { format?: string } }>('/api/widgets/:id/file/', { config: { ...CONFIG, raw: true } }, async (req, reply) =>
      reply.type('text/plain').send(`file as ${req.query.format ?? 'default'}`),
    );
    // a route file answering its own OPTIONS keeps it
    app.get('/api/gadgets/', { config: CONFIG }, async () => ({}));
    app.options('/api/gadgets/', { config: CONFIG }, async () => ({ own: true }));
    // registered in a plugin that loads after the OPTIONS routes were settled
    app.register(
      async (child) => {
        child.get('/late/', { config: CONFIG }, async () => ({ late: true }));
      },
      { prefix: '/api/tardy' },
    );
  });

  const options = async (url: string, headers: Record<string, string> = {}) => {
    const res = await app.inject({ method: 'OPTIONS', url, headers });
    assert.equal(res.statusCode, 200, url);
    return res;
  };
  const anonList = await options('/api/widgets/');
  assert.equal(anonList.body, JSON.stringify({ name: 'Widget List', description: 'Widgets API.\n\nSecond <paragraph>.', renders: RENDERS, parses: PARSES }));
  const list = await options('/api/widgets/', TOKEN);
  assert.equal(list.headers.allow, ALLOW_LIST_RW);
  assert.equal(
    list.body,
    JSON.stringify({
      name: 'Widget List',
      description: 'Widgets API.\n\nSecond <paragraph>.',
      renders: RENDERS,
      parses: PARSES,
      actions: {
        POST: {
          name: { type: 'string', required: true, read_only: false, label: 'Widget name', help_text: 'Display name', max_length: 60 },
          slug: { type: 'slug', required: true, read_only: false, label: 'URL slug', max_length: 60 },
          url: { type: 'field', required: false, read_only: true, label: 'Url' },
        },
      },
    }),
  );
  // PUT only: the detail path has no POST, whatever its view declares
  const detail = await options('/api/widgets/7/', TOKEN);
  assert.equal(detail.headers.allow, 'GET, PUT, HEAD, OPTIONS');
  assert.deepEqual(Object.keys(detail.json()), ['name', 'description', 'renders', 'parses', 'actions']);
  assert.deepEqual(detail.json().actions, {
    PUT: { name: { type: 'string', required: true, read_only: false, label: 'Widget name', help_text: 'Display name', max_length: 60 } },
  });
  assert.equal(detail.json().name, 'Widget Instance');
  const anonDetail = await options('/api/widgets/7/');
  assert.equal(anonDetail.json().actions, undefined);

  const action = await options('/api/widgets/7/machinery_settings/', TOKEN);
  assert.equal(action.headers.allow, 'GET, POST, HEAD, OPTIONS');
  assert.equal(action.body, JSON.stringify({ name: 'Machinery settings', description: '', renders: RENDERS, parses: PARSES }));
  assert.deepEqual((await options('/api/gadgets/')).json(), { own: true });
  assert.equal((await options('/api/tardy/late/')).json().name, 'Late');
  assert.equal((await options('/api/widgets/7/file/')).json().name, 'File');

  // the HTML page: the route's name and description (paragraphs, escaped), breadcrumbs through derived views
  const page = (await app.inject({ method: 'GET', url: '/api/widgets/?format=api', headers: HOST })).body;
  assert.equal(tag(page, 'title'), 'Widget List – Django REST framework');
  assert.ok(page.includes('<div class="description"><p>Widgets API.</p>\n<p>Second &lt;paragraph&gt;.</p></div>'));
  assert.ok(page.includes('"note": "&lt;em&gt;"'));
  const deep = (await app.inject({ method: 'GET', url: '/api/widgets/7/machinery_settings/?format=api' })).body;
  assert.equal(tag(deep, 'h1'), 'Machinery settings');
  assert.deepEqual(breadcrumbs(deep), [
    '<li><a href="/api/?format=api">Api Root</a></li>',
    '<li><a href="/api/widgets/?format=api">Widget List</a></li>',
    '<li><a href="/api/widgets/7/?format=api">Widget Instance</a></li>',
    '<li class="active"><a href="/api/widgets/7/machinery_settings/?format=api">Machinery settings</a></li>',
  ]);
  assert.ok(
    deep.includes(
      '<b>HTTP 200 OK</b>\n<b>Allow:</b> <span class="lit">GET, POST, HEAD, OPTIONS</span>\n<b>Content-Type:</b> <span class="lit">application/json</span>\n\n</span>{\n    "id_hash": 12345678901234567890\n}</pre>',
    ),
  );

  // raw downloads handle ?format= themselves, never become HTML
  for (const [url, text] of [
    ['/api/widgets/7/file/?format=po', 'file as po'],
    ['/api/widgets/7/file/?format=api', 'file as api'],
    ['/api/widgets/7/file/', 'file as default'],
  ]) {
    const res = await app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.body, text, url);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
  }
});

test('view names follow DRF get_view_name; Python-style pretty printing keeps numbers exact', () => {
  const names: [string, string, string][] = [
    ['/api/', 'Api Root', 'The default basic root view for DefaultRouter'],
    ['/api/languages/', 'Language List', 'Languages API.'],
    ['/api/languages/:code/', 'Language Instance', 'Languages API.'],
    ['/api/projects/', 'Project List', 'Translation projects API.'],
    ['/api/projects/:slug/', 'Project Instance', 'Translation projects API.'],
    ['/api/components/', 'Component List', 'Translation components API.'],
    ['/api/components/:project/:component/', 'Component Instance', 'Translation components API.'],
    ['/api/translations/', 'Translation List', 'Translation components API.'],
    ['/api/translations/:project/:component/:language/', 'Translation Instance', 'Translation components API.'],
    ['/api/units/', 'Unit List', 'Units API.'],
    ['/api/units/:id/', 'Unit Instance', 'Units API.'],
    ['/api/changes/', 'Change List', 'Changes API.'],
    ['/api/changes/:id/', 'Change Instance', 'Changes API.'],
    ['/api/projects/:slug/repository/', 'Repository', 'Translation projects API.'],
    ['/api/projects/:slug/statistics/', 'Statistics', 'Translation projects API.'],
    ['/api/projects/:slug/lock/', 'Lock', 'Translation projects API.'],
    ['/api/translations/:project/:component/:language/file/', 'File', 'Translation components API.'],
    ['/api/translations/:project/:component/:language/units/', 'Units', 'Translation components API.'],
    ['/api/components/:project/:component/changes/', 'Changes', 'Translation components API.'],
    ['/api/projects/:slug/components/', 'Components', 'Translation projects API.'],
    ['/api/components/:project/:component/translations/', 'Translations', 'Translation components API.'],
    ['/api/projects/:slug/languages/', 'Languages', 'Translation projects API.'],
    ['/api/languages/:code/statistics/', 'Statistics', 'Languages API.'],
    ['/api/categories/:id/', 'Category Instance', 'Categories API.'],
    ['/api/component-lists/', 'Component List List', 'Component lists API.'],
  ];
  for (const [url, name, description] of names) assert.deepEqual(derivedView(url), { name, description }, url);

  assert.equal(
    prettyJsonHtml('{"a":[],"b":{},"c":[1,{"d":null}],"e":12345678901234567890,"f":-1.5e+3,"g":true}'),
    '{\n    "a": [],\n    "b": {},\n    "c": [\n        1,\n        {\n            "d": null\n        }\n    ],\n    "e": 12345678901234567890,\n    "f": -1.5e+3,\n    "g": true\n}',
  );
  assert.equal(prettyJsonHtml('"\u2028 \\"<a>\\" https://x.test/"'), '"\\u2028 \\"&lt;a&gt;\\" https://x.test/"');
  assert.equal(
    prettyJsonHtml('["https://x.test/?a=1&b=2", "ftp://x.test/", "http://x.test/ y", "http://x.test/<b>"]'),
    '[\n    "<a href="https://x.test/?a=1&amp;b=2" rel="nofollow">https://x.test/?a=1&amp;b=2</a>",\n    "ftp://x.test/",\n    "http://x.test/ y",\n    "http://x.test/&lt;b&gt;"\n]',
  );
  assert.equal(prettyJsonHtml('not <json>'), 'not &lt;json&gt;');
  assert.equal(prettyJsonHtml('{"a":1'), '{"a":1');

  assert.equal(
    replaceQueryParam('/api/units/?q=state:>=translated&page=2&format=api', 'format', 'json'),
    '/api/units/?format=json&page=2&q=state%3A%3E%3Dtranslated',
  );
  assert.equal(replaceQueryParam('/api/units/?page=2&a=x y', 'page', null), '/api/units/?a=x+y');
  assert.equal(replaceQueryParam('/api/', 'format', 'api'), '/api/?format=api');
});
