// Project settings → Access tokens and Deploy tokens (Maintainers and up), as GitLab's pages: the active tokens
// with a revoke button each, the secret of the token just made (shown on that answer only), and the form for a
// new one.
import type { DeployTokenRow, PatRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { ButtonForm, FormErrors, PostForm, TimeAgo } from '../components.tsx';
import { Field, Select } from './fields.tsx';
import { actionUrl, Frame, type ProjectRef } from './project.tsx';

/** The secret of the token just created, with the name it was given. */
export interface CreatedToken {
  name: string;
  token: string;
  /** a deploy token's username, which git asks for with the secret */
  username?: string;
}

function CreatedNotice(p: { created: CreatedToken; what: string }): SafeHtml {
  return (
    <div class="flash flash-success mb-3" role="status">
      <p class="text-bold">{`Your new ${p.what} "${p.created.name}" has been created.`}</p>
      {p.created.username ? (
        <div class="FormControl mt-2">
          <label class="FormControl-label" for="created_username">
            Username
          </label>
          <input class="form-control width-full text-mono" id="created_username" type="text" readonly value={p.created.username} />
        </div>
      ) : null}
      <div class="d-flex flex-items-end mt-2">
        <div class="FormControl flex-1">
          <label class="FormControl-label" for="created_token">
            {`Your new ${p.what}`}
          </label>
          <input class="form-control width-full text-mono" id="created_token" type="text" readonly value={p.created.token} />
        </div>
        <button type="button" class="btn ml-2" data-copy-target="created_token">
          Copy token
        </button>
      </div>
      <p class="note">Make sure you save it — you won't be able to access it again.</p>
    </div>
  );
}

function ScopeBoxes(p: { available: readonly string[]; checked: string[] }): SafeHtml {
  return (
    <fieldset class="mb-3">
      <legend class="text-bold mb-1">Select scopes</legend>
      {p.available.map((s) => (
        <div class="form-checkbox my-1">
          <label for={`scope_${s}`}>
            <input type="checkbox" id={`scope_${s}`} name="scopes[]" value={s} checked={p.checked.includes(s)} /> {s}
          </label>
        </div>
      ))}
    </fieldset>
  );
}

// ---- access tokens ----

export interface AccessTokenFormValues {
  name: string;
  expires_at: string;
  access_level: string;
  scopes: string[];
}

export interface AccessTokensPageProps {
  ctx: WebCtx;
  ref: ProjectRef;
  tokens: { row: PatRow; scopes: string[]; accessLevel: number }[];
  available: readonly string[];
  /** the levels the viewer may give (up to their own) */
  levels: { value: string; text: string }[];
  values: AccessTokenFormValues;
  minDate: string;
  maxDate: string;
  expiryRequired: boolean;
  errors?: string[] | null;
  created?: CreatedToken | null;
  levelNames: Record<number, string>;
}

export function AccessTokensPage(p: AccessTokensPageProps): SafeHtml {
  const v = p.values;
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="Access tokens" tab="access_tokens">
      <h1 class="h2 mb-3">Project access tokens</h1>
      <p class="color-fg-muted mb-3">
        A project access token acts as a bot user who is a member of this project with the role you choose: it works with the API and with git over HTTP.
      </p>
      {p.created ? <CreatedNotice created={p.created} what="project access token" /> : null}
      <h2 class="h3 mb-2">{`Active project access tokens (${p.tokens.length})`}</h2>
      {p.tokens.length ? (
        <table class="settings-table mb-4">
          <thead>
            <tr>
              <th scope="col">Token name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {p.tokens.map((t) => (
              <tr>
                <th scope="row">{t.row.name}</th>
                <td>{t.scopes.join(', ')}</td>
                <td>{p.levelNames[t.accessLevel] ?? String(t.accessLevel)}</td>
                <td>
                  <TimeAgo at={t.row.created_at} />
                </td>
                <td>
                  <TimeAgo at={t.row.last_used_at} />
                </td>
                <td>{t.row.expires_at ?? 'Never'}</td>
                <td>
                  <ButtonForm ctx={p.ctx} action={actionUrl(p.ref, `access_tokens/${t.row.id}/revoke`)} label="Revoke" aria={`Revoke ${t.row.name}`} danger />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="color-fg-muted mb-4">This project has no active access tokens.</p>
      )}
      <h2 class="h3 mb-2">Add a project access token</h2>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'access_tokens')} class="settings-form">
        <Field id="access_token_name" name="name" label="Token name" value={v.name} required maxlength={255} />
        <Field
          id="access_token_expires_at"
          name="expires_at"
          label="Expiration date"
          type="date"
          value={v.expires_at}
          min={p.minDate}
          max={p.maxDate}
          hint={p.expiryRequired ? `Leave empty for the longest lifetime allowed (${p.maxDate}).` : 'Leave empty for a token that does not expire.'}
        />
        <Select id="access_token_access_level" name="access_level" label="Select a role" value={v.access_level} options={p.levels} />
        <ScopeBoxes available={p.available} checked={v.scopes} />
        <button type="submit" class="btn btn-primary">
          Create project access token
        </button>
      </PostForm>
    </Frame>
  );
}

// ---- deploy tokens ----

export interface DeployTokenFormValues {
  name: string;
  username: string;
  expires_at: string;
  scopes: string[];
}

export interface DeployTokensPageProps {
  ctx: WebCtx;
  ref: ProjectRef;
  tokens: { row: DeployTokenRow; scopes: string[]; username: string }[];
  available: readonly string[];
  values: DeployTokenFormValues;
  minDate: string;
  errors?: string[] | null;
  created?: CreatedToken | null;
}

export function DeployTokensPage(p: DeployTokensPageProps): SafeHtml {
  const v = p.values;
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="Deploy tokens" tab="deploy_tokens">
      <h1 class="h2 mb-3">Deploy tokens</h1>
      <p class="color-fg-muted mb-3">
        A deploy token clones the repository over HTTP with its username and secret (read_repository), without a user account; it never pushes.
      </p>
      {p.created ? <CreatedNotice created={p.created} what="deploy token" /> : null}
      <h2 class="h3 mb-2">{`Active deploy tokens (${p.tokens.length})`}</h2>
      {p.tokens.length ? (
        <table class="settings-table mb-4">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Username</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Scopes</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {p.tokens.map((t) => (
              <tr>
                <th scope="row">{t.row.name}</th>
                <td class="text-mono">{t.username}</td>
                <td>
                  <TimeAgo at={t.row.created_at} />
                </td>
                <td>{t.row.expires_at ? t.row.expires_at.slice(0, 10) : 'Never'}</td>
                <td>{t.scopes.join(', ')}</td>
                <td>
                  <ButtonForm ctx={p.ctx} action={actionUrl(p.ref, `deploy_tokens/${t.row.id}/revoke`)} label="Revoke" aria={`Revoke ${t.row.name}`} danger />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="color-fg-muted mb-4">This project has no active deploy tokens.</p>
      )}
      <h2 class="h3 mb-2">New deploy token</h2>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'deploy_tokens')} class="settings-form">
        <Field id="deploy_token_name" name="name" label="Name" value={v.name} required maxlength={255} />
        <Field
          id="deploy_token_expires_at"
          name="expires_at"
          label="Expiration date (optional)"
          type="date"
          value={v.expires_at}
          min={p.minDate}
          hint="Leave empty for a token that does not expire."
        />
        <Field
          id="deploy_token_username"
          name="username"
          label="Username (optional)"
          value={v.username}
          maxlength={255}
          hint="Leave empty for gitlab+deploy-token-<id>."
        />
        <ScopeBoxes available={p.available} checked={v.scopes} />
        <button type="submit" class="btn btn-primary">
          Create deploy token
        </button>
      </PostForm>
    </Frame>
  );
}
