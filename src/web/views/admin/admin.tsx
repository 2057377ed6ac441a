// The admin area: overview counts, users (search, state, block/unblock), system hooks with their recent
// deliveries, every runner with its status (Edit, Pause/Resume, Delete), the instance's CI/CD variables and the
// common application settings.
import type { HookAttemptRow, SystemHookRow } from '../../../db/schema.ts';
import type { UserViewRow } from '../../../domain/core/user-columns.ts';
import type { WebCtx } from '../../context.ts';
import type { Child, SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Avatar, ButtonForm, FormErrors, Pagination, PostForm, Tabs, TimeAgo } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { Checkbox, Field, Select, TextArea } from '../settings/fields.tsx';
import { type VariableFormValues, type VariableItem, type VariableUrls, VariableEditForm, VariablesSection } from '../settings/ci-variables.tsx';
import type { FieldErrors } from '../settings/fields.tsx';
import { type RunnerItem, RunnerTable } from '../settings/runners.tsx';
import { DeliveriesTable } from '../settings/project.tsx';

export type AdminTab = 'overview' | 'users' | 'hooks' | 'runners' | 'ci_variables' | 'settings';

export function AdminFrame(p: { ctx: WebCtx; title: string; tab: AdminTab; crumbs?: { text: string; href?: string }[]; children?: Child }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title={`${p.title} · Admin area`} crumbs={[{ text: 'Admin area', href: '/admin' }, ...(p.crumbs ?? [{ text: p.title }])]}>
      <Tabs
        label="Admin area"
        tabs={[
          { href: '/admin', text: 'Overview', current: p.tab === 'overview' },
          { href: '/admin/users', text: 'Users', current: p.tab === 'users' },
          { href: '/admin/hooks', text: 'System hooks', current: p.tab === 'hooks' },
          { href: '/admin/runners', text: 'Runners', current: p.tab === 'runners' },
          { href: '/admin/ci/variables', text: 'CI/CD variables', current: p.tab === 'ci_variables' },
          { href: '/admin/application_settings/general', text: 'Settings', current: p.tab === 'settings' },
        ]}
      />
      {p.children}
    </Layout>
  );
}

const fmt = (n: number | null): string => (n === null ? 'more than 10,000' : n.toLocaleString('en'));

export function AdminOverview(p: {
  ctx: WebCtx;
  counts: { users: number | null; blocked: number | null; projects: number | null; groups: number | null; hooks: number | null };
}): SafeHtml {
  const items: [string, number | null, string][] = [
    ['Users', p.counts.users, '/admin/users'],
    ['Blocked users', p.counts.blocked, '/admin/users?state=blocked'],
    ['Projects', p.counts.projects, '/explore'],
    ['Groups', p.counts.groups, '/explore/groups'],
    ['System hooks', p.counts.hooks, '/admin/hooks'],
  ];
  return (
    <AdminFrame ctx={p.ctx} title="Overview" tab="overview">
      <h1 class="h2 mb-3">Admin area</h1>
      <ul class="admin-counts list-style-none d-flex flex-wrap">
        {items.map(([label, n, href]) => (
          <li class="Box p-3 mr-3 mb-3">
            <a href={href} class="d-block">
              <span class="f1 d-block">{fmt(n)}</span>
              <span class="color-fg-muted">{label}</span>
            </a>
          </li>
        ))}
      </ul>
    </AdminFrame>
  );
}

const STATES = [
  { value: '', text: 'All' },
  { value: 'active', text: 'Active' },
  { value: 'blocked', text: 'Blocked' },
  { value: 'admins', text: 'Administrators' },
  { value: 'external', text: 'External' },
];

function StateLabel(p: { state: string; admin: boolean }): SafeHtml {
  return (
    <>
      {p.state !== 'active' ? <span class="Label Label--danger ml-1">{p.state.replace(/_/g, ' ')}</span> : null}
      {p.admin ? <span class="Label Label--accent ml-1">Admin</span> : null}
    </>
  );
}

