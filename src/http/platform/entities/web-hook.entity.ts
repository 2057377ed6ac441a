// API::Entities::ProjectHook and GroupHook (on API::Entities::Hook): the token is never shown, URL
// variables and custom headers only by their keys, and not at all in lists.
import { Type } from 'typebox';
import type { WebHookRow } from '../../../db/schema.ts';
import { alertStatus } from '../../../domain/hooks/web-hooks.service.ts';
import { NullableString } from '../schemas/common.ts';
import { hookBase } from './system-hook.entity.ts';

const KeyOnly = Type.Array(Type.Object({ key: Type.String() }));

const HookBase = {
  id: Type.Integer(),
  url: Type.String(),
  name: NullableString,
  description: NullableString,
  created_at: Type.String(),
  push_events: Type.Boolean(),
  tag_push_events: Type.Boolean(),
  merge_requests_events: Type.Boolean(),
  repository_update_events: Type.Boolean(),
  enable_ssl_verification: Type.Boolean(),
  alert_status: Type.String(),
  disabled_until: NullableString,
  url_variables: KeyOnly,
  push_events_branch_filter: NullableString,
  branch_filter_strategy: Type.String(),
  custom_webhook_template: NullableString,
  custom_headers: KeyOnly,
};

const flags = (names: string[]) => Object.fromEntries(names.map((n) => [n, Type.Boolean()]));

const PROJECT_FLAGS = [
  'issues_events',
  'confidential_issues_events',
  'note_events',
  'confidential_note_events',
  'pipeline_events',
  'wiki_page_events',
  'deployment_events',
  'feature_flag_events',
  'job_events',
  'releases_events',
  'milestone_events',
  'emoji_events',
  'resource_access_token_events',
  'resource_deploy_token_events',
  'vulnerability_events',
];
const GROUP_FLAGS = [
  'issues_events',
  'confidential_issues_events',
  'note_events',
  'confidential_note_events',
  'pipeline_events',
  'wiki_page_events',
  'job_events',
  'deployment_events',
  'feature_flag_events',
  'releases_events',
  'milestone_events',
  'subgroup_events',
  'emoji_events',
  'resource_access_token_events',
  'member_events',
  'vulnerability_events',
  'project_events',
];

/** fast-json-stringify writes optional properties last: the list variants leave the two out instead. */
const { url_variables: _v, custom_headers: _h, ...ListBase } = HookBase;
export const ProjectHookSchema = Type.Object({ ...HookBase, project_id: Type.Integer(), ...flags(PROJECT_FLAGS) });
export const GroupHookSchema = Type.Object({ ...HookBase, group_id: Type.Integer(), ...flags(GROUP_FLAGS) });
export const ProjectHookListSchema = Type.Object({ ...ListBase, project_id: Type.Integer(), ...flags(PROJECT_FLAGS) });
export const GroupHookListSchema = Type.Object({ ...ListBase, group_id: Type.Integer(), ...flags(GROUP_FLAGS) });

export interface HookSecrets {
  /** the keys of the URL variables and custom headers */
  urlVariables: string[];
  customHeaders: string[];
}

function base(h: WebHookRow, s: HookSecrets) {
  return {
    ...hookBase(h),
    alert_status: alertStatus(h),
    disabled_until: h.disabled_until,
    url_variables: s.urlVariables.map((key) => ({ key })),
    push_events_branch_filter: h.push_events_branch_filter,
    branch_filter_strategy: h.branch_filter_strategy,
    custom_webhook_template: h.custom_webhook_template,
    custom_headers: s.customHeaders.map((key) => ({ key })),
  };
}

const pick = (h: WebHookRow, names: string[]) => Object.fromEntries(names.map((n) => [n, (h as unknown as Record<string, number>)[n] === 1]));
const NONE: HookSecrets = { urlVariables: [], customHeaders: [] };

export function toProjectHookEntity(h: WebHookRow, s: HookSecrets = NONE) {
  return { ...base(h, s), project_id: h.project_id!, ...pick(h, PROJECT_FLAGS) };
}

export function toGroupHookEntity(h: WebHookRow, s: HookSecrets = NONE) {
  return { ...base(h, s), group_id: h.group_id!, ...pick(h, GROUP_FLAGS) };
}
