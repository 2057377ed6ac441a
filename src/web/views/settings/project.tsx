// Project settings (Maintainers and up): general (name, description, visibility, default branch,
// archive, delete), members, protected branches and tags, webhooks with their recent deliveries.
import type { HookAttemptRow, NamespaceRow, ProjectRow, WebHookRow } from '../../../db/schema.ts';
import type { MemberView } from '../../../domain/members/members.service.ts';
import type { ProtectedBranchView, ProtectedTagView } from '../../../domain/repository/protected-refs.service.ts';
import { encodePath, type WebCtx } from '../../context.ts';
import type { Child, SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Avatar, ButtonForm, FormErrors, PostForm, Tabs, TimeAgo } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { Checkbox, Field, Select, TextArea } from './fields.tsx';

export type ProjectSettingsTab = 'general' | 'members' | 'repository' | 'deploy_keys' | 'deploy_tokens' | 'access_tokens' | 'hooks' | 'ci_cd';

export interface ProjectRef {
  project: ProjectRow;
  namespace: NamespaceRow;
}

export const projectUrl = (p: ProjectRef): string => `/${encodePath(`${p.namespace.full_path}/${p.project.path}`)}`;
export const actionUrl = (p: ProjectRef, rest: string): string => `/-/p/${p.project.id}/${rest}`;

export function Frame(p: { ctx: WebCtx; ref: ProjectRef; title: string; tab: ProjectSettingsTab; children?: Child }): SafeHtml {
  const base = projectUrl(p.ref);
  return (
    <Layout
      ctx={p.ctx}
      title={`${p.title} · ${p.ref.project.name}`}
      crumbs={[
        { text: p.ref.namespace.full_path, href: `/${encodePath(p.ref.namespace.full_path)}` },
        { text: p.ref.project.name, href: base },
        { text: p.title },
      ]}
    >
      <Tabs
        label="Project settings"
        tabs={[
          { href: `${base}/-/edit`, text: 'General', current: p.tab === 'general' },
          { href: `${base}/-/project_members`, text: 'Members', current: p.tab === 'members' },
          { href: `${base}/-/settings/repository`, text: 'Repository', current: p.tab === 'repository' },
          { href: `${base}/-/deploy_keys`, text: 'Deploy keys', current: p.tab === 'deploy_keys' },
          { href: `${base}/-/settings/deploy_tokens`, text: 'Deploy tokens', current: p.tab === 'deploy_tokens' },
          { href: `${base}/-/settings/access_tokens`, text: 'Access tokens', current: p.tab === 'access_tokens' },
          { href: `${base}/-/hooks`, text: 'Webhooks', current: p.tab === 'hooks' },
          { href: `${base}/-/settings/ci_cd`, text: 'CI/CD', current: p.tab === 'ci_cd' },
        ]}
      />
      {p.children}
    </Layout>
  );
}

// ---- general ----

export interface GeneralValues {
  name: string;
  description: string;
  visibility: string;
  default_branch: string;
}

export interface GeneralPageProps {
  ctx: WebCtx;
  ref: ProjectRef;
  values: GeneralValues;
  branches: string[];
  /** rename and visibility: Owners and administrators */
  owner: boolean;
  /** the levels that cannot be chosen, with the reason (above the group, restricted by the administrator) */
  visibilityDisabled?: Record<string, string>;
  canArchive: boolean;
  canRemove: boolean;
  errors?: string[] | null;
  deleteErrors?: string[] | null;
}

const VISIBILITIES = [
  { value: 'private', text: 'Private — only members can see the project' },
  { value: 'internal', text: 'Internal — any signed-in user (not external) can see it' },
  { value: 'public', text: 'Public — anyone can see it, signed in or not' },
];

