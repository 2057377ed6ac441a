// Wire shape of deployments (GitLab's Entities::Deployment; DeploymentExtended adds nothing without
// approvals). `deployable` is the CI job that deployed: always null here (deployments come from the API).
import { Type, type Static } from 'typebox';
import type { DeploymentRow, EnvironmentRow } from '../../../db/schema.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { EnvironmentBasicSchema, toEnvironmentBasic } from './environment.entity.ts';
import { toUserRef, UserRefSchema, type UserViewContext } from './user.entity.ts';

export const DeploymentSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  ref: Type.String(),
  sha: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  user: Type.Unsafe<Static<typeof UserRefSchema> | null>({ ...UserRefSchema, type: ['object', 'null'] }),
  environment: Type.Optional(EnvironmentBasicSchema),
  deployable: Type.Null(),
  status: Type.String(),
});
export type DeploymentEntity = Static<typeof DeploymentSchema>;

/** `environment` null: the entity without it (an environment's last_deployment). */
export function toDeployment(d: DeploymentRow, environment: EnvironmentRow | null, user: UserBasicRow | undefined, users: UserViewContext): DeploymentEntity {
  return {
    id: d.id,
    iid: d.iid,
    ref: d.ref,
    sha: d.sha,
    created_at: d.created_at,
    updated_at: d.updated_at,
    user: user ? toUserRef(user, users) : null,
    ...(environment ? { environment: toEnvironmentBasic(environment) } : {}),
    deployable: null,
    status: d.status,
  };
}
