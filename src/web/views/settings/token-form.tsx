// The access token pieces every token page shares — personal access tokens (user settings) and the access tokens of a
// project or group (their bots' tokens): the one-time box with the new secret, the list of active tokens with Revoke,
// and the form (name, description, expiry, role, scopes). Deploy tokens share the box and the scope boxes.
import type { PatRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { ButtonForm, FormErrors, PostForm, TimeAgo } from '../components.tsx';
import { Field, Select } from './fields.tsx';

/** The secret of the token just created, with the name it was given. */
export interface CreatedToken {
  name: string;
  token: string;
  /** a deploy token's username, which git asks for with the secret */
  username?: string;
}

/** The new token, on the answer to the form only ("personal access token", "group access token", "deploy token" …). */
export function CreatedTokenNotice(p: { created: CreatedToken; what: string }): SafeHtml {
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
      <OneTimeSecret id="created_token" label={`Your new ${p.what}`} value={p.created.token} />
      <p class="note">Make sure you save it — you won't be able to access it again.</p>
    </div>
  );
}

/** A secret shown once (a token): read-only, with a copy button. */
export function OneTimeSecret(p: { id: string; label: string; value: string }): SafeHtml {
  return (
    <div class="d-flex flex-items-end mt-2">
      <div class="FormControl flex-1">
        <label class="FormControl-label" for={p.id}>
          {p.label}
        </label>
        <input class="form-control width-full text-mono" id={p.id} type="text" readonly value={p.value} />
      </div>
      <button type="button" class="btn ml-2" data-copy-target={p.id}>
        Copy token
      </button>
    </div>
  );
}

export function ScopeBoxes(p: { available: readonly string[]; checked: string[] }): SafeHtml {
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

/** An active token; a bot's has the role it holds in its project or group. */
export interface TokenListItem {
  row: PatRow;
  scopes: string[];
  accessLevel?: number;
}

/** The active tokens with a Revoke button each; the Role column when `levelNames` is given. */
export function TokenTable(p: {
  ctx: WebCtx;
  tokens: TokenListItem[];
  revokeUrl: (id: number) => string;
  levelNames?: Record<number, string>;
  empty: string;
}): SafeHtml {
  if (!p.tokens.length) return <p class="color-fg-muted mb-4">{p.empty}</p>;
  const names = p.levelNames;
  return (
    <table class="settings-table mb-4">
      <thead>
        <tr>
          <th scope="col">Token name</th>
          <th scope="col">Scopes</th>
          {names ? <th scope="col">Role</th> : null}
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
            {names ? <td>{names[t.accessLevel ?? 0] ?? String(t.accessLevel)}</td> : null}
            <td>
              <TimeAgo at={t.row.created_at} />
            </td>
            <td>
              <TimeAgo at={t.row.last_used_at} />
            </td>
            <td>{t.row.expires_at ?? 'Never'}</td>
            <td>
              <ButtonForm ctx={p.ctx} action={p.revokeUrl(t.row.id)} label="Revoke" aria={`Revoke ${t.row.name}`} danger />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export interface TokenFormValues {
  name: string;
  description: string;
  expires_at: string;
  scopes: string[];
  /** a bot's role (project and group access tokens) */
  access_level?: string;
}

/** The new-token form (GitLab's: name, description, expiration date, role for a bot, scopes). */
export function TokenForm(p: {
  ctx: WebCtx;
  action: string;
  values: TokenFormValues;
  available: readonly string[];
  /** the date input's bounds */
  minDate: string;
  maxDate: string;
  expiry: { required: boolean; hint: string };
  /** the roles a bot may be given (the viewer's own at most); no Role select without them */
  levels?: { value: string; text: string }[];
  submit: string;
  errors?: string[] | null;
}): SafeHtml {
  const v = p.values;
  return (
    <>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action={p.action} class="settings-form">
        <Field id="token_name" name="name" label="Token name" value={v.name} required maxlength={255} />
        <Field id="token_description" name="description" label="Token description (optional)" value={v.description} />
        <Field
          id="token_expires_at"
          name="expires_at"
          label="Expiration date"
          type="date"
          value={v.expires_at}
          min={p.minDate}
          max={p.maxDate}
          required={p.expiry.required}
          hint={p.expiry.hint}
        />
        {p.levels ? <Select id="token_access_level" name="access_level" label="Select a role" value={v.access_level ?? ''} options={p.levels} /> : null}
        <ScopeBoxes available={p.available} checked={v.scopes} />
        <button type="submit" class="btn btn-primary">
          {p.submit}
        </button>
      </PostForm>
    </>
  );
}