export function GeneralPage(p: GeneralPageProps): SafeHtml {
  const v = p.values;
  const pr = p.ref.project;
  const fullPath = `${p.ref.namespace.full_path}/${pr.path}`;
  const branches = p.branches.includes(v.default_branch) || !v.default_branch ? p.branches : [v.default_branch, ...p.branches];
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="General settings" tab="general">
      <h1 class="h2 mb-3">General settings</h1>
      <section aria-labelledby="naming" class="mb-5">
        <h2 id="naming" class="h3 mb-2">
          Naming, description, visibility
        </h2>
        <FormErrors errors={p.errors} />
        <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'edit')} class="settings-form">
          {p.owner ? (
            <Field id="project_name" name="name" label="Project name" value={v.name} required />
          ) : (
            <p>
              <span class="text-bold">Project name: </span>
              {pr.name} <span class="color-fg-muted">(only Owners can rename a project)</span>
            </p>
          )}
          <TextArea id="project_description" name="description" label="Project description (optional)" value={v.description} />
          {p.owner ? (
            <Select
              id="project_visibility"
              name="visibility"
              label="Project visibility"
              value={v.visibility}
              options={VISIBILITIES.map((o) => ({ ...o, disabled: Boolean(p.visibilityDisabled?.[o.value]) }))}
              hint={Object.values(p.visibilityDisabled ?? {}).join(' ') || undefined}
            />
          ) : (
            <p>
              <span class="text-bold">Visibility: </span>
              {pr.visibility} <span class="color-fg-muted">(only Owners can change it)</span>
            </p>
          )}
          {branches.length ? (
            <Select
              id="project_default_branch"
              name="default_branch"
              label="Default branch"
              value={v.default_branch}
              options={branches.map((b) => ({ value: b, text: b }))}
            />
          ) : (
            <p class="color-fg-muted">The repository is empty: the default branch can be chosen once it has branches.</p>
          )}
          <button type="submit" class="btn btn-primary">
            Save changes
          </button>
        </PostForm>
      </section>
      {p.canArchive ? (
        <section aria-labelledby="archive" class="mb-5">
          <h2 id="archive" class="h3 mb-2">
            {pr.archived ? 'Unarchive project' : 'Archive project'}
          </h2>
          <p>
            {pr.archived
              ? 'Unarchiving makes the project writable again: pushes, merge requests and settings work as before.'
              : 'Archiving makes the project read-only: no pushes, merge requests or webhooks until it is unarchived.'}
          </p>
          <PostForm ctx={p.ctx} action={actionUrl(p.ref, pr.archived ? 'unarchive' : 'archive')}>
            <button type="submit" class="btn btn-danger">
              {pr.archived ? 'Unarchive project' : 'Archive project'}
            </button>
          </PostForm>
        </section>
      ) : null}
      {p.canRemove ? (
        <section aria-labelledby="delete" class="mb-5 Box Box--danger p-3">
          <h2 id="delete" class="h3 mb-2 color-fg-danger">
            Delete project
          </h2>
          <p>This deletes the project, its repository and everything attached to it. It cannot be undone.</p>
          <FormErrors errors={p.deleteErrors} />
          <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'delete')}>
            <Field
              id="confirm_path"
              name="confirm_path"
              label="Type the project path to confirm"
              hint={`Enter ${fullPath} to confirm.`}
              required
              autocomplete="off"
            />
            <button type="submit" class="btn btn-danger">
              Delete project
            </button>
          </PostForm>
        </section>
      ) : null}
    </Frame>
  );
}

// ---- members ----

export const ROLES = [
  { value: '10', text: 'Guest' },
  { value: '20', text: 'Reporter' },
  { value: '30', text: 'Developer' },
  { value: '40', text: 'Maintainer' },
  { value: '50', text: 'Owner' },
];

export interface MembersPageProps {
  ctx: WebCtx;
  ref: ProjectRef;
  members: MemberView[];
  canManage: boolean;
  values: { username: string; access_level: string; expires_at: string };
  errors?: string[] | null;
}

