// Job statuses and failure reasons as GitLab names them (CommitStatus::AVAILABLE_STATUSES,
// Enums::Ci::CommitStatus.failure_reasons).

export const JOB_STATUSES = [
  'created',
  'waiting_for_resource',
  'preparing',
  'waiting_for_callback',
  'pending',
  'running',
  'success',
  'failed',
  'canceling',
  'canceled',
  'skipped',
  'manual',
  'scheduled',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** HasStatus::COMPLETED_STATUSES */
export const COMPLETED_STATUSES = ['success', 'failed', 'canceled', 'skipped'] as const;

/** Ci::HasStatus::CANCELABLE_STATUSES: what `cancel` moves to canceled. */
export const CANCELABLE_STATUSES = ['running', 'waiting_for_resource', 'preparing', 'pending', 'created', 'scheduled', 'waiting_for_callback'] as const;

export const FAILURE_REASONS = [
  'unknown_failure',
  'script_failure',
  'api_failure',
  'stuck_or_timeout_failure',
  'runner_system_failure',
  'missing_dependency_failure',
  'runner_unsupported',
  'stale_schedule',
  'job_execution_timeout',
  'archived_failure',
  'unmet_prerequisites',
  'scheduler_failure',
  'data_integrity_failure',
  'forward_deployment_failure',
  'user_blocked',
  'project_deleted',
  'ci_quota_exceeded',
  'pipeline_loop_detected',
  'no_matching_runner',
  'trace_size_exceeded',
  'builds_disabled',
  'environment_creation_failure',
  'deployment_rejected',
  'failed_outdated_deployment_job',
  'protected_environment_failure',
  'insufficient_bridge_permissions',
  'downstream_bridge_project_not_found',
  'invalid_bridge_trigger',
  'upstream_bridge_project_not_found',
  'insufficient_upstream_permissions',
  'bridge_pipeline_is_child_pipeline',
  'downstream_pipeline_creation_failed',
  'secrets_provider_not_found',
  'reached_max_descendant_pipelines_depth',
  'ip_restriction_failure',
  'reached_max_pipeline_hierarchy_size',
  'reached_downstream_pipeline_trigger_rate_limit',
  'image_pull_failure',
] as const;

/** The failure reasons a runner may report (the job payload's features.failure_reasons). */
export const RUNNER_FAILURE_REASONS = [
  'unknown_failure',
  'script_failure',
  'api_failure',
  'stuck_or_timeout_failure',
  'runner_system_failure',
  'missing_dependency_failure',
  'runner_unsupported',
  'stale_schedule',
  'job_execution_timeout',
  'archived_failure',
  'unmet_prerequisites',
  'scheduler_failure',
  'data_integrity_failure',
  'image_pull_failure',
];
