// The web interface's request plumbing, shared by every page: who is signed in (the session cookie
// through the one authenticator), the CSRF check of every form, rendering a page with the right
// headers, flash messages, the HTML error pages, and the dispatcher of namespace paths
// (`/:user`, `/:group/:project/-/tree/main/…`), whose project sub-pages register on `projectPages`.
// Pages never query or check permissions on their own: they call the domain services with `ctx.actor`.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay from 'find-my-way';
import type { Container } from '../../container.ts';
import type { UserRow } from '../../db/schema.ts';
import { ANONYMOUS } from '../../domain/access/actor.ts';
import { MovedError, type ResolvedGroup, type ResolvedProject } from '../../domain/access/resolve.ts';
import { SESSION_COOKIE } from '../../domain/auth/sessions.service.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { safeEqual } from '../../lib/secrets.ts';
import { encodePath, type Flash, type WebCtx } from '../../web/context.ts';
import { render, type SafeHtml } from '../../web/jsx/jsx-runtime.ts';
import { PageMarkdown } from '../../web/page-markdown.ts';
import { ErrorPage } from '../../web/views/error-page.tsx';

// the page modules take the view context from here, with the rest of the plumbing
export { encodePath, type WebCtx };

/** Route config of every web page: `api: 'web'` for the error handler, `page` for the CSRF check. */
export const PAGE = { api: 'web' as const, page: true };
/** Route schema of every web page: kept out of the OpenAPI document. */
export const HIDDEN = { hide: true } as any;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** a web page: the session is resolved and non-GET requests must carry the session's CSRF token */
    page?: boolean;
  }
}

/** Thrown by `requireUser`: the error handler sends the browser to the sign-in page. */
export class SignInRequired extends Error {}

const FLASH_COOKIE = '_hearth_flash';

export interface ProjectPageArgs {
  ctx: WebCtx;
  resolved: ResolvedProject;
  params: Record<string, string | undefined>;
}
type ProjectPageHandler = (req: FastifyRequest, reply: FastifyReply, args: ProjectPageArgs) => Promise<unknown>;
export interface GroupPageArgs {
  ctx: WebCtx;
  resolved: ResolvedGroup;
  params: Record<string, string | undefined>;
}
type GroupPageHandler = (req: FastifyRequest, reply: FastifyReply, args: GroupPageArgs) => Promise<unknown>;
type NamespaceHandler = (req: FastifyRequest, reply: FastifyReply, ctx: WebCtx, path: string) => Promise<unknown | null>;

