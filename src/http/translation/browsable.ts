// Django REST framework's browsable API and content negotiation for the translation API (reference
// §9, §5.1): `?format=api`, or an Accept header that DRF's negotiation resolves to text/html, turns the
// JSON a route produced (errors included) into DRF's HTML page; `?format=` naming no renderer is a 404
// before authentication; OPTIONS answers on every path (metadata.ts). Routes with `config.raw` (file
// downloads, which read `?format=` as an exporter) are left alone.
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, onSendHookHandler, preParsingHookHandler } from 'fastify';
import { Errors } from '../../lib/errors.ts';
import { replaceQueryParam } from './drf.ts';
import { DrfViews, drfOptions } from './metadata.ts';

export type Renderer = 'json' | 'api';

const SITE_TITLE = 'Hearth';

/** `?format=`: the last value, as Django's QueryDict.get; null when absent or empty. */
function formatParam(url: string): string | null {
  const i = url.indexOf('?');
  if (i < 0 || !url.includes('format=', i)) return null;
  const values = new URLSearchParams(url.slice(i + 1)).getAll('format');
  const last = values[values.length - 1];
  return last ? last : null;
}

interface MediaType {
  main: string;
  sub: string;
  precedence: number;
}

function mediaType(s: string): MediaType {
  const [type, ...params] = s.split(';').map((p) => p.trim());
  const [main = '', sub = ''] = type.toLowerCase().split('/');
  const keys = params.map((p) => p.split('=')[0].trim().toLowerCase()).filter((k) => k && k !== 'q');
  const precedence = main === '*' ? 0 : sub === '*' ? 1 : keys.length ? 3 : 2;
  return { main, sub, precedence };
}

const matches = (main: string, sub: string, m: MediaType) => (m.main === '*' || m.main === main) && (m.sub === '*' || m.sub === sub);

/**
 * DRF DefaultContentNegotiation over [JSONRenderer, BrowsableAPIRenderer]: accepted types grouped by
 * precedence (specificity, not q), the renderer order deciding within a group.
 */
function acceptRenderer(accept: string | undefined): Renderer {
  if (!accept) return 'json';
  const types = accept
    .split(',')
    .filter((s) => s.trim())
    .map(mediaType);
  for (const precedence of [3, 2, 1, 0]) {
    const group = types.filter((t) => t.precedence === precedence);
    if (group.some((t) => matches('application', 'json', t))) return 'json';
    if (group.some((t) => matches('text', 'html', t))) return 'api';
  }
  return 'json';
}

