// Wire shapes of runners (GitLab's Entities::Ci::Runner and Entities::Ci::RunnerDetails), as the spec's
// Runner record lists them. Deprecated fields keep their place: `active` (= !paused) and `ip_address`,
// which is always "" (Versioning). `status` and `online` depend on the clock: computed at render time.
import { Type, type Static } from 'typebox';
import type { CiRunnerRow } from '../../../db/schema.ts';
import { NullableInteger, NullableString } from '../schemas/common.ts';
import { UserRefSchema, type UserRef } from './user.entity.ts';

export const RUNNER_TYPES = ['instance_type', 'group_type', 'project_type'] as const;
export type RunnerType = (typeof RUNNER_TYPES)[number];
export type RunnerStatus = 'online' | 'offline' | 'stale' | 'never_contacted';

/** Ci::Runner::ONLINE_CONTACT_TIMEOUT and STALE_TIMEOUT. */
export const ONLINE_CONTACT_TIMEOUT_MS = 2 * 3600_000;
export const STALE_TIMEOUT_MS = 7 * 86_400_000;

/**
 * Ci::Runner#status: stale (max(created_at, contacted_at) at least 7 days ago) wins over
 * never_contacted, then online (contact within 2 hours), else offline.
 */
export function runnerStatus(r: Pick<CiRunnerRow, 'created_at' | 'contacted_at'>, now = Date.now()): RunnerStatus {
  const created = Date.parse(r.created_at);
  const contacted = r.contacted_at ? Date.parse(r.contacted_at) : null;
  const latest = contacted === null ? created : Math.max(created, contacted);
  if (latest <= now - STALE_TIMEOUT_MS) return 'stale';
  if (contacted === null) return 'never_contacted';
  return contacted > now - ONLINE_CONTACT_TIMEOUT_MS ? 'online' : 'offline';
}

export function runnerOnline(r: Pick<CiRunnerRow, 'contacted_at'>, now = Date.now()): boolean {
  return !!r.contacted_at && Date.parse(r.contacted_at) > now - ONLINE_CONTACT_TIMEOUT_MS;
}

const listProps = {
  id: Type.Integer(),
  description: Type.String(),
  ip_address: Type.String(),
  active: Type.Boolean(),
  paused: Type.Boolean(),
  is_shared: Type.Boolean(),
  runner_type: Type.String(),
  name: NullableString,
  online: Type.Boolean(),
  created_by: Type.Optional(UserRefSchema),
  created_at: Type.String(),
  status: Type.String(),
};

/** Entities::Ci::Runner (lists, and the `runner` of a job). */
export const RunnerSchema = Type.Object(listProps);
export type RunnerEntity = Static<typeof RunnerSchema>;

const RunnerProjectSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  name_with_namespace: Type.String(),
  path: Type.String(),
  path_with_namespace: Type.String(),
});
const RunnerGroupSchema = Type.Object({ id: Type.Integer(), web_url: Type.String(), name: Type.String() });
export type RunnerProject = Static<typeof RunnerProjectSchema>;
export type RunnerGroup = Static<typeof RunnerGroupSchema>;

/** Entities::Ci::RunnerDetails (GET/PUT /runners/:id). */
export const RunnerDetailsSchema = Type.Object({
  ...listProps,
  tag_list: Type.Array(Type.String()),
  run_untagged: Type.Boolean(),
  locked: Type.Boolean(),
  maximum_timeout: NullableInteger,
  access_level: Type.String(),
  version: NullableString,
  revision: NullableString,
  platform: NullableString,
  architecture: NullableString,
  contacted_at: NullableString,
  maintenance_note: NullableString,
  projects: Type.Array(RunnerProjectSchema),
  groups: Type.Array(RunnerGroupSchema),
});
export type RunnerDetailsEntity = Static<typeof RunnerDetailsSchema>;

export interface RunnerViewOptions {
  /** milliseconds since the epoch (one value per request, so a list is consistent) */
  now?: number;
  /** the creator, when the caller may see them (GitLab: `read_user` on the creator) */
  createdBy?: UserRef | null;
}

/** The list view. */
export function toRunner(r: CiRunnerRow, opts: RunnerViewOptions = {}): RunnerEntity {
  const now = opts.now ?? Date.now();
  return {
    id: r.id,
    description: r.description,
    ip_address: '',
    active: r.active === 1,
    paused: r.active !== 1,
    is_shared: r.runner_type === 'instance_type',
    runner_type: r.runner_type,
    name: r.name,
    online: runnerOnline(r, now),
    ...(opts.createdBy ? { created_by: opts.createdBy } : {}),
    created_at: r.created_at,
    status: runnerStatus(r, now),
  };
}

export interface RunnerDetailsOptions extends RunnerViewOptions {
  /** the associated projects the caller may see (all of them for administrators) */
  projects: RunnerProject[];
  /** the associated groups the caller may see */
  groups: RunnerGroup[];
  /** maintenance_note is shown only to those who may update the runner (null otherwise) */
  canUpdate: boolean;
}

export function parseTagList(json: string): string[] {
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

export function toRunnerDetails(r: CiRunnerRow, opts: RunnerDetailsOptions): RunnerDetailsEntity {
  return {
    ...toRunner(r, opts),
    tag_list: parseTagList(r.tag_list),
    run_untagged: r.run_untagged === 1,
    locked: r.locked === 1,
    maximum_timeout: r.maximum_timeout,
    access_level: r.access_level,
    version: r.version,
    revision: r.revision,
    platform: r.platform,
    architecture: r.architecture,
    contacted_at: r.contacted_at,
    maintenance_note: opts.canUpdate ? r.maintenance_note : null,
    projects: opts.projects,
    groups: opts.groups,
  };
}
