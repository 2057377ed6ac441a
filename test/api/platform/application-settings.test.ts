import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildTestApp } from '../../helpers/build-app.ts';
import type { Container } from '../../../src/container.ts';
import { SETTABLE } from '../../../src/domain/settings/settings-update.ts';

const URL = '/api/v4/application/settings';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** GitLab's defaults (application_setting_implementation.rb) as the API returns them. */
const DEFAULTS: Record<string, unknown> = {
  id: 1,
  abuse_notification_email: null,
  admin_mode: false,
  admin_notification_email: null,
  after_sign_out_path: null,
  after_sign_up_text: null,
  akismet_enabled: false,
  allow_account_deletion: true,
  allow_group_owners_to_manage_ldap: true,
  allow_local_requests_from_hooks_and_services: false,
  allow_local_requests_from_system_hooks: true,
  allow_local_requests_from_web_hooks_and_services: false,
  asset_proxy_allowlist: [],
  asset_proxy_enabled: false,
  asset_proxy_url: null,
  asset_proxy_whitelist: [],
  bulk_import_concurrent_pipeline_batch_limit: 25,
  bulk_import_max_download_file_size: 5120,
  can_create_group: true,
  concurrent_bitbucket_import_jobs_limit: 100,
  concurrent_bitbucket_server_import_jobs_limit: 100,
  concurrent_github_import_jobs_limit: 1000,
  container_expiration_policies_enable_historic_entries: false,
  container_registry_cleanup_tags_service_max_list_size: 200,
  container_registry_delete_tags_service_timeout: 250,
  container_registry_expiration_policies_caching: true,
  container_registry_expiration_policies_worker_capacity: 4,
  container_registry_token_expire_delay: 5,
  decompress_archive_file_timeout: 210,
  default_artifacts_expire_in: '30 days',
  default_branch_protection: 2,
  default_branch_protection_defaults: {
    allowed_to_push: [{ access_level: 40 }],
    allow_force_push: false,
    allowed_to_merge: [{ access_level: 40 }],
    developer_can_initial_push: false,
  },
  default_ci_config_path: null,
  default_group_visibility: 'private',
  default_preferred_language: 'en',
  default_project_deletion_protection: false,
  default_project_visibility: 'private',
  default_projects_limit: 100000,
  default_snippet_visibility: 'private',
  delete_unconfirmed_users: false,
  deletion_adjourned_period: 7,
  diagramsnet_enabled: true,
  diagramsnet_url: 'https://embed.diagrams.net',
  diff_max_files: 1000,
  diff_max_lines: 50000,
  diff_max_patch_bytes: 204800,
  disable_personal_access_tokens: false,
  domain_allowlist: [],
  domain_denylist: [],
  domain_denylist_enabled: false,
  downstream_pipeline_trigger_limit_per_project_user_sha: 0,
  dsa_key_restriction: 0,
  duo_features_enabled: true,
  ecdsa_key_restriction: 0,
  ecdsa_sk_key_restriction: 0,
  ed25519_key_restriction: 0,
  ed25519_sk_key_restriction: 0,
  email_restrictions: null,
  email_restrictions_enabled: false,
  enforce_terms: false,
  external_authorization_service_default_label: null,
  external_authorization_service_enabled: false,
  external_authorization_service_timeout: 0.5,
  external_authorization_service_url: null,
  external_pipeline_validation_service_timeout: null,
  external_pipeline_validation_service_token: null,
  external_pipeline_validation_service_url: null,
  failed_login_attempts_unlock_period_in_minutes: null,
  file_template_project_id: null,
  first_day_of_week: 0,
  floc_enabled: false,
  geo_node_allowed_ips: '0.0.0.0/0, ::/0',
  geo_status_timeout: 10,
  globally_allowed_ips: '',
  gravatar_enabled: true,
  group_owners_can_manage_default_branch_protection: true,
  home_page_url: null,
  housekeeping_bitmaps_enabled: true,
  housekeeping_enabled: true,
  housekeeping_full_repack_period: 10,
  housekeeping_gc_period: 10,
  housekeeping_incremental_repack_period: 10,
  housekeeping_optimize_repository_period: 10,
  import_sources: ['github', 'bitbucket', 'bitbucket_server', 'fogbugz', 'git', 'gitlab_project', 'gitea', 'manifest'],
  issues_create_limit: 300,
  keep_latest_artifact: true,
  kroki_enabled: false,
  kroki_url: null,
  local_markdown_version: 0,
  lock_duo_features_enabled: false,
  maven_package_requests_forwarding: true,
  max_artifacts_size: 100,
  max_attachment_size: 100,
  max_decompressed_archive_size: 25600,
  max_export_size: 0,
  max_import_remote_file_size: 10240,
  max_import_size: 0,
  max_login_attempts: null,
  notify_on_unknown_sign_in: true,
  npm_package_requests_forwarding: true,
  outbound_local_requests_whitelist: [],
  package_registry_allow_anyone_to_pull_option: true,
  package_registry_cleanup_policies_worker_capacity: 2,
  password_authentication_enabled: true,
  password_authentication_enabled_for_git: true,
  password_authentication_enabled_for_web: true,
  performance_bar_allowed_group_id: null,
  personal_access_token_prefix: 'glpat-',
  plantuml_enabled: false,
  plantuml_url: null,
  polling_interval_multiplier: 1,
  project_jobs_api_rate_limit: 600,
  projects_api_rate_limit_unauthenticated: 400,
  pypi_package_requests_forwarding: true,
  push_event_hooks_limit: 3,
  rate_limiting_response_text: null,
  raw_blob_request_limit: 300,
  recaptcha_enabled: false,
  repository_storages_weighted: { default: 100 },
  require_admin_approval_after_user_signup: true,
  require_personal_access_token_expiry: true,
  require_two_factor_authentication: false,
  restricted_visibility_levels: [],
  rsa_key_restriction: 0,
  search_rate_limit: 300,
  search_rate_limit_unauthenticated: 100,
  security_approval_policies_limit: 5,
  security_policy_global_group_approvers_enabled: true,
  security_txt_content: null,
  session_expire_delay: 10080,
  signin_enabled: true,
  signup_enabled: true,
  silent_admin_exports_enabled: false,
  project_export_enabled: true,
  silent_mode_enabled: false,
  snippet_size_limit: 52428800,
  terminal_max_session_time: 0,
  terms: null,
  throttle_authenticated_api_enabled: false,
  throttle_authenticated_api_period_in_seconds: 3600,
  throttle_authenticated_api_requests_per_period: 7200,
  throttle_unauthenticated_api_enabled: false,
  throttle_unauthenticated_api_period_in_seconds: 3600,
  throttle_unauthenticated_api_requests_per_period: 3600,
  two_factor_grace_period: 48,
  unconfirmed_users_delete_after_days: 7,
  updating_name_disabled_for_users: false,
  user_defaults_to_private_profile: false,
  user_oauth_applications: true,
  user_show_add_ssh_key_message: true,
  wiki_page_max_content_bytes: 52428800,
  // other settings GitLab documents (stored and returned)
  allow_project_creation_for_guest_and_below: true,
  allow_runner_registration_token: true,
  asciidoc_max_includes: 32,
  authorized_keys_enabled: true,
  auto_devops_domain: null,
  auto_devops_enabled: true,
  bulk_import_enabled: false,
  commit_email_hostname: null,
  deactivate_dormant_users: false,
  deactivate_dormant_users_period: 90,
  default_branch_name: null,
  default_project_creation: 2,
  disabled_oauth_sign_in_sources: [],
  dns_rebinding_protection_enabled: true,
  email_author_in_body: false,
  email_confirmation_setting: 'off',
  gitaly_timeout_default: 55,
  gitaly_timeout_fast: 10,
  gitaly_timeout_medium: 30,
  help_page_documentation_base_url: null,
  help_page_hide_commercial_content: false,
  help_page_support_url: null,
  help_page_text: null,
  hide_third_party_offers: false,
  html_emails_enabled: true,
  invisible_captcha_enabled: false,
  math_rendering_limits_enabled: true,
  max_pages_size: 100,
  max_personal_access_token_lifetime: null,
  minimum_password_length: 8,
  mirror_available: true,
  protected_ci_variables: true,
  push_event_activities_limit: 3,
  receive_max_input_size: null,
  repository_checks_enabled: true,
  shared_runners_enabled: true,
  shared_runners_text: null,
  suggest_pipeline_enabled: true,
  throttle_authenticated_web_enabled: false,
  throttle_authenticated_web_period_in_seconds: 3600,
  throttle_authenticated_web_requests_per_period: 7200,
  throttle_unauthenticated_enabled: false,
  throttle_unauthenticated_period_in_seconds: 3600,
  throttle_unauthenticated_requests_per_period: 3600,
  throttle_unauthenticated_web_enabled: false,
  throttle_unauthenticated_web_period_in_seconds: 3600,
  throttle_unauthenticated_web_requests_per_period: 3600,
  time_tracking_limit_to_hours: false,
  unique_ips_limit_enabled: false,
  unique_ips_limit_per_user: 10,
  unique_ips_limit_time_window: 3600,
  usage_ping_enabled: true,
  user_deactivation_emails_enabled: true,
  user_default_external: false,
  user_default_internal_regex: null,
  version_check_enabled: true,
};

