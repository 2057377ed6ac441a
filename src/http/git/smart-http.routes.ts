// git clone / fetch / push over smart HTTP at EXTERNAL_URL/<full_path>.git (and without .git):
// info/refs, git-upload-pack, git-receive-pack — streamed both ways, gzip request bodies, protocol v2.
import zlib from 'node:zlib';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { Actor } from '../../domain/access/actor.ts';
import { PUSH_MESSAGES } from '../../domain/repository/branch-protection.ts';
import { DomainError } from '../../lib/errors.ts';
import { GitAccessDenied, type GitCaller, type GitTarget } from '../../domain/repository/git-access.ts';
import { GitAuthenticator, GitAuthFailed, GitScopeRefused } from './git-auth.ts';
import { mayCloneExport } from '../../domain/translation/components/export-access.ts';

const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);
const INFO_REFS = /^\/(.+?)(?:\.git)?\/info\/refs$/;
const RPC = /^\/(.+?)(?:\.git)?\/(git-upload-pack|git-receive-pack)$/;
/** git/<translation project>/<component>: a component's mirror (shadows a platform path of that shape) */
const EXPORT_PATH = /^git\/([-a-zA-Z0-9_]+)\/([-a-zA-Z0-9_]+)$/;

const DENIED =
  "HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect or you're required to use a token instead of a password. If a token was provided, it was either incorrect, expired, or improperly scoped.";
const NOT_FOUND = "The project you were looking for could not be found or you don't have permission to view it.";

function pktLine(s: string): string {
  return (s.length + 4).toString(16).padStart(4, '0') + s;
}

class GitHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function sendText(reply: FastifyReply, status: number, text: string): FastifyReply {
  if (status === 401) reply.header('www-authenticate', 'Basic realm="Hearth"');
  return reply
    .code(status)
    .type('text/plain; charset=utf-8')
    .send(text + '\n');
}

/** GIT_PROTOCOL from the Git-Protocol header, only in the form git itself sends ("version=2"). */
function protocolEnv(req: FastifyRequest): Record<string, string> {
  const v = req.headers['git-protocol'];
  return typeof v === 'string' && /^[A-Za-z0-9=:._-]{1,64}$/.test(v) ? { GIT_PROTOCOL: v } : {};
}

function noCache(reply: FastifyReply): void {
  reply.header('cache-control', 'no-cache, max-age=0, must-revalidate');
  reply.header('expires', 'Fri, 01 Jan 1980 00:00:00 GMT');
  reply.header('pragma', 'no-cache');
}

