// Wire shapes of personal access tokens and impersonation tokens (GitLab's Entities::PersonalAccessToken,
// …WithToken, …WithLastUsedIps, ImpersonationToken, ImpersonationTokenWithToken). The secret appears
// only in the *WithToken shapes, i.e. right after creation or rotation.
import { Type } from 'typebox';
import type { TokenView } from '../../../domain/tokens/tokens.service.ts';
import { NullableString } from '../schemas/common.ts';

const base = {
  id: Type.Integer(),
  name: Type.String(),
  revoked: Type.Boolean(),
  created_at: Type.String(),
  description: NullableString,
  scopes: Type.Array(Type.String()),
  user_id: Type.Integer(),
  last_used_at: NullableString,
  active: Type.Boolean(),
  /** a date, YYYY-MM-DD */
  expires_at: NullableString,
};

export const PersonalAccessTokenSchema = Type.Object(base);
export const PersonalAccessTokenWithTokenSchema = Type.Object({ ...base, token: Type.String() });
export const PersonalAccessTokenWithLastUsedIpsSchema = Type.Object({ ...base, last_used_ips: Type.Array(Type.String()) });
/** Entities::ResourceAccessToken(WithToken): a project or group access token with its bot's level. */
export const ResourceAccessTokenSchema = Type.Object({ ...base, access_level: Type.Integer() });
export const ResourceAccessTokenWithTokenSchema = Type.Object({ ...base, access_level: Type.Integer(), token: Type.String() });
export const ImpersonationTokenSchema = Type.Object({ ...base, last_used_ips: Type.Array(Type.String()), impersonation: Type.Boolean() });
export const ImpersonationTokenWithTokenSchema = Type.Object({ ...base, token: Type.String(), impersonation: Type.Boolean() });

export interface TokenEntity {
  id: number;
  name: string;
  revoked: boolean;
  created_at: string;
  description: string | null;
  scopes: string[];
  user_id: number;
  last_used_at: string | null;
  active: boolean;
  expires_at: string | null;
  token?: string;
  last_used_ips: string[];
  impersonation: boolean;
}

/** Every field any token shape may show; the route's response schema picks the ones it declares. */
export function toTokenEntity(view: TokenView): TokenEntity {
  const r = view.row;
  return {
    id: r.id,
    name: r.name,
    revoked: r.revoked === 1,
    created_at: r.created_at,
    description: r.description,
    scopes: view.scopes,
    user_id: r.user_id,
    last_used_at: r.last_used_at,
    active: view.active,
    expires_at: r.expires_at,
    ...(view.token ? { token: view.token } : {}),
    // Hearth does not record client addresses per token.
    last_used_ips: [],
    impersonation: r.impersonation === 1,
  };
}

/** The shapes with the secret: only right after creation or rotation. */
export function toTokenWithSecretEntity(view: TokenView): TokenEntity & { token: string } {
  if (!view.token) throw new Error('the token secret is only known right after creation or rotation');
  return { ...toTokenEntity(view), token: view.token };
}