type Inject = InjectOptions;

async function put(app: FastifyInstance, headers: Record<string, string>, opts: Partial<Inject> = {}) {
  return app.inject({ method: 'PUT', url: URL, headers, ...opts });
}

function form(headers: Record<string, string>, body: string): Partial<Inject> {
  return { headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: body };
}

async function storedRow(c: Container): Promise<Record<string, unknown>> {
  const row = await c.db.kysely.selectFrom('application_settings').selectAll().executeTakeFirstOrThrow();
  return JSON.parse(row.settings);
}

/** The response without its timestamps. */
function body(res: { json(): any }): Record<string, unknown> {
  const { created_at, updated_at, ...rest } = res.json();
  assert.match(created_at, ISO);
  assert.match(updated_at, ISO);
  return rest;
}

test('GET returns every setting with GitLab defaults, legacy aliases, no secrets and no removed settings', async (t) => {
  const { app, root } = await buildTestApp(t);
  const res = await app.inject({ method: 'GET', url: URL, headers: root });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(body(res), DEFAULTS);
  const keys = Object.keys(res.json());
  for (const secret of ['akismet_api_key', 'recaptcha_private_key', 'recaptcha_site_key', 'asset_proxy_secret_key']) assert.ok(!keys.includes(secret), secret);
  for (const removed of [
    'delayed_project_deletion',
    'delayed_group_deletion',
    'in_product_marketing_emails_enabled',
    'repository_storages',
    'user_email_lookup_limit',
  ]) {
    assert.ok(!keys.includes(removed), removed);
  }
  assert.ok(!keys.includes('domain_whitelist') && !keys.includes('domain_blacklist'));
});