export class Web {
  private readonly contexts = new WeakMap<FastifyRequest, Promise<WebCtx>>();
  private readonly projectRouter = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 2000 });
  private readonly groupRouter = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 2000 });
  private namespaceHandlers: NamespaceHandler[] = [];
  readonly cookieBase: { path: string; httpOnly: boolean; sameSite: 'lax'; secure: boolean };

  constructor(readonly c: Container) {
    this.cookieBase = { path: '/', httpOnly: true, sameSite: 'lax', secure: c.config.externalUrl.startsWith('https:') };
  }

  /** The viewer of this request, resolved once. */
  context(req: FastifyRequest): Promise<WebCtx> {
    let p = this.contexts.get(req);
    if (!p) this.contexts.set(req, (p = this.resolveContext(req)));
    return p;
  }

  private async resolveContext(req: FastifyRequest): Promise<WebCtx> {
    const base = { url: req.url, flash: readFlash(req), externalUrl: this.c.config.externalUrl, markdown: new PageMarkdown(this.c.markdown) };
    const sessionId = req.cookies[SESSION_COOKIE];
    if (sessionId) {
      const session = await this.c.sessions.find(sessionId);
      if (session) {
        // the one authenticator decides whether the account may act (blocked, deactivated …)
        const actor = await this.c.auth.authenticate({ sessionId, method: 'GET', path: req.url.split('?')[0] } as any, ['api']).catch(() => ANONYMOUS);
        if (actor.user) return { ...base, actor, user: actor.user, csrf: session.csrf };
      }
    }
    return { ...base, actor: ANONYMOUS, user: null, csrf: null };
  }

  /** The signed-in viewer, or off to the sign-in page (which returns here afterwards). */
  async requireUser(req: FastifyRequest): Promise<WebCtx & { user: UserRow }> {
    const ctx = await this.context(req);
    if (!ctx.user) throw new SignInRequired();
    return ctx as WebCtx & { user: UserRow };
  }

  /** An administrator (the admin area): the anonymous go to sign in, everyone else gets the 404 page. */
  async requireAdmin(req: FastifyRequest): Promise<WebCtx & { user: UserRow }> {
    const ctx = await this.requireUser(req);
    if (!ctx.actor.isAdmin) throw Errors.notFound();
    return ctx;
  }

  /** Sends a rendered page, with its markdown filled in. */
  async page(reply: FastifyReply, html: SafeHtml | string, status = 200): Promise<FastifyReply> {
    const body = await this.fill(reply.request, typeof html === 'string' ? html : '<!DOCTYPE html>\n' + render(html));
    // a flash is shown once: the page that rendered it forgets it
    if (reply.request.cookies[FLASH_COOKIE]) reply.clearCookie(FLASH_COOKIE, this.cookieBase);
    return reply
      .code(status)
      .header('cache-control', 'max-age=0, private, must-revalidate')
      .header('x-frame-options', 'SAMEORIGIN')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'strict-origin-when-cross-origin')
      .header(
        'content-security-policy',
        "default-src 'self'; img-src 'self' data: https: http:; style-src 'self' 'unsafe-inline'; script-src 'self'; object-src 'none'; form-action 'self'; frame-ancestors 'self'; base-uri 'self'",
      )
      .type('text/html; charset=utf-8')
      .send(await compressed(reply, body));
  }

  /** The markdown of the request's page filled into `html` (views leave placeholders: see PageMarkdown). */
  async fill(req: FastifyRequest, html: string): Promise<string> {
    const ctx = await this.contexts.get(req)?.catch(() => null);
    return ctx ? ctx.markdown.fill(html) : html;
  }

  /** A redirect after a form (303, so the browser follows with GET), with an optional flash message. */
  redirect(reply: FastifyReply, url: string, flash?: Flash): FastifyReply {
    if (flash) reply.setCookie(FLASH_COOKIE, `${flash.kind}:${encodeURIComponent(flash.text.slice(0, 500))}`, { ...this.cookieBase, maxAge: 60 });
    return reply.redirect(url, 303);
  }

  /** Every non-GET web page request must carry the session's CSRF token (form field or X-CSRF-Token). */
  async checkCsrf(req: FastifyRequest): Promise<void> {
    const ctx = await this.context(req);
    if (!ctx.user || !ctx.csrf) throw new SignInRequired();
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const header = req.headers['x-csrf-token'];
    const sent = (typeof header === 'string' && header) || (typeof body.authenticity_token === 'string' ? body.authenticity_token : '');
    if (!sent || !safeEqual(sent, ctx.csrf)) throw new InvalidAuthenticityToken();
  }

  // ---- namespace paths -------------------------------------------------------------------------

  /**
   * A page below a project, by the path after the project's own (`''` is the project home,
   * `/-/tree/*` …). GET and HEAD only: forms post to `/-/…` routes registered on Fastify itself.
   */
  projectPage(path: string, handler: ProjectPageHandler): void {
    this.projectRouter.on('GET', path, handler as any);
  }

  /** A page below a group, by the path after `/groups/<full path>` (`/-/milestones/:iid` …); GET only. */
  groupPage(path: string, handler: GroupPageHandler): void {
    this.groupRouter.on('GET', path, handler as any);
  }

  /** `/groups/<full path>/-/…`: the group resolved with the viewer's access (invisible: 404; renamed: 301), then its sub-page. */
  async dispatchGroup(req: FastifyRequest, reply: FastifyReply, fullPath: string, rest: string): Promise<unknown> {
    const ctx = await this.context(req);
    let resolved: ResolvedGroup;
    try {
      resolved = await this.c.resolve.group(ctx.actor, fullPath);
    } catch (e) {
      if (e instanceof MovedError) return reply.redirect(`/groups/${encodePath(e.fullPath)}${rest}`, 301);
      if (e instanceof DomainError && e.status === 404) return this.notFound(req, reply);
      throw e;
    }
    const found = this.groupRouter.find('GET', rest);
    if (!found) return this.notFound(req, reply);
    ctx.searchIn = { param: 'group_id', id: resolved.group.id, what: 'group' };
    return (found.handler as unknown as GroupPageHandler)(req, reply, { ctx, resolved, params: found.params });
  }

  /** Pages at `/<namespace path>` without a project (user profiles, group shortcuts): null = not mine. */
  namespacePage(handler: NamespaceHandler): void {
    this.namespaceHandlers.push(handler);
  }

  /** GET of a path no Fastify route took: a project (sub)page, a user or group, or the 404 page. */
  async dispatch(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const ctx = await this.context(req);
    const [rawPath, query = ''] = splitUrl(req.url);
    let path: string;
    try {
      path = decodeURIComponent(rawPath).replace(/\/+$/, '');
    } catch {
      return this.notFound(req, reply);
    }
    const legacy = LEGACY_PROJECT_PAGE.exec(path);
    const cut = path.indexOf('/-/');
    const base = legacy ? legacy[1]! : (cut >= 0 ? path.slice(0, cut) : path).replace(/^\//, '');
    const rest = legacy ? `/-/${legacy[2]}` : cut >= 0 ? path.slice(cut) : '';
    // control characters name nothing (and PostgreSQL refuses a NUL in text)
    if (!base || CONTROL.test(path) || base.split('/').some((s) => s === '' || s === '.' || s === '..')) return this.notFound(req, reply);
    try {
      if (base.includes('/')) {
        const resolved = await this.c.resolve.project(ctx.actor, base);
        const found = this.projectRouter.find('GET', rest || '/');
        if (!found) return this.notFound(req, reply);
        ctx.searchIn = { param: 'project_id', id: resolved.project.id, what: 'project' };
        return await (found.handler as unknown as ProjectPageHandler)(req, reply, { ctx, resolved, params: found.params });
      }
    } catch (e) {
      if (e instanceof MovedError) {
        return reply.redirect(`/${encodePath(e.fullPath)}${rest}${query ? `?${query}` : ''}`, 301);
      }
      if (!(e instanceof DomainError && e.status === 404)) throw e;
      // not a project: perhaps a group or a user below
    }
    for (const h of this.namespaceHandlers) {
      const out = await h(req, reply, ctx, path);
      if (out !== null) return out;
    }
    return this.notFound(req, reply);
  }

  // ---- error pages -----------------------------------------------------------------------------

  async notFound(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const ctx = await this.context(req);
    return this.page(reply, ErrorPage({ ctx, status: 404 }), 404);
  }

  /** The error handler of web pages: HTML for every status, the sign-in page for the anonymous. */
  async error(err: unknown, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    if (err instanceof SignInRequired || (err instanceof DomainError && err.status === 401)) {
      if (req.method === 'GET' || req.method === 'HEAD') return reply.redirect(`/users/sign_in?redirect_to=${encodeURIComponent(req.url)}`, 302);
      return reply.redirect('/users/sign_in', 303);
    }
    if (err instanceof MovedError) return reply.redirect(`/${encodePath(err.fullPath)}`, 301);
    const ctx = await this.context(req).catch(() => null);
    const fallback: WebCtx = ctx ?? {
      actor: ANONYMOUS,
      user: null,
      csrf: null,
      url: req.url,
      flash: null,
      externalUrl: this.c.config.externalUrl,
      markdown: new PageMarkdown(this.c.markdown),
    };
    if (err instanceof InvalidAuthenticityToken) return this.page(reply, ErrorPage({ ctx: fallback, status: 422, message: err.message }), 422);
    if (err instanceof DomainError && err.status < 500) {
      const message = typeof err.detail === 'string' && err.status !== 404 ? err.detail : undefined;
      return this.page(reply, ErrorPage({ ctx: fallback, status: err.status, message }), err.status);
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) return this.page(reply, ErrorPage({ ctx: fallback, status, message: (err as Error).message }), status);
    req.log.error({ err }, 'unhandled error'); // the request logger carries reqId
    return this.page(reply, ErrorPage({ ctx: fallback, status: 500 }), 500);
  }
}

