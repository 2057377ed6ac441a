// Wire shapes of environments (GitLab's Entities::EnvironmentBasic and Entities::Environment).
import { Type, type Static } from 'typebox';
import type { EnvironmentRow } from '../../../db/schema.ts';
import { NullableString } from '../schemas/common.ts';
import { BasicProjectSchema, type ProjectEntity } from './project.entity.ts';

const basicProps = {
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  external_url: NullableString,
  created_at: Type.String(),
  updated_at: Type.String(),
};

export const EnvironmentBasicSchema = Type.Object(basicProps);
export type EnvironmentBasicEntity = Static<typeof EnvironmentBasicSchema>;

/** Entities::Environment: `project` in lists, `last_deployment` (a Deployment without its environment) for one environment. */
export const EnvironmentSchema = Type.Object({
  ...basicProps,
  tier: Type.String(),
  project: Type.Optional(BasicProjectSchema),
  last_deployment: Type.Optional(Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true })),
  state: Type.String(),
  auto_stop_at: NullableString,
  description: NullableString,
  auto_stop_setting: Type.String(),
});
export type EnvironmentEntity = Static<typeof EnvironmentSchema>;

export function toEnvironmentBasic(e: EnvironmentRow): EnvironmentBasicEntity {
  return { id: e.id, name: e.name, slug: e.slug, external_url: e.external_url, created_at: e.created_at, updated_at: e.updated_at };
}

export function toEnvironment(e: EnvironmentRow, extra: { project?: ProjectEntity; lastDeployment?: Record<string, unknown> | null }): EnvironmentEntity {
  return {
    ...toEnvironmentBasic(e),
    tier: e.tier,
    ...(extra.project ? { project: extra.project as EnvironmentEntity['project'] } : {}),
    ...(extra.lastDeployment !== undefined ? { last_deployment: extra.lastDeployment } : {}),
    state: e.state,
    auto_stop_at: null,
    // not kept here: no description, GitLab's default auto-stop setting
    description: null,
    auto_stop_setting: 'always',
  };
}