test('administrators only: anonymous 401, users 403, admin tokens without admin_mode scope 403 while admin_mode is on', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  for (const method of ['GET', 'PUT'] as const) {
    const anon = await app.inject({ method, url: `${URL}?signup_enabled=false` });
    assert.equal(anon.statusCode, 401);
    assert.deepEqual(anon.json(), { message: '401 Unauthorized' });
  }
  const user = await seed.user();
  const tok = await seed.token(user, { scopes: ['api'] });
  for (const method of ['GET', 'PUT'] as const) {
    const res = await app.inject({ method, url: `${URL}?signup_enabled=false`, headers: tok.headers });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
  }

  const admin = await seed.user({ is_admin: true });
  const plain = await seed.token(admin, { scopes: ['api'] });
  const withMode = await seed.token(admin, { scopes: ['api', 'admin_mode'] });
  assert.equal((await app.inject({ method: 'GET', url: URL, headers: plain.headers })).statusCode, 200);

  const on = await put(app, root, { payload: { admin_mode: true } });
  assert.equal(on.statusCode, 200);
  assert.equal(on.json().admin_mode, true);
  for (const method of ['GET', 'PUT'] as const) {
    const res = await app.inject({ method, url: `${URL}?signup_enabled=false`, headers: plain.headers });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
  }
  assert.equal((await storedRow(c)).signup_enabled, undefined);
  const ok = await app.inject({ method: 'GET', url: URL, headers: withMode.headers });
  assert.equal(ok.statusCode, 200);

  // read_api allows GET only
  const ro = await seed.token(admin, { scopes: ['read_api', 'admin_mode'] });
  assert.equal((await app.inject({ method: 'GET', url: URL, headers: ro.headers })).statusCode, 200);
  const roPut = await app.inject({ method: 'PUT', url: `${URL}?signup_enabled=false`, headers: ro.headers });
  assert.equal(roPut.statusCode, 403);
  assert.equal(roPut.json().error, 'insufficient_scope');
});

test('PUT with query parameters: 200 with the whole record; GET, the DB row and the service agree', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const before = (await app.inject({ method: 'GET', url: URL, headers: root })).json();
  const res = await put(app, root, {
    url: `${URL}?signup_enabled=false&default_project_visibility=internal&max_attachment_size=25&polling_interval_multiplier=1.5`,
  });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  const expected = { ...DEFAULTS, signup_enabled: false, default_project_visibility: 'internal', max_attachment_size: 25, polling_interval_multiplier: 1.5 };
  assert.deepEqual(body(res), expected);
  assert.equal(res.json().created_at, before.created_at);
  assert.ok(res.json().updated_at >= before.updated_at);

  const get = await app.inject({ method: 'GET', url: URL, headers: root });
  assert.deepEqual(get.json(), res.json());
  assert.deepEqual(await storedRow(c), {
    signup_enabled: false,
    default_project_visibility: 'internal',
    max_attachment_size: 25,
    polling_interval_multiplier: 1.5,
  });
  // visible at once in this process (the cache was replaced by the save)
  const s = await c.settings.get();
  assert.equal(s.signup_enabled, false);
  assert.equal(s.max_attachment_size, 25);
});

test('PUT with a JSON body, a form body and a multipart body; body wins over query; unknown parameters ignored', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  let res = await put(app, root, {
    url: `${URL}?signup_enabled=true`,
    payload: { signup_enabled: false, max_login_attempts: 5, home_page_url: 'https://example.com/welcome', no_such_setting: 1 },
  });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(body(res), { ...DEFAULTS, signup_enabled: false, max_login_attempts: 5, home_page_url: 'https://example.com/welcome' });

  res = await put(app, root, form(root, 'can_create_group=0&default_projects_limit=12&after_sign_up_text=Welcome%21&user_defaults_to_private_profile=yes'));
  assert.equal(res.statusCode, 200);
  const b = res.json();
  assert.equal(b.can_create_group, false);
  assert.equal(b.default_projects_limit, 12);
  assert.equal(b.after_sign_up_text, 'Welcome!');
  assert.equal(b.user_defaults_to_private_profile, true);

  const boundary = 'hearthboundary';
  const parts = [
    ['signup_enabled', 'true'],
    ['first_day_of_week', '1'],
    ['default_branch_protection_defaults[allow_force_push]', 'true'],
    ['default_branch_protection_defaults[allowed_to_push][0][access_level]', '30'],
  ];
  const payload = parts.map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('') + `--${boundary}--\r\n`;
  res = await put(app, root, { headers: { ...root, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().signup_enabled, true);
  assert.equal(res.json().first_day_of_week, 1);
  assert.deepEqual(res.json().default_branch_protection_defaults, { allowed_to_push: [{ access_level: 30 }], allow_force_push: true });

  assert.deepEqual(await storedRow(c), {
    signup_enabled: true,
    max_login_attempts: 5,
    home_page_url: 'https://example.com/welcome',
    can_create_group: false,
    default_projects_limit: 12,
    after_sign_up_text: 'Welcome!',
    user_defaults_to_private_profile: true,
    first_day_of_week: 1,
    default_branch_protection_defaults: { allowed_to_push: [{ access_level: 30 }], allow_force_push: true },
  });
});

test('no settable parameter: 400 listing every settable attribute', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  for (const opts of [{}, { payload: {} }] as Partial<Inject>[]) {
    const res = await put(app, root, opts);
    assert.equal(res.statusCode, 400);
    const error: string = res.json().error;
    assert.deepEqual(Object.keys(res.json()), ['error']);
    assert.ok(error.startsWith('abuse_notification_email, admin_mode, admin_notification_email, after_sign_out_path, '), error.slice(0, 120));
    assert.ok(error.endsWith(', wiki_page_max_content_bytes are missing, at least one parameter must be provided'), error.slice(-120));
    assert.equal(error, `${SETTABLE.join(', ')} are missing, at least one parameter must be provided`);
    for (const name of ['signin_enabled', 'asset_proxy_whitelist', 'restricted_visibility_levels', 'throttle_authenticated_api_enabled'])
      assert.ok(error.includes(`, ${name}, `), name);
    assert.ok(!error.includes('delayed_project_deletion'));
  }
  assert.deepEqual(await storedRow(c), {});
});

