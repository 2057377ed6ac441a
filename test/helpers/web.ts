// Signing in through the real sign-in form and browsing pages with the session cookie (inject).
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

export interface WebSession {
  /** the Cookie header value */
  cookie: string;
  /** the session's CSRF token, for forms (`authenticity_token`) */
  csrf: string;
}

function cookiesOf(res: LightMyRequestResponse): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of res.cookies as { name: string; value: string }[]) out[c.name] = c.value;
  return out;
}

/** Signs in with the form (CSRF and all) and reads the session's token from a page. */
export async function webSignIn(app: FastifyInstance, login: string, password = 'password-123'): Promise<WebSession> {
  const form = await app.inject({ method: 'GET', url: '/users/sign_in' });
  const formCookies = cookiesOf(form);
  const token = /name="authenticity_token" value="([^"]+)"/.exec(form.body)?.[1];
  if (!token) throw new Error(`no sign-in form: ${form.statusCode} ${form.body.slice(0, 200)}`);
  const res = await app.inject({
    method: 'POST',
    url: '/users/sign_in',
    headers: {
      cookie: Object.entries(formCookies)
        .map(([k, v]) => `${k}=${v}`)
        .join('; '),
    },
    payload: { authenticity_token: token, user: { login, password } },
  });
  if (res.statusCode !== 302) throw new Error(`sign-in failed: ${res.statusCode} ${res.body.slice(0, 300)}`);
  const session = cookiesOf(res)._service_session;
  const cookie = `_service_session=${session}`;
  // every page of the layout carries the token; the 404 page is the one that always exists
  const page = await app.inject({ method: 'GET', url: '/-/no-such-page', headers: { cookie } });
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(page.body)?.[1];
  if (!csrf) throw new Error(`no csrf meta on the 404 page: ${page.statusCode}`);
  return { cookie, csrf };
}

/** GET a page as this session (or anonymously with null). */
export function webGet(app: FastifyInstance, url: string, s: WebSession | null = null): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url, headers: s ? { cookie: s.cookie } : {} });
}

/** POST a form as this session, with its CSRF token. */
export function webPost(app: FastifyInstance, url: string, s: WebSession, fields: Record<string, unknown> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, headers: { cookie: s.cookie }, payload: { authenticity_token: s.csrf, ...fields } });
}

/** A page's `<main>` without the session's CSRF fields (they differ per session): what tests compare whole. */
export function mainOf(body: string): string {
  const m = /<main[^>]*>([\s\S]*)<\/main>/.exec(body);
  if (!m) throw new Error(`no <main> in the page: ${body.slice(0, 200)}`);
  return m[1]!.replace(/<input type="hidden" name="authenticity_token" value="[^"]*">/g, '');
}

/** The element that starts with `open` (a literal start tag's beginning) up to its matching end tag, from `mainOf`. */
export function elementOf(html: string, open: string): string {
  const start = html.indexOf(open);
  if (start < 0) throw new Error(`${open} is not on the page`);
  const tag = /^<([a-z0-9]+)/.exec(open)![1];
  const re = new RegExp(`<${tag}[\\s>]|</${tag}>`, 'g');
  re.lastIndex = start + 1;
  let depth = 1;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    depth += m[0].startsWith('</') ? -1 : 1;
    if (depth === 0) return html.slice(start, m.index + m[0].length);
  }
  throw new Error(`${open} is not closed`);
}
