// Wire shape of pipelines (GitLab's Entities::Ci::PipelineBasic, Pipeline, PipelineWithMetadata and the
// DetailedStatusEntity of a pipeline). `projectWebUrl` is the project's web URL
// (`<external_url>/<full path>`), the base of web_url and details_path.
import { Type, type Static } from 'typebox';
import type { CiPipelineRow } from '../../../db/schema.ts';
import type { UserBasicRow } from '../../../domain/core/user-columns.ts';
import { toUserBasic, UserBasicSchema, type UserViewContext } from './user.entity.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

export const PipelineBasicSchema = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  sha: Type.String(),
  ref: Type.String(),
  status: Type.String(),
  source: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  web_url: Type.String(),
});
export type PipelineBasicEntity = Static<typeof PipelineBasicSchema>;

/** the list entity (PipelineBasic with the pipeline's name, null without workflow:name) */
export const PipelineListSchema = Type.Object({ ...PipelineBasicSchema.properties, name: NullableString });
export type PipelineListEntity = Static<typeof PipelineListSchema>;

export const DetailedStatusSchema = Type.Object({
  icon: Type.String(),
  text: Type.String(),
  label: Type.String(),
  group: Type.String(),
  tooltip: Type.String(),
  has_details: Type.Boolean(),
  details_path: Type.String(),
  illustration: Type.Null(),
  favicon: Type.String(),
});
export type DetailedStatusEntity = Static<typeof DetailedStatusSchema>;

export const PipelineSchema = Type.Object({
  ...PipelineBasicSchema.properties,
  before_sha: Type.String(),
  tag: Type.Boolean(),
  yaml_errors: NullableString,
  user: Type.Unsafe<Static<typeof UserBasicSchema> | null>({ ...UserBasicSchema, type: ['object', 'null'] }),
  started_at: NullableString,
  finished_at: NullableString,
  committed_at: NullableString,
  duration: NullableNumber,
  queued_duration: NullableNumber,
  coverage: NullableString,
  detailed_status: DetailedStatusSchema,
  name: NullableString,
  archived: Type.Boolean(),
});
export type PipelineEntity = Static<typeof PipelineSchema>;

const ZERO_SHA = '0000000000000000000000000000000000000000';

/** Gitlab::Ci::Status::* of a pipeline (Pipeline::Blocked for manual): icon, text, label */
const STATUS_TEXT: Record<string, [string, string]> = {
  created: ['Created', 'created'],
  waiting_for_resource: ['Waiting', 'waiting for resource'],
  preparing: ['Preparing', 'preparing'],
  pending: ['Pending', 'pending'],
  running: ['Running', 'running'],
  success: ['Passed', 'passed'],
  failed: ['Failed', 'failed'],
  canceled: ['Canceled', 'canceled'],
  canceling: ['Canceling', 'canceling'],
  skipped: ['Skipped', 'skipped'],
  manual: ['Blocked', 'waiting for manual action'],
  scheduled: ['Scheduled', 'waiting for delayed job'],
};

export function pipelineWebUrl(p: Pick<CiPipelineRow, 'id'>, projectWebUrl: string): string {
  return `${projectWebUrl}/-/pipelines/${p.id}`;
}

export function toDetailedStatus(status: string, detailsUrl: string): DetailedStatusEntity {
  const [text, label] = STATUS_TEXT[status] ?? [status, status];
  const group = status;
  const icon = status === 'manual' ? 'status_manual' : `status_${status}`;
  let path = detailsUrl;
  try {
    path = new URL(detailsUrl).pathname;
  } catch {
    // a relative URL already
  }
  return {
    icon,
    text,
    label,
    group,
    tooltip: label,
    has_details: true,
    details_path: path,
    illustration: null,
    favicon: `/assets/ci_favicons/favicon_${icon}.png`,
  };
}

export function toPipelineBasic(p: CiPipelineRow, projectWebUrl: string): PipelineBasicEntity {
  return {
    id: p.id,
    iid: p.iid,
    project_id: p.project_id,
    sha: p.sha,
    ref: p.ref,
    status: p.status,
    source: p.source,
    created_at: p.created_at,
    updated_at: p.updated_at,
    web_url: pipelineWebUrl(p, projectWebUrl),
  };
}

export function toPipelineListItem(p: CiPipelineRow, projectWebUrl: string, name: string | null = null): PipelineListEntity {
  return { ...toPipelineBasic(p, projectWebUrl), name };
}

export function toPipeline(
  p: CiPipelineRow,
  projectWebUrl: string,
  user: UserBasicRow | undefined,
  users: UserViewContext,
  extra: { name?: string | null; archived?: boolean } = {},
): PipelineEntity {
  const web = pipelineWebUrl(p, projectWebUrl);
  return {
    ...toPipelineBasic(p, projectWebUrl),
    before_sha: p.before_sha ?? ZERO_SHA,
    tag: p.tag === 1,
    yaml_errors: p.yaml_errors,
    user: user ? toUserBasic(user, users) : null,
    started_at: p.started_at,
    finished_at: p.finished_at,
    committed_at: p.committed_at,
    duration: p.duration,
    queued_duration: p.queued_duration,
    coverage: p.coverage,
    detailed_status: toDetailedStatus(p.status, web),
    name: extra.name ?? null,
    archived: extra.archived ?? false,
  };
}