test('only parameters that are no settings: 400 naming them, not every setting', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const cases: [Partial<Inject>, string][] = [
    [{ url: `${URL}?foo=1&delayed_project_deletion=true&domain_whitelist=a.com` }, 'foo, delayed_project_deletion, domain_whitelist are not settings'],
    [{ payload: { default_branch: 'trunk' } }, 'default_branch is not a setting'],
    [form(root, 'bogus=1'), 'bogus is not a setting'],
  ];
  for (const [opts, names] of cases) {
    const res = await put(app, root, opts);
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { error: `${names}, at least one setting must be provided` });
  }
  assert.deepEqual(await storedRow(c), {});
});

test('default_branch_name and the other documented settings: accepted, validated, used for new projects', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const res = await put(app, root, {
    payload: {
      default_branch_name: 'trunk',
      default_project_creation: 1,
      gitaly_timeout_default: 30,
      html_emails_enabled: false,
      email_confirmation_setting: 'hard',
      disabled_oauth_sign_in_sources: 'github, gitlab',
      help_page_support_url: 'https://help.example.com',
    },
  });
  assert.equal(res.statusCode, 200, res.body);
  const b = res.json();
  assert.deepEqual(
    [
      b.default_branch_name,
      b.default_project_creation,
      b.gitaly_timeout_default,
      b.html_emails_enabled,
      b.email_confirmation_setting,
      b.disabled_oauth_sign_in_sources,
      b.help_page_support_url,
    ],
    ['trunk', 1, 30, false, 'hard', ['github', 'gitlab'], 'https://help.example.com'],
  );
  assert.equal((await storedRow(c)).default_branch_name, 'trunk');
  // a project created without default_branch gets the instance's default branch name
  const u = await seed.user();
  const tok = await seed.token(u);
  const created = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: tok.headers, payload: { name: 'p1' } });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.json().default_branch, 'trunk');
  const explicit = await app.inject({ method: 'POST', url: '/api/v4/projects', headers: tok.headers, payload: { name: 'p2', default_branch: 'dev' } });
  assert.equal(explicit.json().default_branch, 'dev');

  const bad: [Record<string, unknown>, unknown][] = [
    [{ default_branch_name: 'a..b' }, { message: { default_branch_name: ['is invalid'] } }],
    [{ default_branch_name: '-x' }, { message: { default_branch_name: ['is invalid'] } }],
    [{ default_project_creation: 9 }, { error: 'default_project_creation does not have a valid value' }],
    [{ email_confirmation_setting: 'maybe' }, { error: 'email_confirmation_setting does not have a valid value' }],
    [{ minimum_password_length: 4 }, { message: { minimum_password_length: ['must be greater than or equal to 8'] } }],
    [{ help_page_support_url: 'not a url' }, { message: { help_page_support_url: ['must be a valid URL'] } }],
    [{ throttle_authenticated_web_period_in_seconds: 0 }, { message: { throttle_authenticated_web_period_in_seconds: ['must be greater than 0'] } }],
    [{ gitaly_timeout_fast: 'soon' }, { error: 'gitaly_timeout_fast is invalid' }],
  ];
  for (const [payload, body] of bad) {
    const r = await put(app, root, { payload });
    assert.equal(r.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(r.json(), body, JSON.stringify(payload));
  }
  assert.equal((await storedRow(c)).default_branch_name, 'trunk');
});