export function smartHttpRoutes(app: FastifyInstance, c: Container): void {
  const auth = new GitAuthenticator(c);
  const config = { api: 'git' as const };

  // The request body goes to git as it comes (no parsing, no buffering).
  app.addContentTypeParser(['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'], (_req, payload, done) => done(null, payload));

  /** The project and the caller's access, or the HTTP answer git expects (401 prompts for credentials). */
  async function target(req: FastifyRequest, fullPath: string, service: string) {
    const write = service === 'git-receive-pack';
    let caller: GitCaller;
    try {
      caller = await auth.caller(req, write);
    } catch (e) {
      if (e instanceof GitAuthFailed) throw new GitHttpError(401, DENIED);
      if (e instanceof GitScopeRefused) throw new GitHttpError(403, PUSH_MESSAGES.noPermission);
      if (e instanceof DomainError && e.status === 403) throw new GitHttpError(403, typeof e.detail === 'string' ? e.detail : 'Forbidden');
      throw e;
    }
    try {
      return await c.repository.gitTarget(caller, fullPath, write ? 'git-receive-pack' : 'git-upload-pack');
    } catch (e) {
      if (!(e instanceof GitAccessDenied)) throw e;
      const r = e.refusal;
      if (r.kind === 'unauthenticated') throw new GitHttpError(401, DENIED);
      // git shows the text of a 404 or 403 as it is
      throw new GitHttpError(r.kind === 'not_found' ? 404 : 403, r.kind === 'not_found' ? NOT_FOUND : r.message);
    }
  }

  /**
   * A translation component's mirror at EXTERNAL_URL/git/<project>/<component>/ (its `git_export`):
   * read-only, for whoever may see the component and, when its repository is a project of this server,
   * may read that project's code (mayCloneExport). Null when the path is not of that shape.
   */
  async function exportTarget(req: FastifyRequest, fullPath: string, service: string) {
    const m = EXPORT_PATH.exec(fullPath);
    if (!m) return null;
    let actor: Actor;
    try {
      actor = await auth.actor(req, false);
    } catch (e) {
      if (e instanceof GitAuthFailed || e instanceof GitScopeRefused) throw new GitHttpError(401, DENIED);
      throw e;
    }
    if (service === 'git-receive-pack') throw new GitHttpError(actor.user ? 403 : 401, actor.user ? 'The translation export is read-only.' : DENIED);
    try {
      const { component } = await c.translation.queries.component(actor, m[1], m[2]);
      if (!(await mayCloneExport(c.resolve, actor, component))) throw new GitHttpError(actor.user ? 404 : 401, actor.user ? NOT_FOUND : DENIED);
      const repo = c.translation.vcs.mirror(component.id);
      if (!repo.exists()) throw new GitHttpError(404, NOT_FOUND);
      return { repo };
    } catch (e) {
      if (e instanceof DomainError && e.status === 404) throw new GitHttpError(actor.user ? 404 : 401, actor.user ? NOT_FOUND : DENIED);
      throw e;
    }
  }

  async function handle(_req: FastifyRequest, reply: FastifyReply, fn: () => Promise<unknown>) {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof GitHttpError) return sendText(reply, e.status, e.message);
      throw e;
    }
  }

  app.get('/*', { config }, async (req, reply) => {
    const urlPath = req.url.split('?')[0];
    const m = INFO_REFS.exec(decodeURIComponent(urlPath));
    if (!m) return reply.callNotFound();
    const service = (req.query as Record<string, unknown>).service;
    if (typeof service !== 'string' || !SERVICES.has(service)) {
      // dumb HTTP is not served
      return sendText(reply, 403, 'Dumb HTTP is not supported; use a git client that speaks smart HTTP.');
    }
    return handle(req, reply, async () => {
      const { repo } = (await exportTarget(req, m[1], service)) ?? (await target(req, m[1], service));
      const child = repo.spawn([service.slice(4), '--stateless-rpc', '--advertise-refs', repo.gitDir], { env: protocolEnv(req) });
      const out = new PassThrough();
      out.write(pktLine(`# service=${service}\n`) + '0000');
      child.stdout!.pipe(out);
      child.stdin!.end();
      noCache(reply);
      return reply.type(`application/x-${service}-advertisement`).send(out);
    });
  });

  app.post('/*', { config }, async (req, reply) => {
    const m = RPC.exec(decodeURIComponent(req.url.split('?')[0]));
    if (!m) return reply.callNotFound();
    const service = m[2];
    if (req.headers['content-type'] !== `application/x-${service}-request`) return sendText(reply, 415, 'Unsupported Media Type');
    return handle(req, reply, async () => {
      const exported = await exportTarget(req, m[1], service);
      const t = exported ?? (await target(req, m[1], service));
      let body = req.body as Readable;
      if (req.headers['content-encoding'] === 'gzip') body = body.pipe(zlib.createGunzip());
      noCache(reply);
      reply.type(`application/x-${service}-result`);
      if (service === 'git-upload-pack') {
        const child = t.repo.spawn(['upload-pack', '--stateless-rpc', t.repo.gitDir], { env: protocolEnv(req) });
        body.on('error', () => child.kill());
        body.pipe(child.stdin!);
        child.stdin!.on('error', () => {});
        return reply.send(child.stdout);
      }
      // the push itself (journal, protection through the hooks, events) is the repository service's
      return reply.send(await c.repository.receivePack(t as GitTarget, body, { env: protocolEnv(req), log: req.log }));
    });
  });
}
