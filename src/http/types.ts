// Route-level configuration read by the plugins, and the request decorations they add.
import type { Actor } from '../domain/access/actor.ts';
import type { Versions } from '../db/versions.ts';

export type ApiKind = 'platform' | 'translation' | 'web' | 'git' | 'health';
export type AuthRule = 'optional' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    api?: ApiKind;
    /** who may call: anonymous allowed (optional), a signed-in user, or an administrator */
    auth?: AuthRule;
    /** token scopes that grant access besides api (and read_api on GET/HEAD) */
    scopes?: string[];
    /** when set, these replace the default scopes entirely (e.g. every scope) */
    onlyScopes?: string[];
    /**
     * A CI job token (JOB-TOKEN header or job_token parameter) is accepted here; on every other route
     * a job token is refused with 401 (GitLab's `allow_access_with_scope` / job-token-enabled endpoints).
     */
    jobToken?: boolean;
    /** a long poll (a runner's POST /jobs/request): it waits on purpose, so its time is never a `slow request` */
    longPoll?: boolean;
  }
  interface FastifyRequest {
    actor: Actor;
    /** this request's snapshot of table versions (read once, on first use) */
    versions(): Promise<Versions>;
    /** the snapshot once taken (null before first use) */
    versionsSnapshot: Promise<Versions> | null;
    /** drops the snapshot, so the next versions() reads again (after this request wrote) */
    forgetVersions(): void;
  }
}