test('type coercion like Grape; wrong types and values are 400 {"error"} and nothing is written', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  // strings for every kind
  let res = await put(app, root, {
    url: `${URL}?signup_enabled=No&admin_mode=t&max_export_size=%2B7&external_authorization_service_timeout=2.5&terms=%20Be%20nice%20`,
  });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(
    ['signup_enabled', 'admin_mode', 'max_export_size', 'external_authorization_service_timeout', 'terms'].map((k) => res.json()[k]),
    [false, true, 7, 2.5, 'Be nice'],
  );
  // JSON numbers for strings, 1/0 for booleans
  res = await put(app, root, { payload: { after_sign_up_text: 42, keep_latest_artifact: 0, rsa_key_restriction: '2048' } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual([res.json().after_sign_up_text, res.json().keep_latest_artifact, res.json().rsa_key_restriction], ['42', false, 2048]);
  const stored = await storedRow(c);

  const cases: [Partial<Inject>, string][] = [
    [{ url: `${URL}?signup_enabled=maybe` }, 'signup_enabled is invalid'],
    [{ url: `${URL}?max_attachment_size=ten` }, 'max_attachment_size is invalid'],
    [{ payload: { max_attachment_size: 1.5 } }, 'max_attachment_size is invalid'],
    [{ payload: { polling_interval_multiplier: 'fast' } }, 'polling_interval_multiplier is invalid'],
    [{ payload: { home_page_url: ['a', 'b'] } }, 'home_page_url is invalid'],
    [{ payload: { domain_allowlist: [{ a: 1 }] } }, 'domain_allowlist is invalid'],
    [{ payload: { default_project_visibility: 'secret' } }, 'default_project_visibility does not have a valid value'],
    [{ payload: { default_group_visibility: 10 } }, 'default_group_visibility does not have a valid value'],
    [{ payload: { default_branch_protection: 5 } }, 'default_branch_protection does not have a valid value'],
    [{ payload: { ed25519_key_restriction: 1024 } }, 'ed25519_key_restriction does not have a valid value'],
    [{ payload: { import_sources: ['gitlab_project', 'svn'] } }, 'import_sources does not have a valid value'],
    // several failures are joined; a valid parameter next to them is not written either
    [
      { payload: { signup_enabled: false, max_login_attempts: 'x', dsa_key_restriction: 4096, admin_mode: 'sure' } },
      'max_login_attempts is invalid, dsa_key_restriction does not have a valid value, admin_mode is invalid',
    ],
  ];
  for (const [opts, error] of cases) {
    res = await put(app, root, opts);
    assert.equal(res.statusCode, 400, JSON.stringify(opts));
    assert.deepEqual(res.json(), { error });
  }
  assert.deepEqual(await storedRow(c), stored);
  assert.equal((await c.settings.get()).signup_enabled, false);
});

test('legacy names: written to the current setting and mirrored in responses', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  let res = await put(app, root, {
    payload: {
      signin_enabled: false,
      allow_local_requests_from_hooks_and_services: true,
      asset_proxy_whitelist: 'cdn.example.com, *.example.org',
      admin_notification_email: 'abuse@example.com',
      outbound_local_requests_allowlist: '10.0.0.1,internal.example.com',
    },
  });
  assert.equal(res.statusCode, 200);
  const b = res.json();
  for (const k of ['password_authentication_enabled_for_web', 'password_authentication_enabled', 'signin_enabled']) assert.equal(b[k], false, k);
  assert.equal(b.allow_local_requests_from_web_hooks_and_services, true);
  assert.equal(b.allow_local_requests_from_hooks_and_services, true);
  assert.deepEqual(b.asset_proxy_allowlist, ['cdn.example.com', '*.example.org']);
  assert.deepEqual(b.asset_proxy_whitelist, ['cdn.example.com', '*.example.org']);
  assert.equal(b.abuse_notification_email, 'abuse@example.com');
  assert.equal(b.admin_notification_email, 'abuse@example.com');
  assert.deepEqual(b.outbound_local_requests_whitelist, ['10.0.0.1', 'internal.example.com']);
  assert.deepEqual(await storedRow(c), {
    password_authentication_enabled_for_web: false,
    allow_local_requests_from_web_hooks_and_services: true,
    asset_proxy_allowlist: ['cdn.example.com', '*.example.org'],
    abuse_notification_email: 'abuse@example.com',
    outbound_local_requests_whitelist: ['10.0.0.1', 'internal.example.com'],
  });

  res = await put(app, root, { url: `${URL}?password_authentication_enabled=true` });
  assert.equal(res.json().password_authentication_enabled_for_web, true);

  // housekeeping: the deprecated periods all mirror housekeeping_optimize_repository_period
  res = await put(app, root, { payload: { housekeeping_incremental_repack_period: 25 } });
  assert.equal(res.statusCode, 200);
  for (const k of [
    'housekeeping_optimize_repository_period',
    'housekeeping_incremental_repack_period',
    'housekeeping_full_repack_period',
    'housekeeping_gc_period',
  ]) {
    assert.equal(res.json()[k], 25, k);
  }
  assert.equal(res.json().housekeeping_bitmaps_enabled, true);
  assert.equal((await storedRow(c)).housekeeping_optimize_repository_period, 25);
});

test('mutually exclusive password flags', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  let res = await put(app, root, { url: `${URL}?password_authentication_enabled_for_web=false&signin_enabled=false` });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'password_authentication_enabled_for_web, signin_enabled are mutually exclusive' });
  res = await put(app, root, { payload: { signin_enabled: true, password_authentication_enabled: true, password_authentication_enabled_for_web: true } });
  assert.deepEqual(res.json(), { error: 'password_authentication_enabled_for_web, password_authentication_enabled, signin_enabled are mutually exclusive' });
  assert.deepEqual(await storedRow(c), {});
});

test('comma-separated lists and visibility levels by name or integer', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  let res = await put(app, root, {
    url: `${URL}?domain_allowlist=example.com,%20*.example.org&domain_denylist[]=spam.test&domain_denylist[]=junk.test,%20trash.test&restricted_visibility_levels=public,10`,
  });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().domain_allowlist, ['example.com', '*.example.org']);
  assert.deepEqual(res.json().domain_denylist, ['spam.test', 'junk.test', 'trash.test']);
  assert.deepEqual(res.json().restricted_visibility_levels, ['public', 'internal']);
  res = await put(app, root, { payload: { restricted_visibility_levels: [20, 'public'], domain_allowlist: '' } });
  assert.deepEqual(res.json().restricted_visibility_levels, ['public']);
  assert.deepEqual(res.json().domain_allowlist, []);
  const row = await storedRow(c);
  assert.deepEqual(row.restricted_visibility_levels, ['public']);
  assert.deepEqual(row.domain_denylist, ['spam.test', 'junk.test', 'trash.test']);

  res = await put(app, root, { payload: { restricted_visibility_levels: 'public,secret,15' } });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), {
    message: { restricted_visibility_levels: ["'secret' is not a valid visibility level", "'15' is not a valid visibility level"] },
  });
});

