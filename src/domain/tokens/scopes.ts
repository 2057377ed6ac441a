// Token scopes (reference §3).
export const API_SCOPES = ['api', 'read_api', 'read_user', 'create_runner', 'manage_runner', 'k8s_proxy', 'self_rotate'] as const;
export const REPOSITORY_SCOPES = ['read_repository', 'write_repository'] as const;
export const ADMIN_SCOPES = ['sudo', 'admin_mode', 'read_service_ping'] as const;
export const OAUTH_ONLY_SCOPES = ['openid', 'profile', 'email'] as const;

export const ALL_SCOPES: readonly string[] = [...API_SCOPES, ...REPOSITORY_SCOPES, ...ADMIN_SCOPES];

/** Scopes a token of this user may carry. */
export function availableScopes(isAdmin: boolean): string[] {
  return isAdmin ? [...ALL_SCOPES] : [...API_SCOPES, ...REPOSITORY_SCOPES];
}

/** A token with empty scopes counts as [api]. */
export function effectiveScopes(scopes: string[]): string[] {
  return scopes.length ? scopes : ['api'];
}

/** Scopes allowed on an API route by default: api everywhere, read_api on GET/HEAD, plus the route's extras. */
export function routeScopes(method: string, extra: readonly string[] = []): string[] {
  const base = method === 'GET' || method === 'HEAD' ? ['api', 'read_api'] : ['api'];
  return [...base, ...extra.filter((s) => !base.includes(s))];
}
