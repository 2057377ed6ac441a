// The small HTML side of authentication: the sign-in form, sign-out, and a home page that hands
// the session's CSRF token to scripts. The form is protected by a double-submit CSRF token (a
// random value in an HttpOnly cookie and in a hidden field); after sign-in the session's own
// token protects every write made with the session cookie.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { UserRow } from '../../db/schema.ts';
import { PasswordSignIn, type SignInRefusal } from '../../domain/auth/password-sign-in.ts';
import { CSRF_COOKIE, SESSION_COOKIE } from '../../domain/auth/sessions.service.ts';
import { randomToken, safeEqual } from '../../lib/secrets.ts';
import { ANONYMOUS } from '../../domain/access/actor.ts';
import { render } from '../../web/jsx/jsx-runtime.ts';
import { SignInPage } from '../../web/views/sign-in.tsx';
import { PageMarkdown } from '../../web/page-markdown.ts';
import type { WebCtx } from './web.ts';

/** Devise's failure texts as GitLab shows them (authentication key "login"). */
export const SIGN_IN_MESSAGES: Record<SignInRefusal | 'disabled' | 'csrf', string> = {
  invalid: 'Invalid login or password.',
  locked: 'Your account is locked.',
  blocked: 'Your account has been blocked. Please contact your administrator if you think this is an error.',
  pending_approval:
    'Your account is pending approval from your administrator and hence blocked. Please contact your administrator if you think this is an error.',
  deactivated: 'Your account has been deactivated.',
  two_factor: 'Two-factor authentication is enabled for this account; this server cannot check a second factor. Use a personal access token instead.',
  disabled: 'Password authentication is disabled. Ask your administrator.',
  csrf: 'Your sign-in form has expired. Please try again.',
};

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