test('hashes: default_branch_protection_defaults and repository_storages_weighted', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const dbpd = {
    allowed_to_push: [{ access_level: 30 }, { access_level: 40 }],
    allow_force_push: true,
    allowed_to_merge: [{ access_level: 40 }],
    developer_can_initial_push: true,
  };
  let res = await put(app, root, {
    payload: { default_branch_protection_defaults: { ...dbpd, unknown_key: 1 }, repository_storages_weighted: { default: 50 } },
  });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().default_branch_protection_defaults, dbpd);
  assert.deepEqual(res.json().repository_storages_weighted, { default: 50 });
  assert.deepEqual(await storedRow(c), { default_branch_protection_defaults: dbpd, repository_storages_weighted: { default: 50 } });

  // form encoding: nested keys as qs parses them, strings coerced
  res = await put(
    app,
    root,
    form(
      root,
      'default_branch_protection_defaults[allowed_to_merge][][access_level]=30&default_branch_protection_defaults[allow_force_push]=false&repository_storages_weighted[default]=0',
    ),
  );
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().default_branch_protection_defaults, { allow_force_push: false, allowed_to_merge: [{ access_level: 30 }] });
  assert.deepEqual(res.json().repository_storages_weighted, { default: 0 });
  const stored = await storedRow(c);

  const bad: [unknown, unknown][] = [
    [{ default_branch_protection_defaults: 'full' }, { error: 'default_branch_protection_defaults is invalid' }],
    [
      { default_branch_protection_defaults: { allowed_to_push: [{ access_level: 10 }] } },
      { error: 'default_branch_protection_defaults[allowed_to_push][0][access_level] does not have a valid value' },
    ],
    [
      { default_branch_protection_defaults: { allowed_to_merge: [{ access_level: 40 }, { level: 40 }] } },
      { error: 'default_branch_protection_defaults[allowed_to_merge][1][access_level] is missing' },
    ],
    [{ default_branch_protection_defaults: { allowed_to_push: 40 } }, { error: 'default_branch_protection_defaults[allowed_to_push] is invalid' }],
    [{ default_branch_protection_defaults: { allow_force_push: 'sometimes' } }, { error: 'default_branch_protection_defaults[allow_force_push] is invalid' }],
    [{ repository_storages_weighted: { default: 'heavy' } }, { error: 'repository_storages_weighted is invalid' }],
    [{ repository_storages_weighted: [50] }, { error: 'repository_storages_weighted is invalid' }],
    [{ repository_storages_weighted: { default: 101 } }, { message: { repository_storages_weighted: ["value for 'default' must be between 0 and 100"] } }],
    [{ repository_storages_weighted: { default: 10, nfs: 5 } }, { message: { repository_storages_weighted: ["can't include: nfs"] } }],
  ];
  for (const [payload, expected] of bad) {
    res = await put(app, root, { payload: payload as object });
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), expected);
  }
  assert.deepEqual(await storedRow(c), stored);
});