export class InvalidAuthenticityToken extends Error {
  constructor() {
    super("The change you requested was rejected: the form's authenticity token is missing or out of date. Reload the page and try again.");
  }
}

/**
 * Pages go out compressed when the browser accepts it (gzip, fast level): a 100 KB page is ~10 KB. On
 * libuv's threads: a page of a megabyte (a README shown as plain text) costs deflate a second or more.
 */
async function compressed(reply: FastifyReply, body: string): Promise<string | Buffer> {
  if (body.length < 1024) return body;
  const accept = reply.request.headers['accept-encoding'];
  if (typeof accept !== 'string' || !/\bgzip\b/.test(accept)) return body;
  reply.header('content-encoding', 'gzip').header('vary', 'Accept-Encoding');
  return gzip(body, { level: 4 });
}

const gzip = promisify(zlib.gzip);

const CONTROL = /[\u0000-\u001f\u007f]/;

/** Project pages GitLab still serves without `/-/` (the export's `_links.web_url`): served as `/-/<name>`. */
const LEGACY_PROJECT_PAGE = /^\/([^-/][^?#]*\/[^/]+)\/(download_export)$/;

function splitUrl(url: string): [string, string | undefined] {
  const i = url.indexOf('?');
  return i < 0 ? [url, undefined] : [url.slice(0, i), url.slice(i + 1)];
}

function readFlash(req: FastifyRequest): Flash | null {
  const v = req.cookies[FLASH_COOKIE];
  if (!v) return null;
  const i = v.indexOf(':');
  const kind = v.slice(0, i);
  if (kind !== 'notice' && kind !== 'alert') return null;
  try {
    return { kind, text: decodeURIComponent(v.slice(i + 1)) };
  } catch {
    return null;
  }
}

/** The CSRF check of every web page route (`config: PAGE`) that changes something. */
export function webPlumbing(app: FastifyInstance, web: Web): void {
  app.addHook('preHandler', async (req) => {
    const cfg = req.routeOptions.config;
    if (!cfg?.page) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') await web.checkCsrf(req);
  });
}