function page(title: string, body: string, head = ''): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${head}<title>${esc(title)} · Hearth</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#f5f5f7;color:#222}
main{max-width:22rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
label{display:block;margin:1rem 0 .3rem;font-weight:600}
input{box-sizing:border-box;width:100%;padding:.5rem;font:inherit}
button{margin-top:1.5rem;width:100%;padding:.6rem;font:inherit;cursor:pointer}
.alert{padding:.6rem;background:#fdecea;border:1px solid #f5c2c0;border-radius:4px}
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** The sign-in page in the layout (anonymous: no session token, the form carries its own). */
function signInForm(
  req: FastifyRequest,
  externalUrl: string,
  csrf: string,
  opts: { alert?: string; login?: string; disabled?: boolean; redirectTo?: string } = {},
): string {
  const ctx: WebCtx = { actor: ANONYMOUS, user: null, csrf: null, url: req.url, flash: null, externalUrl, markdown: new PageMarkdown(null) };
  return `<!DOCTYPE html>\n${render(SignInPage({ ctx, csrf, ...opts }))}`;
}

/**
 * `redirect_to` when it is a path on this site (one leading slash, no scheme, no backslash), as the URL
 * parser writes it: characters outside ASCII percent-encoded as UTF-8 (a Location header carries only
 * Latin-1, and browsers send such paths encoded anyway); else null.
 */
export function localRedirect(v: unknown): string | null {
  if (typeof v !== 'string' || v.length > 2000 || !v.startsWith('/') || v.startsWith('//') || /[\\\x00-\x1f\x7f]/.test(v)) return null;
  let path: string;
  try {
    const u = new URL(v, 'http://hearth.invalid');
    if (u.origin !== 'http://hearth.invalid') return null;
    path = u.pathname + u.search + u.hash;
  } catch {
    return null;
  }
  // never back to the sign-in form itself
  return path.startsWith('/users/sign_in') ? null : path;
}

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'self'; base-uri 'none'")
    .type('text/html; charset=utf-8')
    .send(body);
}

/** A page of the layout: its stylesheet and script are served from here, so the CSP allows 'self'. */
function layoutHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header(
      'content-security-policy',
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; object-src 'none'; form-action 'self'; frame-ancestors 'self'; base-uri 'self'",
    )
    .type('text/html; charset=utf-8')
    .send(body);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function signInRoutes(app: FastifyInstance, c: Container): void {
  const passwords = new PasswordSignIn(c.db, c.settings);
  const web = { api: 'web' as const };
  const hidden = { hide: true } as any;
  const cookieBase = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure: c.config.externalUrl.startsWith('https:') };

  /** The signed-in user of this browser, if the session is live and the account may still sign in. */
  async function current(req: FastifyRequest): Promise<{ id: string; csrf: string; user: UserRow } | null> {
    const id = req.cookies[SESSION_COOKIE];
    if (!id) return null;
    const s = await c.sessions.find(id);
    if (!s) return null;
    const user = await c.users.byId(s.userId);
    if (!user || user.state !== 'active') return null;
    return { id, csrf: s.csrf, user };
  }

  /** The form's CSRF token: kept while the cookie holds a well-formed one, so several tabs work. */
  function formToken(req: FastifyRequest, reply: FastifyReply): string {
    const existing = req.cookies[CSRF_COOKIE];
    if (existing && TOKEN_RE.test(existing)) return existing;
    const token = randomToken(32);
    reply.setCookie(CSRF_COOKIE, token, cookieBase);
    return token;
  }

  app.get('/users/sign_in', { config: web, schema: hidden }, async (req, reply) => {
    const redirectTo = localRedirect((req.query as Record<string, unknown> | undefined)?.redirect_to) ?? undefined;
    if (await current(req)) return reply.redirect(redirectTo ?? '/', 302);
    const s = await c.settings.get();
    const ext = c.config.externalUrl;
    if (!s.password_authentication_enabled_for_web)
      return layoutHtml(reply, 200, signInForm(req, ext, '', { alert: SIGN_IN_MESSAGES.disabled, disabled: true }));
    return layoutHtml(reply, 200, signInForm(req, ext, formToken(req, reply), { redirectTo }));
  });

  app.post('/users/sign_in', { config: web, schema: hidden }, async (req, reply) => {
    const s = await c.settings.get();
    const ext = c.config.externalUrl;
    if (!s.password_authentication_enabled_for_web)
      return layoutHtml(reply, 403, signInForm(req, ext, '', { alert: SIGN_IN_MESSAGES.disabled, disabled: true }));
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const redirectTo = localRedirect(body.redirect_to) ?? undefined;
    const userParams = (body.user && typeof body.user === 'object' ? body.user : {}) as Record<string, unknown>;
    const login = str(userParams.login);
    const password = str(userParams.password);

    const cookieToken = req.cookies[CSRF_COOKIE] ?? '';
    const sent = str(body.authenticity_token);
    if (!cookieToken || !sent || !safeEqual(sent, cookieToken)) {
      // A fresh token, so that the re-rendered form works.
      const token = randomToken(32);
      reply.setCookie(CSRF_COOKIE, token, cookieBase);
      return layoutHtml(reply, 403, signInForm(req, ext, token, { alert: SIGN_IN_MESSAGES.csrf, login, redirectTo }));
    }

    const outcome = login && password ? await passwords.attempt(login, password, { reactivate: true }) : null;
    if (!outcome || !outcome.ok) {
      const reason: SignInRefusal = outcome && !outcome.ok ? outcome.reason : 'invalid';
      req.log.info({ userId: outcome?.user?.id ?? null, reason }, 'web sign-in refused');
      return layoutHtml(reply, 401, signInForm(req, ext, cookieToken, { alert: SIGN_IN_MESSAGES[reason], login, redirectTo }));
    }

    // A new session id on every sign-in (no fixation); an earlier session of this browser ends.
    const previous = req.cookies[SESSION_COOKIE];
    if (previous) await c.sessions.destroy(previous);
    await passwords.recordSignIn(outcome.user, req.ip ?? null);
    const session = await c.sessions.create(outcome.user, s.session_expire_delay, req.ip ?? null);
    reply.setCookie(SESSION_COOKIE, session.id, { ...cookieBase, expires: new Date(session.expiresAt) });
    reply.clearCookie(CSRF_COOKIE, cookieBase);
    return reply.redirect(redirectTo ?? '/', 302);
  });

  app.post('/users/sign_out', { config: web, schema: hidden }, async (req, reply) => {
    const session = await current(req);
    if (session) {
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
      const header = req.headers['x-csrf-token'];
      const sent = (typeof header === 'string' && header) || str(body.authenticity_token);
      if (!sent || !safeEqual(sent, session.csrf))
        return html(reply, 403, page('Forbidden', `<h1>Forbidden</h1>\n<p class="alert" role="alert">Invalid authenticity token.</p>`));
      await c.sessions.destroy(session.id);
    } else if (req.cookies[SESSION_COOKIE]) {
      // An expired or unknown session: nothing to protect, just forget the cookie.
      await c.sessions.destroy(req.cookies[SESSION_COOKIE]!);
    }
    reply.clearCookie(SESSION_COOKIE, cookieBase);
    const s = await c.settings.get();
    return reply.redirect(s.after_sign_out_path || '/users/sign_in', 302);
  });
}