export function MembersPage(p: MembersPageProps): SafeHtml {
  const v = p.values;
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="Project members" tab="members">
      <h1 class="h2 mb-3">Project members</h1>
      {p.canManage ? (
        <section aria-labelledby="invite" class="mb-4">
          <h2 id="invite" class="h3 mb-2">
            Add a member
          </h2>
          <FormErrors errors={p.errors} />
          <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'members')} class="settings-form">
            <Field id="member_username" name="username" label="Username" value={v.username} required autocomplete="off" />
            <Select id="member_access_level" name="access_level" label="Role" value={v.access_level} options={ROLES} />
            <Field id="member_expires_at" name="expires_at" label="Access expiration date (optional)" type="date" value={v.expires_at} />
            <button type="submit" class="btn btn-primary">
              Add to project
            </button>
          </PostForm>
        </section>
      ) : null}
      <h2 class="h3 mb-2">{`Direct members (${p.members.length})`}</h2>
      <table class="settings-table">
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col">Role</th>
            <th scope="col">Expires</th>
            {p.canManage ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {p.members.map((m) => {
            const u = m.user;
            return (
              <tr>
                <th scope="row">
                  <Avatar url={u.avatar_url} name={u.username} />
                  <a href={`/${encodeURIComponent(u.username)}`}>{u.name}</a> <span class="color-fg-muted">{`@${u.username}`}</span>
                </th>
                <td>{ROLES.find((r) => r.value === String(m.accessLevel))?.text ?? String(m.accessLevel)}</td>
                <td>{m.member.expires_at ?? 'Never'}</td>
                {p.canManage ? (
                  <td>
                    <div class="d-flex flex-items-end flex-wrap">
                      <PostForm ctx={p.ctx} action={actionUrl(p.ref, `members/${u.id}`)} class="d-flex flex-items-end mr-2">
                        <label class="sr-only" for={`role_${u.id}`}>{`Role of ${u.username}`}</label>
                        <select class="form-select select-sm" id={`role_${u.id}`} name="access_level">
                          {ROLES.map((r) => (
                            <option value={r.value} selected={r.value === String(m.member.access_level)}>
                              {r.text}
                            </option>
                          ))}
                        </select>
                        <button type="submit" class="btn btn-sm ml-1">
                          Change role
                        </button>
                      </PostForm>
                      <ButtonForm ctx={p.ctx} action={actionUrl(p.ref, `members/${u.id}/delete`)} label="Remove" aria={`Remove ${u.username}`} danger />
                    </div>
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </Frame>
  );
}

// ---- protected branches and tags ----

export interface LevelOption {
  value: string;
  text: string;
}

export interface RepositoryPageProps {
  ctx: WebCtx;
  ref: ProjectRef;
  branches: ProtectedBranchView[];
  tags: ProtectedTagView[];
  levels: LevelOption[];
  describe: (level: number | null) => string;
  branchValues: { name: string; push_access_level: string; merge_access_level: string; allow_force_push: boolean };
  tagValues: { name: string; create_access_level: string };
  branchErrors?: string[] | null;
  tagErrors?: string[] | null;
}

function accessText(
  view: { access: { action: string; access_level: number | null; description: string | null }[] },
  action: string,
  describe: (l: number | null) => string,
): string {
  const list = view.access.filter((a) => a.action === action);
  return list.length ? list.map((a) => a.description ?? describe(a.access_level)).join(', ') : 'No one';
}

export function RepositoryPage(p: RepositoryPageProps): SafeHtml {
  const b = p.branchValues;
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="Repository settings" tab="repository">
      <h1 class="h2 mb-3">Repository settings</h1>
      <section aria-labelledby="protected-branches" class="mb-5">
        <h2 id="protected-branches" class="h3 mb-2">
          Protected branches
        </h2>
        <p class="color-fg-muted">Keep stable branches secure: who may push and who may merge. A name may be a wildcard such as *-stable.</p>
        <FormErrors errors={p.branchErrors} />
        <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'protected_branches')} class="settings-form mb-3">
          <Field id="protected_branch_name" name="name" label="Branch" value={b.name} required placeholder="main or *-stable" />
          <Select id="protected_branch_push" name="push_access_level" label="Allowed to push and merge" value={b.push_access_level} options={p.levels} />
          <Select id="protected_branch_merge" name="merge_access_level" label="Allowed to merge" value={b.merge_access_level} options={p.levels} />
          <Checkbox id="protected_branch_force" name="allow_force_push" label="Allowed to force push" checked={b.allow_force_push} />
          <button type="submit" class="btn btn-primary">
            Protect
          </button>
        </PostForm>
        <table class="settings-table">
          <thead>
            <tr>
              <th scope="col">Branch</th>
              <th scope="col">Allowed to push and merge</th>
              <th scope="col">Allowed to merge</th>
              <th scope="col">Force push</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {p.branches.map((v) => (
              <tr>
                <th scope="row" class="text-mono">
                  {v.row.name}
                </th>
                <td>{accessText(v, 'push', p.describe)}</td>
                <td>{accessText(v, 'merge', p.describe)}</td>
                <td>{v.row.allow_force_push ? 'Allowed' : 'Not allowed'}</td>
                <td>
                  <ButtonForm
                    ctx={p.ctx}
                    action={actionUrl(p.ref, 'protected_branches/delete')}
                    fields={{ name: v.row.name }}
                    label="Unprotect"
                    aria={`Unprotect branch ${v.row.name}`}
                    danger
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {p.branches.length ? null : <p class="color-fg-muted mt-2">No branch is protected.</p>}
      </section>
      <section aria-labelledby="protected-tags" class="mb-5">
        <h2 id="protected-tags" class="h3 mb-2">
          Protected tags
        </h2>
        <FormErrors errors={p.tagErrors} />
        <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'protected_tags')} class="settings-form mb-3">
          <Field id="protected_tag_name" name="name" label="Tag" value={p.tagValues.name} required placeholder="v* or v1.0" />
          <Select id="protected_tag_create" name="create_access_level" label="Allowed to create" value={p.tagValues.create_access_level} options={p.levels} />
          <button type="submit" class="btn btn-primary">
            Protect
          </button>
        </PostForm>
        <table class="settings-table">
          <thead>
            <tr>
              <th scope="col">Tag</th>
              <th scope="col">Allowed to create</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {p.tags.map((v) => (
              <tr>
                <th scope="row" class="text-mono">
                  {v.row.name}
                </th>
                <td>{accessText(v, 'create', p.describe)}</td>
                <td>
                  <ButtonForm
                    ctx={p.ctx}
                    action={actionUrl(p.ref, 'protected_tags/delete')}
                    fields={{ name: v.row.name }}
                    label="Unprotect"
                    aria={`Unprotect tag ${v.row.name}`}
                    danger
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {p.tags.length ? null : <p class="color-fg-muted mt-2">No tag is protected.</p>}
      </section>
    </Frame>
  );
}

// ---- webhooks ----

export interface HookFormValues {
  url: string;
  name: string;
  token: string;
  push_events_branch_filter: string;
  flags: Record<string, boolean>;
}

const FLAG_LABELS: Record<string, string> = {
  enable_ssl_verification: 'Enable SSL verification',
  merge_requests_events: 'Merge request events',
  releases_events: 'Releases events',
};
export const flagLabel = (f: string): string => FLAG_LABELS[f] ?? `${f.charAt(0).toUpperCase()}${f.slice(1).replace(/_/g, ' ')}`;

export function HookForm(p: {
  ctx: WebCtx;
  action: string;
  flags: readonly string[];
  values: HookFormValues;
  submit: string;
  editing?: boolean;
  idPrefix: string;
}): SafeHtml {
  const v = p.values;
  const id = (s: string) => `${p.idPrefix}_${s}`;
  return (
    <PostForm ctx={p.ctx} action={p.action} class="settings-form">
      <Field id={id('url')} name="url" label="URL" type="url" value={v.url} required placeholder="https://example.com/hook" />
      <Field id={id('name')} name="name" label="Name (optional)" value={v.name} />
      <Field
        id={id('token')}
        name="token"
        label="Secret token"
        type="password"
        value={v.token}
        autocomplete="off"
        hint={p.editing ? 'Leave empty to keep the current token.' : 'Sent in the X-Service-Token header.'}
      />
      <Field id={id('branch_filter')} name="push_events_branch_filter" label="Push events branch filter (optional)" value={v.push_events_branch_filter} />
      <fieldset class="mb-3">
        <legend class="text-bold mb-1">Trigger</legend>
        {p.flags.map((f) => (
          <Checkbox id={id(f)} name={f} label={flagLabel(f)} checked={!!v.flags[f]} />
        ))}
      </fieldset>
      <button type="submit" class="btn btn-primary">
        {p.submit}
      </button>
    </PostForm>
  );
}

const hookFlag = (h: WebHookRow, f: string): boolean => (h as unknown as Record<string, unknown>)[f] === 1;

export function hookValues(h: WebHookRow, flags: readonly string[]): HookFormValues {
  return {
    url: h.url,
    name: h.name ?? '',
    token: '',
    push_events_branch_filter: h.push_events_branch_filter ?? '',
    flags: Object.fromEntries(flags.map((f) => [f, hookFlag(h, f)])),
  };
}

export function HooksPage(p: {
  ctx: WebCtx;
  ref: ProjectRef;
  hooks: WebHookRow[];
  flags: readonly string[];
  values: HookFormValues;
  errors?: string[] | null;
}): SafeHtml {
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="Webhooks" tab="hooks">
      <h1 class="h2 mb-3">Webhooks</h1>
      <section aria-labelledby="hooks-list" class="mb-5">
        <h2 id="hooks-list" class="h3 mb-2">{`Project hooks (${p.hooks.length})`}</h2>
        {p.hooks.length ? (
          <ul class="Box list-style-none">
            {p.hooks.map((h) => (
              <li class="Box-row d-flex flex-items-center flex-wrap">
                <div class="flex-auto">
                  <a class="text-bold" href={`${projectUrl(p.ref)}/-/hooks/${h.id}/edit`}>
                    {h.name || h.url}
                  </a>
                  {h.name ? <span class="color-fg-muted ml-2 text-mono f6">{h.url}</span> : null}
                  <div class="f6 color-fg-muted">
                    {p.flags
                      .filter((f) => f !== 'enable_ssl_verification' && hookFlag(h, f))
                      .map(flagLabel)
                      .join(', ') || 'No events'}
                  </div>
                </div>
                <PostForm ctx={p.ctx} action={actionUrl(p.ref, `hooks/${h.id}/test`)} class="mr-2">
                  <button type="submit" class="btn btn-sm" aria-label={`Test ${h.name || h.url} with a push event`}>
                    Test
                  </button>
                </PostForm>
                <a class="btn btn-sm mr-2" href={`${projectUrl(p.ref)}/-/hooks/${h.id}/edit`} aria-label={`Edit ${h.name || h.url}`}>
                  Edit
                </a>
                <ButtonForm ctx={p.ctx} action={actionUrl(p.ref, `hooks/${h.id}/delete`)} label="Delete" aria={`Delete ${h.name || h.url}`} danger />
              </li>
            ))}
          </ul>
        ) : (
          <p class="color-fg-muted">No webhooks enabled.</p>
        )}
      </section>
      <section aria-labelledby="hooks-add">
        <h2 id="hooks-add" class="h3 mb-2">
          Add new webhook
        </h2>
        <FormErrors errors={p.errors} />
        <HookForm ctx={p.ctx} action={actionUrl(p.ref, 'hooks')} flags={p.flags} values={p.values} submit="Add webhook" idPrefix="hook" />
      </section>
    </Frame>
  );
}

/** Recent deliveries of a hook with a resend button each (project webhooks and system hooks). */
export function DeliveriesTable(p: { ctx: WebCtx; attempts: (HookAttemptRow & { event_name: string })[]; resendUrl: (attemptId: number) => string }): SafeHtml {
  if (!p.attempts.length) return <p class="color-fg-muted">No deliveries yet.</p>;
  return (
    <table class="settings-table">
      <thead>
        <tr>
          <th scope="col">Status</th>
          <th scope="col">Event</th>
          <th scope="col">Attempt</th>
          <th scope="col">Time</th>
          <th scope="col">Action</th>
        </tr>
      </thead>
      <tbody>
        {p.attempts.map((a) => {
          const ok = /^2\d\d$/.test(a.response_status);
          return (
            <tr>
              <th scope="row">
                <span class={ok ? 'Label Label--success' : 'Label Label--danger'}>{ok ? `${a.response_status} OK` : `${a.response_status} failed`}</span>
                {a.error ? <span class="f6 color-fg-muted ml-1">{a.error}</span> : null}
              </th>
              <td>{a.event_name}</td>
              <td>{`#${a.attempt} · ${a.duration_ms} ms`}</td>
              <td>
                <TimeAgo at={a.created_at} />
              </td>
              <td>
                <PostForm ctx={p.ctx} action={p.resendUrl(a.id)}>
                  <button type="submit" class="btn btn-sm" aria-label={`Resend delivery ${a.id}`}>
                    Resend
                  </button>
                </PostForm>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function HookEditPage(p: {
  ctx: WebCtx;
  ref: ProjectRef;
  hook: WebHookRow;
  flags: readonly string[];
  values: HookFormValues;
  attempts: (HookAttemptRow & { event_name: string })[];
  errors?: string[] | null;
}): SafeHtml {
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="Edit webhook" tab="hooks">
      <h1 class="h2 mb-3">Edit webhook</h1>
      <FormErrors errors={p.errors} />
      <HookForm ctx={p.ctx} action={actionUrl(p.ref, `hooks/${p.hook.id}`)} flags={p.flags} values={p.values} submit="Save changes" editing idPrefix="hook" />
      <section aria-labelledby="recent-events" class="mt-5">
        <h2 id="recent-events" class="h3 mb-2">
          Recent events
        </h2>
        <DeliveriesTable ctx={p.ctx} attempts={p.attempts} resendUrl={(id) => actionUrl(p.ref, `hooks/${p.hook.id}/events/${id}/resend`)} />
      </section>
    </Frame>
  );
}