test('given X: true requires Y', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const cases: [object, string][] = [
    [{ email_restrictions_enabled: true }, 'email_restrictions is missing'],
    [{ require_two_factor_authentication: 'true' }, 'two_factor_grace_period is missing'],
    [{ akismet_enabled: true }, 'akismet_api_key is missing'],
    [{ recaptcha_enabled: 1 }, 'recaptcha_site_key is missing, recaptcha_private_key is missing'],
    [{ plantuml_enabled: true }, 'plantuml_url is missing'],
    [
      { housekeeping_enabled: true },
      'housekeeping_incremental_repack_period, housekeeping_optimize_repository_period are missing, exactly one parameter must be provided',
    ],
    [
      { housekeeping_enabled: true, housekeeping_gc_period: 20, housekeeping_optimize_repository_period: 5, housekeeping_incremental_repack_period: 5 },
      'housekeeping_full_repack_period, housekeeping_gc_period, housekeeping_incremental_repack_period provide all or none of parameters, housekeeping_incremental_repack_period, housekeeping_optimize_repository_period are mutually exclusive',
    ],
  ];
  for (const [payload, error] of cases) {
    const res = await put(app, root, { payload });
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), { error });
  }
  assert.deepEqual(await storedRow(c), {});

  // false needs nothing; true with its companion is saved
  let res = await put(app, root, { payload: { email_restrictions_enabled: false } });
  assert.equal(res.statusCode, 200);
  res = await put(app, root, { payload: { email_restrictions_enabled: true, email_restrictions: '\\+' } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().email_restrictions_enabled, true);
  assert.equal(res.json().email_restrictions, '\\+');
  res = await put(app, root, { payload: { housekeeping_enabled: true, housekeeping_optimize_repository_period: 30 } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().housekeeping_optimize_repository_period, 30);
  res = await put(app, root, { payload: { recaptcha_enabled: true, recaptcha_site_key: 'site', recaptcha_private_key: 'private' } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().recaptcha_enabled, true);
  assert.equal(res.json().recaptcha_private_key, undefined);
  const row = await storedRow(c);
  assert.equal(row.recaptcha_private_key, 'private');
});

test('model validation: 400 {"message":{attr:[…]}} with GitLab messages, nothing written', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const cases: [object, Record<string, string[]>][] = [
    [{ email_restrictions_enabled: true, email_restrictions: '(unclosed' }, { email_restrictions: ['not valid RE2 syntax: Unterminated group'] }],
    [
      { personal_access_token_prefix: 'this prefix is far too long' },
      {
        personal_access_token_prefix: [
          "can contain only letters of the Base64 alphabet (RFC4648) with the addition of '@', ':' and '.'",
          'is too long (maximum is 20 characters)',
        ],
      },
    ],
    [{ personal_access_token_prefix: 'abcdefghijklmnopqrstu' }, { personal_access_token_prefix: ['is too long (maximum is 20 characters)'] }],
    [
      { max_login_attempts: 0, failed_login_attempts_unlock_period_in_minutes: -1 },
      { max_login_attempts: ['must be greater than 0'], failed_login_attempts_unlock_period_in_minutes: ['must be greater than 0'] },
    ],
    [{ max_attachment_size: null }, { max_attachment_size: ['is not a number'] }],
    [{ signup_enabled: null }, { signup_enabled: ['must be a boolean value'] }],
    [{ default_preferred_language: 'xx' }, { default_preferred_language: ['is not included in the list'] }],
    [{ first_day_of_week: 3 }, { first_day_of_week: ['is not included in the list'] }],
    [
      { deletion_adjourned_period: 91, local_markdown_version: 70000 },
      { local_markdown_version: ['must be less than 65536'], deletion_adjourned_period: ['must be less than or equal to 90'] },
    ],
    [{ throttle_authenticated_api_period_in_seconds: 0 }, { throttle_authenticated_api_period_in_seconds: ['must be greater than 0'] }],
    [{ wiki_page_max_content_bytes: 1000 }, { wiki_page_max_content_bytes: ['must be greater than or equal to 1024'] }],
    [
      { home_page_url: 'not a url', abuse_notification_email: 'nobody' },
      { home_page_url: ['must be a valid URL'], abuse_notification_email: ['is invalid'] },
    ],
    [{ default_ci_config_path: '../x.yml' }, { default_ci_config_path: ['cannot include leading slash or directory traversal.'] }],
    [{ rate_limiting_response_text: 'x'.repeat(256) }, { rate_limiting_response_text: ['is too long (maximum is 255 characters)'] }],
    [
      { domain_allowlist: ['ğitlab.com', 'a'.repeat(256)], domain_denylist: 'spam.test<script>x</script>' },
      {
        domain_allowlist: ['entries cannot be larger than 255 characters', 'unicode domains should use IDNA encoding'],
        domain_denylist: ['entries cannot contain HTML tags'],
      },
    ],
    [{ domain_denylist_enabled: true }, { domain_denylist: ['Domain denylist cannot be empty if denylist is enabled.'] }],
    [{ enforce_terms: true }, { terms: ['You need to set terms to be enforced'] }],
    [
      { asset_proxy_enabled: true, asset_proxy_url: 'ftp://proxy' },
      { asset_proxy_url: ['must be a valid URL'], asset_proxy_secret_key: ["can't be blank"] },
    ],
    [
      { external_authorization_service_enabled: true, external_authorization_service_timeout: 11 },
      { external_authorization_service_default_label: ["can't be blank"], external_authorization_service_timeout: ['must be less than or equal to 10'] },
    ],
    [
      { restricted_visibility_levels: ['private'] },
      {
        default_project_visibility: ['cannot be set to a restricted visibility level'],
        default_group_visibility: ['cannot be set to a restricted visibility level'],
      },
    ],
  ];
  for (const [payload, message] of cases) {
    const res = await put(app, root, { payload });
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.deepEqual(res.json(), { message }, JSON.stringify(payload));
  }
  assert.deepEqual(await storedRow(c), {});

  // the same settings, valid
  const ok = await put(app, root, {
    payload: {
      personal_access_token_prefix: 'hearth_pat-',
      max_login_attempts: 3,
      restricted_visibility_levels: ['public'],
      default_project_visibility: 'internal',
      enforce_terms: true,
      terms: 'Be kind.',
      domain_denylist_enabled: true,
      domain_denylist: 'spam.test',
      asset_proxy_enabled: true,
      asset_proxy_url: 'https://proxy.example.com',
      asset_proxy_secret_key: 'shared-secret',
    },
  });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json().asset_proxy_secret_key, undefined);
  // a default visibility may not move to a restricted level
  const bad = await put(app, root, { payload: { default_group_visibility: 'public' } });
  assert.deepEqual(bad.json(), { message: { default_group_visibility: ['cannot be set to a restricted visibility level'] } });
  // the new token prefix is used at once
  assert.equal((await c.settings.get()).personal_access_token_prefix, 'hearth_pat-');
});

