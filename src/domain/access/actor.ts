// Who is calling: resolved once per request by the auth plugin, passed first to every service.
import type { UserRow } from '../../db/schema.ts';

export type ActorKind = 'anonymous' | 'user' | 'job' | 'runner';
export type CredentialKind = 'none' | 'personal_access_token' | 'impersonation_token' | 'oauth' | 'session' | 'job_token' | 'runner_token';

export interface Actor {
  kind: ActorKind;
  user: UserRow | null;
  /** administrator and, when the admin_mode setting is on, the credential allows admin mode */
  isAdmin: boolean;
  /** token scopes; null for a session (every ability of the user) or anonymous */
  scopes: string[] | null;
  credential: CredentialKind;
  tokenId: number | null;
  /** the administrator who acts through Sudo */
  sudoFrom: UserRow | null;
  /** for impersonation tokens: true */
  impersonated: boolean;
  /** job actor: the job id (the CI issue fills this in) */
  jobId: number | null;
}

export const ANONYMOUS: Actor = Object.freeze({
  kind: 'anonymous',
  user: null,
  isAdmin: false,
  scopes: null,
  credential: 'none',
  tokenId: null,
  sudoFrom: null,
  impersonated: false,
  jobId: null,
}) as Actor;

/**
 * Who the actor is for caches of what they may see: kind, user, admin mode and job. The user's row
 * itself (external, state…) is covered by the `users` table version of the cache entry.
 */
export function actorKey(a: Actor): string {
  return `${a.kind}:${a.user?.id ?? 0}:${a.isAdmin ? 1 : 0}:${a.jobId ?? ''}`;
}

export function userActor(user: UserRow, opts: Partial<Actor> = {}): Actor {
  return {
    kind: 'user',
    user,
    isAdmin: user.is_admin === 1,
    scopes: null,
    credential: 'session',
    tokenId: null,
    sudoFrom: null,
    impersonated: false,
    jobId: null,
    ...opts,
  };
}
