// GitLab's API::Entities::SSHKey, SSHKeyWithUser and DeployKeyWithUser (lib/api/entities/ssh_key.rb,
// ssh_key_with_user.rb, deploy_key_with_user.rb). SSHKey shows the publishable key (the comment replaced by
// the owner's name and the host) and no fingerprints; last_used_at is Hearth's addition (GitLab shows it on
// SshKeyWithUserId only).
import { Type, type Static } from 'typebox';
import type { DeployKeyProjectRow, KeyRow } from '../../../db/schema.ts';
import { publishableKey } from '../../../domain/keys/keys.service.ts';
import { NullableString } from '../schemas/common.ts';
import { UserAnySchema, type UserEntity } from './user.entity.ts';

const sshKeyProps = {
  id: Type.Integer(),
  title: Type.String(),
  created_at: Type.String(),
  expires_at: NullableString,
  key: Type.String(),
  usage_type: Type.String(),
  last_used_at: NullableString,
};

export const SshKeySchema = Type.Object(sshKeyProps);
export type SshKeyEntity = Static<typeof SshKeySchema>;

const UserOrNull = Type.Union([UserAnySchema, Type.Null()]);

export const SshKeyWithUserSchema = Type.Object({ ...sshKeyProps, user: UserOrNull });

const DeployKeysProjectSchema = Type.Object({
  id: Type.Integer(),
  deploy_key_id: Type.Integer(),
  project_id: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
  can_push: Type.Boolean(),
});

/** GET /keys?fingerprint=: a user key with its user, or a deploy key with its user and projects. */
export const KeyLookupSchema = Type.Object({
  ...sshKeyProps,
  user: UserOrNull,
  deploy_keys_projects: Type.Optional(Type.Array(DeployKeysProjectSchema)),
});

export function toSshKeyEntity(key: KeyRow, ownerName: string | null, host: string): SshKeyEntity {
  return {
    id: key.id,
    title: key.title,
    created_at: key.created_at,
    expires_at: key.expires_at,
    key: publishableKey(key, ownerName, host),
    usage_type: key.usage_type,
    last_used_at: key.last_used_at,
  };
}

export function toSshKeyWithUserEntity(key: KeyRow, user: (UserEntity & { name: string }) | null, host: string) {
  return { ...toSshKeyEntity(key, user?.name ?? null, host), user };
}

export function toDeployKeysProjectEntity(row: DeployKeyProjectRow) {
  return {
    id: row.id,
    deploy_key_id: row.deploy_key_id,
    project_id: row.project_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    can_push: row.can_push === 1,
  };
}