test('terms: trimmed, blank terms leave the current ones', async (t) => {
  const { app, root } = await buildTestApp(t);
  await put(app, root, { payload: { terms: '  Rules  ' } });
  const res = await put(app, root, { payload: { terms: '   ', signup_enabled: true } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().terms, 'Rules');
});

test('performance bar group: given as a path, stored as the group id (no such group → null)', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const res = await put(app, root, { payload: { performance_bar_allowed_group_path: 'no/such/group' } });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().performance_bar_allowed_group_id, null);
  assert.deepEqual(await storedRow(c), { performance_bar_allowed_group_id: null });
  // the resolver a groups feature plugs in (here: a database lookup, which must not wait on the update's transaction)
  const resolveGroupPath = async (path: string) =>
    (await c.db.kysely.selectFrom('users').select('id').where('username', '=', path).executeTakeFirst())?.id ?? null;
  await c.settings.update({ performance_bar_allowed_group_id: ' root ' }, { resolveGroupPath });
  assert.equal((await app.inject({ method: 'GET', url: URL, headers: root })).json().performance_bar_allowed_group_id, 1);
  await c.settings.update({ performance_bar_allowed_group_path: '' }, { resolveGroupPath });
  assert.equal((await c.settings.get()).performance_bar_allowed_group_id, null);
});

test('removed settings stored in the row are never returned', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  await c.db.kysely
    .updateTable('application_settings')
    .set({ settings: JSON.stringify({ delayed_project_deletion: true, repository_storages: ['default'], signup_enabled: false }) })
    .execute();
  const res = await app.inject({ method: 'GET', url: URL, headers: root });
  assert.deepEqual(body(res), { ...DEFAULTS, signup_enabled: false });
  // and a save drops them from the row
  await put(app, root, { payload: { admin_mode: false } });
  assert.deepEqual(await storedRow(c), { signup_enabled: false, admin_mode: false });
});

test('cache: a change made elsewhere is seen by the service after invalidation (≤ 60 s), by GET at once', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  assert.equal((await c.settings.get()).signup_enabled, true);
  // another node writes the row
  await c.db.kysely
    .updateTable('application_settings')
    .set({ settings: JSON.stringify({ signup_enabled: false }) })
    .execute();
  assert.equal((await c.settings.get()).signup_enabled, true);
  assert.equal((await app.inject({ method: 'GET', url: URL, headers: root })).json().signup_enabled, false);
  c.settings.invalidate();
  assert.equal((await c.settings.get()).signup_enabled, false);
});

test('stored garbage refused: integers beyond 32 bits and NUL bytes are 400 {"error"}, on either database; nothing is written', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  let res = await put(app, root, { payload: { default_projects_limit: 2147483647, max_login_attempts: -5 } });
  assert.equal(res.statusCode, 400); // in range, but the model's minimum
  assert.deepEqual(res.json(), { message: { max_login_attempts: ['must be greater than 0'] } });
  res = await put(app, root, { payload: { default_projects_limit: 2147483647 } });
  assert.equal(res.statusCode, 200);
  const stored = await storedRow(c);
  const cases: [Partial<Inject>, string][] = [
    [{ payload: { default_projects_limit: 2147483648 } }, 'default_projects_limit is invalid'],
    [{ payload: { default_projects_limit: 99999999999 } }, 'default_projects_limit is invalid'],
    [{ payload: { max_attachment_size: '99999999999' } }, 'max_attachment_size is invalid'],
    [{ payload: { max_attachment_size: -2147483649 } }, 'max_attachment_size is invalid'],
    [{ url: `${URL}?session_expire_delay=9007199254740993` }, 'session_expire_delay is invalid'],
    [form(root, 'push_event_hooks_limit=1e999'), 'push_event_hooks_limit is invalid'],
    [{ payload: { repository_storages_weighted: { default: 99999999999 } } }, 'repository_storages_weighted is invalid'],
    [
      { payload: { default_branch_protection_defaults: { allowed_to_push: [{ access_level: 4294967336 }] } } },
      'default_branch_protection_defaults[allowed_to_push][0][access_level] is invalid',
    ],
    [{ payload: { after_sign_up_text: 'a\u0000b' } }, 'after_sign_up_text is invalid'],
    [{ payload: { domain_allowlist: ['ok.example', 'a\u0000b'] } }, 'domain_allowlist[1] is invalid'],
    [form(root, 'home_page_url=http%3A%2F%2Fa%00b'), 'home_page_url is invalid'],
  ];
  for (const [opts, error] of cases) {
    res = await put(app, root, opts);
    assert.deepEqual([res.statusCode, res.json()], [400, { error }], JSON.stringify(opts));
  }
  assert.deepEqual(await storedRow(c), stored);
  // the service refuses them whatever the transport
  await assert.rejects(c.settings.update({ after_sign_up_text: 'a\u0000b' }), (e: any) => e.status === 400 && e.detail === 'after_sign_up_text is invalid');
  await assert.rejects(c.settings.update({ domain_denylist: ['x\u0000'] }), (e: any) => e.status === 400 && e.detail === 'domain_denylist is invalid');
  await assert.rejects(
    c.settings.update({ default_projects_limit: 2 ** 31 }),
    (e: any) => e.status === 400 && e.detail === 'default_projects_limit is invalid',
  );
  assert.deepEqual(await storedRow(c), stored);
});

test('import_sources: a list of known sources, stored as given', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const res = await put(app, root, { payload: { import_sources: ['git', 'gitlab_project'] } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().import_sources, ['git', 'gitlab_project']);
  assert.deepEqual((await c.settings.get()).import_sources, ['git', 'gitlab_project']);
  const empty = await put(app, root, { payload: { import_sources: [] } });
  assert.equal(empty.statusCode, 200);
  assert.deepEqual(empty.json().import_sources, []);
});
