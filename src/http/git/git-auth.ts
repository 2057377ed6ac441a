// Who is cloning or pushing: HTTP basic with a username and password, or any username and a token
// (personal, impersonation, OAuth — `oauth2` —, or a CI job token — `gitlab-ci-token`), or a deploy token's
// username and secret (GitLab's order: tokens, then deploy tokens, then passwords).
import type { FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { ANONYMOUS, userActor, type Actor } from '../../domain/access/actor.ts';
import type { GitCaller } from '../../domain/repository/git-access.ts';
import { PasswordSignIn } from '../../domain/auth/password-sign-in.ts';
import { DomainError } from '../../lib/errors.ts';
import { settingsOf } from '../../domain/core/project-settings.ts';

export const READ_SCOPES = ['api', 'read_repository', 'write_repository'];
export const WRITE_SCOPES = ['api', 'write_repository'];

/** Credentials were given and are not good enough: git shows the 401 body and asks again. */
export class GitAuthFailed extends Error {}

/** A good token whose scopes do not allow a push. */
export class GitScopeRefused extends Error {}

export function basicCredentials(req: FastifyRequest): { username: string; password: string } | null {
  const h = req.headers.authorization;
  if (!h || !/^basic\s+/i.test(h)) return null;
  const decoded = Buffer.from(h.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** `<full path>[.git]/info/refs` and the two RPCs: the project a request is for. */
const TARGET = /^\/(.+?)(?:\.git)?\/(?:info\/refs|git-upload-pack|git-receive-pack)$/;

export class GitAuthenticator {
  private readonly passwords: PasswordSignIn;

  constructor(private readonly c: Container) {
    this.passwords = new PasswordSignIn(c.db, c.settings);
  }

  /** A user's credentials only (the translation exports): a deploy token is no one there. */
  async actor(req: FastifyRequest, write: boolean): Promise<Actor> {
    const caller = await this.caller(req, write);
    if (!caller.actor) throw new GitAuthFailed();
    return caller.actor;
  }

  /** The actor, or the deploy token, a request's credentials name. */
  async caller(req: FastifyRequest, write: boolean): Promise<GitCaller> {
    const creds = basicCredentials(req);
    if (!creds || (!creds.username && !creds.password)) return { actor: ANONYMOUS };
    // the request is the versions snapshot token lookups are cached against, as on the API
    const base = { method: req.method, path: req.url.split('?')[0], snapshot: req };
    try {
      const actor =
        creds.username === 'gitlab-ci-token'
          ? await this.c.auth.authenticate({ ...base, jobToken: creds.password }, READ_SCOPES)
          : await this.c.auth.authenticate({ ...base, bearer: creds.password }, READ_SCOPES);
      // a token that may read but not write: the push is refused as GitLab refuses it (403)
      if (write && actor.scopes && actor.credential !== 'job_token' && !actor.scopes.some((s) => WRITE_SCOPES.includes(s))) throw new GitScopeRefused();
      if (actor.credential === 'job_token') await this.checkJobProject(req, actor, write);
      return { actor };
    } catch (e) {
      if (e instanceof GitScopeRefused || e instanceof GitAuthFailed) throw e;
      // not a token (or a token that may not do this): a password, if passwords may be used for git
      if (!(e instanceof DomainError)) throw e;
      if (e.status !== 401) throw new GitAuthFailed();
    }
    const deployToken = await this.c.deployTokens.forGit(creds.username, creds.password);
    if (deployToken) return { deployToken: { ...deployToken, scopes: JSON.parse(deployToken.scopes) } };
    const settings = await this.c.settings.get();
    if (!settings.password_authentication_enabled_for_git) throw new GitAuthFailed();
    const outcome = await this.passwords.attempt(creds.username, creds.password, { reactivate: false });
    if (!outcome.ok) throw new GitAuthFailed();
    return { actor: userActor(outcome.user) };
  }

  /**
   * A job token pushes only to its own job's project, and only where ci_push_repository_for_job_token_allowed
   * is on; what it may read elsewhere is the job token scope's to say (the policy, through gitTarget).
   */
  private async checkJobProject(req: FastifyRequest, actor: Actor, write: boolean): Promise<void> {
    if (!write) return;
    const m = TARGET.exec(req.url.split('?')[0]);
    const jobProjectId = actor.jobId === null ? undefined : await this.c.ci.jobs.projectIdOf(actor.jobId);
    if (!m || jobProjectId === undefined) throw new GitAuthFailed();
    let path: string;
    try {
      path = decodeURIComponent(m[1]);
    } catch {
      throw new GitAuthFailed();
    }
    let found = await this.c.resolve.findProjectRow(path);
    if (found && 'moved' in found) found = await this.c.resolve.findProjectRow(found.moved);
    if (!found || 'moved' in found || found.project.id !== jobProjectId) throw new GitAuthFailed();
    if (write && settingsOf(found.project).ci_push_repository_for_job_token_allowed !== true) throw new GitScopeRefused();
  }
}