export function AdminUsers(p: { ctx: WebCtx; users: UserViewRow[]; search: string; state: string; page: number; hasNext: boolean }): SafeHtml {
  return (
    <AdminFrame ctx={p.ctx} title="Users" tab="users">
      <h1 class="h2 mb-3">Users</h1>
      <form method="get" action="/admin/users" class="d-flex flex-items-end flex-wrap mb-3" aria-label="Filter users">
        <div class="FormControl mr-2">
          <label class="FormControl-label" for="user_search">
            Search by name, username or email
          </label>
          <input class="form-control" id="user_search" type="search" name="search" value={p.search} />
        </div>
        <div class="FormControl mr-2">
          <label class="FormControl-label" for="user_state">
            State
          </label>
          <select class="form-select" id="user_state" name="state">
            {STATES.map((s) => (
              <option value={s.value} selected={s.value === p.state}>
                {s.text}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="btn">
          Filter
        </button>
      </form>
      {p.users.length ? (
        <table class="settings-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
              <th scope="col">Last activity</th>
            </tr>
          </thead>
          <tbody>
            {p.users.map((u) => (
              <tr>
                <th scope="row">
                  <Avatar url={u.avatar_url} name={u.username} />
                  <a href={`/admin/users/${encodeURIComponent(u.username)}`}>{u.name}</a> <span class="color-fg-muted">{`@${u.username}`}</span>
                </th>
                <td>{u.email}</td>
                <td>
                  {u.state}
                  <StateLabel state="active" admin={u.is_admin === 1} />
                </td>
                <td>
                  <TimeAgo at={u.created_at} />
                </td>
                <td>{u.last_activity_on ?? 'Never'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="color-fg-muted">No users found.</p>
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </AdminFrame>
  );
}

const BLOCKED = new Set(['blocked', 'ldap_blocked', 'blocked_pending_approval', 'banned']);

export function AdminUser(p: { ctx: WebCtx; user: UserViewRow }): SafeHtml {
  const u = p.user;
  const self = p.ctx.user?.id === u.id;
  const rows: [string, Child][] = [
    ['Username', `@${u.username}`],
    ['Email', u.email],
    ['State', u.state],
    ['Administrator', u.is_admin ? 'Yes' : 'No'],
    ['External', u.external ? 'Yes' : 'No'],
    ['Projects limit', String(u.projects_limit)],
    ['Created', <TimeAgo at={u.created_at} />],
    ['Last sign-in', <TimeAgo at={u.current_sign_in_at} />],
    ['Last activity', u.last_activity_on ?? 'Never'],
  ];
  return (
    <AdminFrame ctx={p.ctx} title={u.name} tab="users" crumbs={[{ text: 'Users', href: '/admin/users' }, { text: u.username }]}>
      <h1 class="h2 mb-3">
        {u.name}
        <StateLabel state={u.state} admin={u.is_admin === 1} />
      </h1>
      <table class="settings-table mb-4">
        <tbody>
          {rows.map(([k, v]) => (
            <tr>
              <th scope="row">{k}</th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>
        <a href={`/${encodeURIComponent(u.username)}`}>View the public profile</a>
      </p>
      {self ? null : BLOCKED.has(u.state) ? (
        u.state === 'blocked' ? (
          <PostForm ctx={p.ctx} action={`/admin/users/${encodeURIComponent(u.username)}/unblock`}>
            <button type="submit" class="btn">
              Unblock user
            </button>
          </PostForm>
        ) : null
      ) : (
        <section aria-labelledby="block-user" class="Box Box--danger p-3">
          <h2 id="block-user" class="h3 mb-2">
            Block user
          </h2>
          <p>A blocked user cannot sign in, and their tokens stop working at once.</p>
          <PostForm ctx={p.ctx} action={`/admin/users/${encodeURIComponent(u.username)}/block`}>
            <button type="submit" class="btn btn-danger">
              Block user
            </button>
          </PostForm>
        </section>
      )}
    </AdminFrame>
  );
}

// ---- system hooks ----

export const SYSTEM_HOOK_FLAGS = ['push_events', 'tag_push_events', 'merge_requests_events', 'repository_update_events', 'enable_ssl_verification'] as const;
const SYSTEM_FLAG_LABELS: Record<string, string> = {
  push_events: 'Push events',
  tag_push_events: 'Tag push events',
  merge_requests_events: 'Merge request events',
  repository_update_events: 'Repository update events',
  enable_ssl_verification: 'Enable SSL verification',
};

export interface SystemHookValues {
  url: string;
  name: string;
  token: string;
  flags: Record<string, boolean>;
}

export function AdminHooks(p: { ctx: WebCtx; hooks: SystemHookRow[]; values: SystemHookValues; errors?: string[] | null }): SafeHtml {
  const v = p.values;
  return (
    <AdminFrame ctx={p.ctx} title="System hooks" tab="hooks">
      <h1 class="h2 mb-3">System hooks</h1>
      <p class="color-fg-muted mb-3">
        System hooks are sent on instance events (projects, groups, users, members) and, if chosen, on pushes and merge requests.
      </p>
      <section aria-labelledby="hooks-list" class="mb-5">
        <h2 id="hooks-list" class="h3 mb-2">{`System hooks (${p.hooks.length})`}</h2>
        {p.hooks.length ? (
          <ul class="Box list-style-none">
            {p.hooks.map((h) => (
              <li class="Box-row d-flex flex-items-center flex-wrap">
                <div class="flex-auto">
                  <a class="text-bold" href={`/admin/hooks/${h.id}`}>
                    {h.name || h.url}
                  </a>
                  {h.name ? <span class="ml-2 f6 text-mono color-fg-muted">{h.url}</span> : null}
                  <div class="f6 color-fg-muted">
                    {[
                      'System events',
                      ...SYSTEM_HOOK_FLAGS.filter((f) => f !== 'enable_ssl_verification' && h[f] === 1).map((f) => SYSTEM_FLAG_LABELS[f]),
                    ].join(', ')}
                  </div>
                </div>
                <PostForm ctx={p.ctx} action={`/admin/hooks/${h.id}/test`} class="mr-2">
                  <button type="submit" class="btn btn-sm" aria-label={`Test ${h.name || h.url}`}>
                    Test
                  </button>
                </PostForm>
                <a class="btn btn-sm mr-2" href={`/admin/hooks/${h.id}`} aria-label={`Recent deliveries of ${h.name || h.url}`}>
                  Deliveries
                </a>
                <ButtonForm ctx={p.ctx} action={`/admin/hooks/${h.id}/delete`} label="Delete" aria={`Delete ${h.name || h.url}`} danger />
              </li>
            ))}
          </ul>
        ) : (
          <p class="color-fg-muted">No system hooks.</p>
        )}
      </section>
      <section aria-labelledby="hooks-add">
        <h2 id="hooks-add" class="h3 mb-2">
          Add new system hook
        </h2>
        <FormErrors errors={p.errors} />
        <PostForm ctx={p.ctx} action="/admin/hooks" class="settings-form">
          <Field id="system_hook_url" name="url" label="URL" type="url" value={v.url} required placeholder="https://example.com/hook" />
          <Field id="system_hook_name" name="name" label="Name (optional)" value={v.name} />
          <Field
            id="system_hook_token"
            name="token"
            label="Secret token"
            type="password"
            value=""
            autocomplete="off"
            hint="Sent in the X-Service-Token header."
          />
          <fieldset class="mb-3">
            <legend class="text-bold mb-1">Trigger</legend>
            {SYSTEM_HOOK_FLAGS.map((f) => (
              <Checkbox id={`system_hook_${f}`} name={f} label={SYSTEM_FLAG_LABELS[f]} checked={!!v.flags[f]} />
            ))}
          </fieldset>
          <button type="submit" class="btn btn-primary">
            Add system hook
          </button>
        </PostForm>
      </section>
    </AdminFrame>
  );
}

export function AdminHook(p: { ctx: WebCtx; hook: SystemHookRow; attempts: (HookAttemptRow & { event_name: string })[] }): SafeHtml {
  const h = p.hook;
  return (
    <AdminFrame ctx={p.ctx} title={h.name || h.url} tab="hooks" crumbs={[{ text: 'System hooks', href: '/admin/hooks' }, { text: h.name || h.url }]}>
      <h1 class="h2 mb-3">{`System hook: ${h.name || h.url}`}</h1>
      <p class="text-mono mb-3">{h.url}</p>
      <PostForm ctx={p.ctx} action={`/admin/hooks/${h.id}/test`} class="mb-4">
        <button type="submit" class="btn">
          Send a test event
        </button>
      </PostForm>
      <h2 class="h3 mb-2">Recent deliveries</h2>
      <DeliveriesTable ctx={p.ctx} attempts={p.attempts} resendUrl={(id) => `/admin/hooks/${h.id}/events/${id}/resend`} />
    </AdminFrame>
  );
}

// ---- application settings ----

export type SettingKind = 'bool' | 'int' | 'text' | 'url' | 'visibility' | 'list';
export interface SettingField {
  key: string;
  label: string;
  kind: SettingKind;
  hint?: string;
}

/** The common settings of the general page, in GitLab's sections. */
export const GENERAL_SETTINGS: { section: string; fields: SettingField[] }[] = [
  {
    section: 'Sign-up and sign-in',
    fields: [
      { key: 'signup_enabled', label: 'Sign-up enabled', kind: 'bool', hint: 'Anyone can create an account.' },
      { key: 'password_authentication_enabled_for_web', label: 'Allow password authentication for the web interface', kind: 'bool' },
      { key: 'session_expire_delay', label: 'Session duration (minutes)', kind: 'int' },
      { key: 'after_sign_out_path', label: 'After sign-out path', kind: 'url' },
      { key: 'home_page_url', label: 'Home page URL', kind: 'url' },
    ],
  },
  {
    section: 'Visibility and access',
    fields: [
      { key: 'default_project_visibility', label: 'Default project visibility', kind: 'visibility' },
      { key: 'default_group_visibility', label: 'Default group visibility', kind: 'visibility' },
      { key: 'default_projects_limit', label: 'Default projects limit', kind: 'int' },
      { key: 'can_create_group', label: 'Allow new users to create top-level groups', kind: 'bool' },
      { key: 'user_default_external', label: 'New users are external by default', kind: 'bool' },
    ],
  },
  {
    section: 'Account and limits',
    fields: [
      { key: 'max_attachment_size', label: 'Maximum attachment size (MiB)', kind: 'int' },
      { key: 'disable_personal_access_tokens', label: 'Disable personal access tokens', kind: 'bool' },
      { key: 'require_personal_access_token_expiry', label: 'Personal access tokens must expire', kind: 'bool' },
      { key: 'max_personal_access_token_lifetime', label: 'Maximum personal access token lifetime (days)', kind: 'int', hint: 'Empty: 365 days.' },
      { key: 'gravatar_enabled', label: 'Gravatar enabled', kind: 'bool' },
    ],
  },
  {
    // GitLab's Admin → Settings → Network → Outbound requests
    section: 'Outbound requests',
    fields: [
      {
        key: 'allow_local_requests_from_web_hooks_and_services',
        label: 'Allow requests to the local network from webhooks and integrations',
        kind: 'bool',
        hint: 'Project and group webhooks may point at localhost and private addresses (10.0.0.0/8, 192.168.0.0/16, …).',
      },
      {
        key: 'allow_local_requests_from_system_hooks',
        label: 'Allow requests to the local network from system hooks',
        kind: 'bool',
      },
      {
        key: 'outbound_local_requests_whitelist',
        label: 'Local IP addresses and domain names that hooks and integrations can access',
        kind: 'list',
        hint: 'One per line or separated by commas: host names (*.example.com), addresses or CIDR ranges, each optionally with :port. Allowed even when local requests are off.',
      },
    ],
  },
];

const VISIBILITY_OPTIONS = [
  { value: 'private', text: 'Private' },
  { value: 'internal', text: 'Internal' },
  { value: 'public', text: 'Public' },
];

export function AdminSettings(p: { ctx: WebCtx; values: Record<string, string | boolean>; errors?: string[] | null }): SafeHtml {
  return (
    <AdminFrame ctx={p.ctx} title="General settings" tab="settings">
      <h1 class="h2 mb-3">General settings</h1>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action="/admin/application_settings/general" class="settings-form">
        {GENERAL_SETTINGS.map((s) => (
          <fieldset class="mb-4">
            <legend class="h3 mb-2">{s.section}</legend>
            {s.fields.map((f) => {
              const id = `application_setting_${f.key}`;
              const name = `application_setting[${f.key}]`;
              const v = p.values[f.key];
              if (f.kind === 'bool') return <Checkbox id={id} name={name} label={f.label} checked={v === true} hint={f.hint} />;
              if (f.kind === 'visibility') return <Select id={id} name={name} label={f.label} value={String(v)} options={VISIBILITY_OPTIONS} hint={f.hint} />;
              if (f.kind === 'list') return <TextArea id={id} name={name} label={f.label} value={String(v)} hint={f.hint} />;
              return <Field id={id} name={name} label={f.label} type={f.kind === 'int' ? 'number' : 'text'} value={String(v)} hint={f.hint} />;
            })}
          </fieldset>
        ))}
        <button type="submit" class="btn btn-primary">
          Save changes
        </button>
      </PostForm>
    </AdminFrame>
  );
}

export function AdminRunners(p: { ctx: WebCtx; runners: RunnerItem[]; page: number; hasNext: boolean; counts: Record<string, number> }): SafeHtml {
  return (
    <AdminFrame ctx={p.ctx} title="Runners" tab="runners">
      <h1 class="h2 mb-2">Runners</h1>
      <p class="color-fg-muted mb-3">
        {`Online ${p.counts.online ?? 0} · Offline ${p.counts.offline ?? 0} · Stale ${p.counts.stale ?? 0} · Never contacted ${p.counts.never_contacted ?? 0}`}
      </p>
      {p.runners.length ? (
        <RunnerTable ctx={p.ctx} runners={p.runners} caption="Every runner of the instance, newest first" detailed place="admin" editBase="/admin/runners" />
      ) : (
        <p class="color-fg-muted">No runners are registered.</p>
      )}
      <Pagination url={p.ctx.url} page={p.page} hasNext={p.hasNext} />
    </AdminFrame>
  );
}

// ---- instance CI/CD variables ----

export const ADMIN_VARIABLE_URLS: VariableUrls = {
  add: '/admin/ci/variables',
  update: '/admin/ci/variables/update',
  remove: '/admin/ci/variables/delete',
  edit: '/admin/ci/variables/edit',
  back: '/admin/ci/variables',
};

export function AdminVariables(p: { ctx: WebCtx; variables: VariableItem[]; values: VariableFormValues; errors: FieldErrors }): SafeHtml {
  return (
    <AdminFrame ctx={p.ctx} title="CI/CD variables" tab="ci_variables">
      <h1 class="h2 mb-3">Instance CI/CD variables</h1>
      <VariablesSection
        ctx={p.ctx}
        variables={p.variables}
        values={p.values}
        errors={p.errors}
        urls={ADMIN_VARIABLE_URLS}
        scoped={false}
        intro="Variables every job of every project gets (a group's or project's variable of the same key wins). Instance variables apply to all environments and cannot be hidden."
      />
    </AdminFrame>
  );
}

export function AdminVariableEdit(p: {
  ctx: WebCtx;
  original: { key: string; environment_scope: string; hidden: boolean };
  values: VariableFormValues;
  errors: FieldErrors;
}): SafeHtml {
  return (
    <AdminFrame
      ctx={p.ctx}
      title="Edit variable"
      tab="ci_variables"
      crumbs={[{ text: 'CI/CD variables', href: '/admin/ci/variables' }, { text: p.original.key }]}
    >
      <VariableEditForm ctx={p.ctx} original={p.original} values={p.values} errors={p.errors} urls={ADMIN_VARIABLE_URLS} scoped={false} />
    </AdminFrame>
  );
}
