// API::Entities::Hook for system hooks (reference §5), and API::Entities::WebHookLog for their attempts.
import { Type } from 'typebox';
import type { HookAttemptRow, SystemHookRow } from '../../../db/schema.ts';
import { maskUrl } from '../../../lib/outbound.ts';

const KeyValue = Type.Object({ key: Type.String() });

export const SystemHookSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  push_events: Type.Boolean(),
  tag_push_events: Type.Boolean(),
  merge_requests_events: Type.Boolean(),
  repository_update_events: Type.Boolean(),
  enable_ssl_verification: Type.Boolean(),
  alert_status: Type.String(),
  disabled_until: Type.Null(),
  url_variables: Type.Array(KeyValue),
  push_events_branch_filter: Type.Union([Type.String(), Type.Null()]),
  branch_filter_strategy: Type.String(),
  custom_webhook_template: Type.Null(),
  custom_headers: Type.Array(KeyValue),
});

/** The fields every hook entity begins with (API::Entities::Hook), system and web hooks alike. */
export function hookBase(h: Omit<SystemHookRow, 'token_encrypted' | 'updated_at' | 'push_events_branch_filter' | 'branch_filter_strategy'>) {
  return {
    id: h.id,
    url: maskUrl(h.url),
    name: h.name,
    description: h.description,
    created_at: h.created_at,
    push_events: h.push_events === 1,
    tag_push_events: h.tag_push_events === 1,
    merge_requests_events: h.merge_requests_events === 1,
    repository_update_events: h.repository_update_events === 1,
    enable_ssl_verification: h.enable_ssl_verification === 1,
  };
}

/** The token is never shown, nor a password in the URL's userinfo. System hooks are never auto-disabled. */
export function toSystemHookEntity(h: SystemHookRow) {
  return {
    ...hookBase(h),
    alert_status: 'executable',
    disabled_until: null,
    url_variables: [],
    push_events_branch_filter: h.push_events_branch_filter,
    branch_filter_strategy: h.branch_filter_strategy,
    custom_webhook_template: null,
    custom_headers: [],
  };
}

export const HookAttemptSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  trigger: Type.String(),
  request_headers: Type.Record(Type.String(), Type.String()),
  request_data: Type.Unknown(),
  response_headers: Type.Record(Type.String(), Type.String()),
  response_body: Type.String(),
  execution_duration: Type.Number(),
  response_status: Type.String(),
  created_at: Type.String(),
  // beyond GitLab's WebHookLog
  event_name: Type.String(),
  delivery_id: Type.Integer(),
  attempt: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  idempotency_key: Type.String(),
  delivery_state: Type.String(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
});

/** GitLab's hook scope names for the `trigger` field. */
const TRIGGERS: Record<string, string> = {
  push: 'push_hooks',
  tag_push: 'tag_push_hooks',
  merge_request: 'merge_request_hooks',
  repository_update: 'repository_update_hooks',
  note: 'note_hooks',
  pipeline: 'pipeline_hooks',
  build: 'job_hooks',
};

export type AttemptListRow = HookAttemptRow & { event_name: string; payload: string; idempotency_key: string; delivery_state: string; delivery_run_at: string };

export function toHookAttemptEntity(a: AttemptListRow) {
  return {
    id: a.id,
    url: a.url,
    trigger: TRIGGERS[a.event_name] ?? 'system_hooks',
    request_headers: JSON.parse(a.request_headers) as Record<string, string>,
    request_data: JSON.parse(a.payload) as unknown,
    response_headers: JSON.parse(a.response_headers) as Record<string, string>,
    response_body: a.response_body,
    execution_duration: a.duration_ms / 1000,
    response_status: a.response_status,
    created_at: a.created_at,
    event_name: a.event_name,
    delivery_id: a.delivery_id,
    attempt: a.attempt,
    error: a.error,
    idempotency_key: a.idempotency_key,
    delivery_state: a.delivery_state,
    next_attempt_at: a.delivery_state === 'pending' ? a.delivery_run_at : null,
  };
}
