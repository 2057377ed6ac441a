// GitLab's API::Entities::DeployKey (an SSHKey with the whole key text and its fingerprints; the
// administrators' list adds the projects it may write to and those it may only read) and
// API::Entities::DeployKeysProject (the key merged with the link's can_push).
import { Type, type Static } from 'typebox';
import type { KeyRow } from '../../../db/schema.ts';
import { NullableString } from '../schemas/common.ts';
import { ProjectIdentitySchema } from './job.entity.ts';

const DeployKeyProps = {
  id: Type.Integer(),
  title: Type.String(),
  created_at: Type.String(),
  expires_at: NullableString,
  last_used_at: NullableString,
  key: Type.String(),
  usage_type: Type.String(),
  fingerprint: Type.String(),
  fingerprint_sha256: Type.String(),
};

export const DeployKeySchema = Type.Object(DeployKeyProps);
export type DeployKeyEntity = Static<typeof DeployKeySchema>;

/** GET /deploy_keys: with the projects of each access. */
export const DeployKeyWithProjectsSchema = Type.Object({
  ...DeployKeyProps,
  projects_with_write_access: Type.Array(ProjectIdentitySchema),
  projects_with_readonly_access: Type.Array(ProjectIdentitySchema),
});
export type DeployKeyWithProjectsEntity = Static<typeof DeployKeyWithProjectsSchema>;

export const DeployKeysProjectSchema = Type.Object({ ...DeployKeyProps, can_push: Type.Boolean() });
export type DeployKeysProjectEntity = Static<typeof DeployKeysProjectSchema>;

export function toDeployKeyEntity(k: KeyRow): DeployKeyEntity {
  return {
    id: k.id,
    title: k.title,
    created_at: k.created_at,
    expires_at: k.expires_at,
    last_used_at: k.last_used_at,
    key: k.key,
    usage_type: k.usage_type,
    fingerprint: k.fingerprint,
    fingerprint_sha256: k.fingerprint_sha256,
  };
}

export function toDeployKeysProjectEntity(k: KeyRow, canPush: number | boolean): DeployKeysProjectEntity {
  return { ...toDeployKeyEntity(k), can_push: Boolean(canPush) };
}
