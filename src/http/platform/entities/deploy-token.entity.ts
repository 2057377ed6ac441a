// Wire shapes of deploy tokens (GitLab's Entities::DeployToken and DeployTokenWithToken): the secret only in
// the answer to a creation.
import { Type } from 'typebox';
import { deployTokenUsername, isDeployTokenExpired, type DeployTokenView } from '../../../domain/tokens/deploy-tokens.service.ts';
import { NullableString } from '../schemas/common.ts';

const base = {
  id: Type.Integer(),
  name: Type.String(),
  username: Type.String(),
  /** an ISO time, or null */
  expires_at: NullableString,
  scopes: Type.Array(Type.String()),
  revoked: Type.Boolean(),
  expired: Type.Boolean(),
};

export const DeployTokenSchema = Type.Object(base);
export const DeployTokenWithTokenSchema = Type.Object({ ...base, token: Type.String() });

export interface DeployTokenEntity {
  id: number;
  name: string;
  username: string;
  expires_at: string | null;
  scopes: string[];
  revoked: boolean;
  expired: boolean;
  token?: string;
}

export function toDeployTokenEntity(view: DeployTokenView): DeployTokenEntity {
  const r = view.row;
  return {
    id: r.id,
    name: r.name,
    username: deployTokenUsername(r),
    expires_at: r.expires_at,
    scopes: view.scopes,
    revoked: r.revoked === 1,
    expired: isDeployTokenExpired(r),
    ...(view.token ? { token: view.token } : {}),
  };
}