/** The renderer of a translation request, or null for a `?format=` that names none (DRF: 404). */
export function negotiate(req: FastifyRequest): Renderer | null {
  const format = formatParam(req.url);
  if (format !== null) return format === 'api' || format === 'json' ? format : null;
  const accept = req.headers.accept;
  return acceptRenderer(Array.isArray(accept) ? accept.join(',') : accept);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeHtml = (s: string) => s.replace(/[&<>]/g, (c) => ESCAPES[c]);
const escapeAttr = (s: string) => s.replace(/[&<>"]/g, (c) => ESCAPES[c]);
const URL_VALUE = /^https?:\/\/[^\s<>"]+$/i;
const LITERAL = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** A JSON string token as DRF shows it: U+2028/2029 escaped, an http(s) URL as a link (urlize), the rest escaped. */
function stringHtml(token: string): string {
  const text = token.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  const value = JSON.parse(token) as string;
  if (URL_VALUE.test(value)) return `"<a href="${escapeAttr(value)}" rel="nofollow">${escapeHtml(text.slice(1, -1))}</a>"`;
  return escapeHtml(text);
}

/**
 * The JSON text re-indented as Python's json.dumps(indent=4, separators=(',', ': ')) would, as HTML.
 * Works on the text, not on parsed values, so numbers (64-bit hashes) are shown exactly as sent.
 */
export function prettyJsonHtml(src: string): string {
  let i = 0;
  const out: string[] = [];
  const fail = (): never => {
    throw new SyntaxError(`bad JSON at ${i}`);
  };
  const ws = () => {
    while (i < src.length && (src[i] === ' ' || src[i] === '\n' || src[i] === '\r' || src[i] === '\t')) i++;
  };
  const str = (): string => {
    const start = i++;
    while (i < src.length) {
      const c = src[i];
      if (c === '\\') i += 2;
      else if (c === '"') return src.slice(start, ++i);
      else i++;
    }
    return fail();
  };
  const pad = (depth: number) => '\n' + '    '.repeat(depth);
  const value = (depth: number): void => {
    ws();
    const c = src[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (src[i] === close) {
        i++;
        out.push(c + close);
        return;
      }
      out.push(c);
      for (;;) {
        out.push(pad(depth + 1));
        if (c === '{') {
          ws();
          if (src[i] !== '"') fail();
          out.push(escapeHtml(str()));
          ws();
          if (src[i++] !== ':') fail();
          out.push(': ');
        }
        value(depth + 1);
        ws();
        const next = src[i++];
        if (next === ',') out.push(',');
        else if (next === close) break;
        else fail();
      }
      out.push(pad(depth) + close);
      return;
    }
    if (c === '"') {
      out.push(stringHtml(str()));
      return;
    }
    LITERAL.lastIndex = i;
    const m = LITERAL.exec(src);
    if (!m) fail();
    i += m![0].length;
    out.push(m![0]);
  };
  try {
    value(0);
    ws();
    if (i !== src.length) fail();
    return out.join('');
  } catch {
    return escapeHtml(src);
  }
}

/** The response headers DRF's page lists (those its views set), with DRF's spelling, sorted by name. */
const SHOWN_HEADERS: Record<string, string> = {
  allow: 'Allow',
  location: 'Location',
  'retry-after': 'Retry-After',
  vary: 'Vary',
  'www-authenticate': 'WWW-Authenticate',
  'x-ratelimit-limit': 'X-RateLimit-Limit',
  'x-ratelimit-remaining': 'X-RateLimit-Remaining',
  'x-ratelimit-reset': 'X-RateLimit-Reset',
};

export interface Page {
  name: string;
  description: string;
  method: string;
  /** path and query as requested */
  fullPath: string;
  status: number;
  headers: [string, string][];
  /** the response body as sent (JSON text), '' when empty */
  body: string;
  breadcrumbs: { name: string; href: string }[];
  formats: { name: string; href: string }[];
  pagination: { previous: string | null; next: string | null } | null;
  siteUrl: string;
}

const CSS = `
body{margin:0;font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;font-size:14px;line-height:1.43;color:#333;background:#fff}
a{color:#2c6c97;text-decoration:none}a:hover{text-decoration:underline}
.navbar{background:#2c2c2c;border-top:5px solid #a30000;padding:0 15px;min-height:50px}
.navbar-brand{display:inline-block;color:#fff;font-size:18px;line-height:20px;padding:15px 0}
.navbar-brand:hover{color:#fff}
.container{max-width:1170px;margin:0 auto;padding:0 15px}
.breadcrumb{list-style:none;margin:20px 0;padding:8px 15px;background:#f5f5f5;border-radius:4px}
.breadcrumb>li{display:inline-block}
.breadcrumb>li+li:before{content:"/\\00a0";padding:0 5px;color:#ccc}
.breadcrumb>li.active a{color:#777}
.request-buttons{float:right;margin-top:4px}
.btn{display:inline-block;padding:6px 12px;margin-left:4px;border:1px solid #ccc;border-radius:4px;color:#333;background:#fff}
.btn-primary{color:#fff;background:#2c6c97;border-color:#245a7e}
.btn:hover{text-decoration:none;background:#e6e6e6}.btn-primary:hover{background:#245a7e}
.page-header{border-bottom:1px solid #eee;margin:0 0 20px}
h1{font-size:36px;font-weight:500;margin:20px 0 10px}
.description p{margin:0 0 10px}
.pagination{list-style:none;margin:0 0 20px;padding:0;float:right}
.pagination>li{display:inline-block}
.pagination>li>a,.pagination>li>span{display:inline-block;padding:6px 12px;border:1px solid #ddd;margin-left:-1px}
.pagination>li.disabled>span{color:#777}
pre{clear:both;display:block;padding:9.5px;margin:0 0 10px;font-family:Menlo,Monaco,Consolas,"Courier New",monospace;font-size:13px;line-height:1.43;word-break:break-all;word-wrap:break-word;white-space:pre-wrap;background:#f5f5f5;border:1px solid #ccc;border-radius:4px}
.response-info pre .meta{color:#555}
.response-info pre .lit{color:#195f91}
`;

/** DRF markup_description without markdown: paragraphs of escaped text. */
function descriptionHtml(description: string): string {
  return description
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br />')}</p>`)
    .join('\n');
}

function paginationHtml(p: NonNullable<Page['pagination']>): string {
  const item = (href: string | null, label: string, rel: string) =>
    href ? `<li><a href="${escapeAttr(href)}" rel="${rel}">${label}</a></li>` : `<li class="disabled"><span>${label}</span></li>`;
  return `<nav class="pagination-nav"><ul class="pagination">${item(p.previous, '&laquo; Previous', 'prev')}${item(p.next, 'Next &raquo;', 'next')}</ul></nav>`;
}

/** DRF's rest_framework/base.html, one self-contained page. */
export function renderPage(p: Page): string {
  const name = escapeHtml(p.name);
  const crumbs = p.breadcrumbs
    .map((b, i) => `          <li${i === p.breadcrumbs.length - 1 ? ' class="active"' : ''}><a href="${escapeAttr(b.href)}">${escapeHtml(b.name)}</a></li>`)
    .join('\n');
  const formats = p.formats.map((f) => `<a class="btn format-option" href="${escapeAttr(f.href)}" rel="nofollow">${escapeHtml(f.name)}</a>`).join('');
  const headers = p.headers.map(([k, v]) => `\n<b>${escapeHtml(k)}:</b> <span class="lit">${escapeHtml(v)}</span>`).join('');
  const content = p.body ? prettyJsonHtml(p.body) : '';
  return `<!DOCTYPE html>
<html>
  <head>
    <meta http-equiv="Content-Type" content="text/html; charset=utf-8"/>
    <meta name="robots" content="NONE,NOARCHIVE"/>
    <title>${name} – Django REST framework</title>
    <style>${CSS}</style>
  </head>
  <body>
    <div class="wrapper">
      <div class="navbar" role="navigation"><div class="container"><a class="navbar-brand" href="${escapeAttr(p.siteUrl)}/">${SITE_TITLE}</a></div></div>
      <div class="container">
        <ul class="breadcrumb">
${crumbs}
        </ul>
        <div id="content" role="main">
          <div class="request-buttons"><a class="btn btn-primary" href="${escapeAttr(p.fullPath)}" rel="nofollow" title="Make a GET request on the ${escapeAttr(p.name)} resource">GET</a>${formats}</div>
          <div class="content-main">
            <div class="page-header"><h1>${name}</h1></div>
            <div class="description">${descriptionHtml(p.description)}</div>
            ${p.pagination ? paginationHtml(p.pagination) : ''}
            <div class="request-info"><pre><b>${escapeHtml(p.method)}</b> ${escapeHtml(p.fullPath)}</pre></div>
            <div class="response-info"><pre><span class="meta nocode"><b>HTTP ${p.status} ${escapeHtml(STATUS_CODES[p.status] ?? '')}</b>${headers}

</span>${content}</pre></div>
          </div>
        </div>
      </div>
    </div>
  </body>
</html>
`;
}

/** The envelope's previous/next when the body is a page of a paginated list with other pages (DRF display_page_controls). */
function paginationOf(body: string): Page['pagination'] {
  if (!body.startsWith('{"count"')) return null;
  try {
    const data = JSON.parse(body) as { next?: unknown; previous?: unknown; results?: unknown };
    if (!Array.isArray(data.results)) return null;
    const next = typeof data.next === 'string' ? data.next : null;
    const previous = typeof data.previous === 'string' ? data.previous : null;
    return next || previous ? { previous, next } : null;
  } catch {
    return null;
  }
}

function pageFor(req: FastifyRequest, reply: FastifyReply, views: DrfViews, body: string, siteUrl: string): Page {
  const url = req.routeOptions.url ?? req.url.split('?')[0];
  const { name, description } = views.view(url, req.routeOptions.config?.view);
  const headers: [string, string][] = [['Content-Type', 'application/json']];
  for (const [k, shown] of Object.entries(SHOWN_HEADERS)) {
    const v = reply.getHeader(k);
    if (v !== undefined) headers.push([shown, Array.isArray(v) ? v.join(', ') : String(v)]);
  }
  headers.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const format = formatParam(req.url);
  const suffix = format ? `?format=${encodeURIComponent(format)}` : '';
  return {
    name,
    description,
    method: req.method,
    fullPath: req.url,
    status: reply.statusCode,
    headers,
    body,
    breadcrumbs: views.breadcrumbs(req.url.split('?')[0]).map((b) => ({ name: b.name, href: b.path + suffix })),
    formats: ['json', 'api'].map((f) => ({ name: f, href: replaceQueryParam(req.url, 'format', f) })),
    pagination: paginationOf(body),
    siteUrl,
  };
}

/** `?format=` naming no renderer: 404 before authentication (runs after the route's onRequest hooks set Allow). */
const checkFormat: preParsingHookHandler = (req, _reply, payload, done) => {
  if (negotiate(req) === null) return done(Errors.notFound());
  done(null, payload);
};

function browsableOnSend(views: DrfViews, siteUrl: string): onSendHookHandler {
  return function browsableApiOnSend(req, reply, payload, done) {
    if (negotiate(req) !== 'api' || reply.statusCode === 204 || reply.statusCode === 304) return done(null, payload);
    let body: string;
    if (payload === undefined || payload === null || payload === '') body = '';
    else if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      const type = reply.getHeader('content-type');
      if (type !== undefined && !String(type).startsWith('application/json')) return done(null, payload);
      body = payload.toString();
    } else return done(null, payload); // a stream: not a DRF Response
    reply.header('content-type', 'text/html; charset=utf-8');
    reply.removeHeader('content-length');
    done(null, renderPage(pageFor(req, reply, views, body, siteUrl)));
  };
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Adds an onSend hook; on a HEAD route before Fastify's own, which measures and drops the body. */
function withOnSend(existing: RouteOptions['onSend'], hook: onSendHookHandler): onSendHookHandler[] {
  const hooks = asArray(existing) as onSendHookHandler[];
  const head = hooks.findIndex((h) => h.name === 'headRouteOnSendHandler');
  return head < 0 ? [...hooks, hook] : [...hooks.slice(0, head), hook, ...hooks.slice(head)];
}

/** Registers the browsable API, format negotiation and OPTIONS for every route with `config.api === 'translation'`. */
export function browsableApi(app: FastifyInstance, siteUrl: string): void {
  const views = new DrfViews();
  const onTranslationRoute = drfOptions(app, views);
  const onSend = browsableOnSend(views, siteUrl);
  app.addHook('onRoute', function (this: FastifyInstance, route: RouteOptions) {
    if (route.config?.api !== 'translation') return;
    onTranslationRoute(this, route);
    if (route.config.raw) return;
    route.preParsing = [...(asArray(route.preParsing) as preParsingHookHandler[]), checkFormat];
    route.onSend = withOnSend(route.onSend, onSend);
  });
}
