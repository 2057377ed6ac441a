// Settings → Access tokens and Deploy tokens of a project or a group (one view each, the place decides the frame,
// the words and where the forms post), as GitLab's pages: the active tokens with a revoke button each, the secret
// of the token just made (shown on that answer only), and the form for a new one.
import type { DeployTokenRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { ButtonForm, FormErrors, PostForm, TimeAgo } from '../components.tsx';
import { Field } from './fields.tsx';
import { PlaceFrame, placeAction, placeNoun, type SettingsPlace } from './place.tsx';
import { type CreatedToken, CreatedTokenNotice, ScopeBoxes, TokenForm, type TokenFormValues, type TokenListItem, TokenTable } from './token-form.tsx';

const title = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`;

// ---- access tokens ----

export interface AccessTokensPageProps {
  ctx: WebCtx;
  place: SettingsPlace;
  tokens: TokenListItem[];
  available: readonly string[];
  /** the levels the viewer may give (up to their own) */
  levels: { value: string; text: string }[];
  values: TokenFormValues;
  minDate: string;
  maxDate: string;
  expiryRequired: boolean;
  errors?: string[] | null;
  created?: CreatedToken | null;
  levelNames: Record<number, string>;
}

export function AccessTokensPage(p: AccessTokensPageProps): SafeHtml {
  const noun = placeNoun(p.place);
  return (
    <PlaceFrame ctx={p.ctx} place={p.place} title="Access tokens" tab="access_tokens">
      <h1 class="h2 mb-3">{`${title(noun)} access tokens`}</h1>
      <p class="color-fg-muted mb-3">
        {`A ${noun} access token acts as a bot user who is a member of this ${noun} with the role you choose: it works with the API and with git over HTTP.`}
      </p>
      {p.created ? <CreatedTokenNotice created={p.created} what={`${noun} access token`} /> : null}
      <h2 class="h3 mb-2">{`Active ${noun} access tokens (${p.tokens.length})`}</h2>
      <TokenTable
        ctx={p.ctx}
        tokens={p.tokens}
        revokeUrl={(id) => placeAction(p.place, `access_tokens/${id}/revoke`)}
        levelNames={p.levelNames}
        empty={`This ${noun} has no active access tokens.`}
      />
      <h2 class="h3 mb-2">{`Add a ${noun} access token`}</h2>
      <TokenForm
        ctx={p.ctx}
        action={placeAction(p.place, 'access_tokens')}
        values={p.values}
        available={p.available}
        minDate={p.minDate}
        maxDate={p.maxDate}
        expiry={{
          required: false,
          hint: p.expiryRequired ? `Leave empty for the longest lifetime allowed (${p.maxDate}).` : 'Leave empty for a token that does not expire.',
        }}
        levels={p.levels}
        submit={`Create ${noun} access token`}
        errors={p.errors}
      />
    </PlaceFrame>
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
  place: SettingsPlace;
  tokens: { row: DeployTokenRow; scopes: string[]; username: string }[];
  available: readonly string[];
  values: DeployTokenFormValues;
  minDate: string;
  errors?: string[] | null;
  created?: CreatedToken | null;
}

export function DeployTokensPage(p: DeployTokensPageProps): SafeHtml {
  const v = p.values;
  const noun = placeNoun(p.place);
  return (
    <PlaceFrame ctx={p.ctx} place={p.place} title="Deploy tokens" tab="deploy_tokens">
      <h1 class="h2 mb-3">Deploy tokens</h1>
      <p class="color-fg-muted mb-3">
        {noun === 'project'
          ? 'A deploy token clones the repository over HTTP with its username and secret (read_repository), without a user account; it never pushes.'
          : "A group deploy token clones the repositories of the group's projects and its subgroups' over HTTP with its username and secret (read_repository), without a user account; it never pushes."}
      </p>
      {p.created ? <CreatedTokenNotice created={p.created} what="deploy token" /> : null}
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
                  <ButtonForm
                    ctx={p.ctx}
                    action={placeAction(p.place, `deploy_tokens/${t.row.id}/revoke`)}
                    label="Revoke"
                    aria={`Revoke ${t.row.name}`}
                    danger
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="color-fg-muted mb-4">{`This ${noun} has no active deploy tokens.`}</p>
      )}
      <h2 class="h3 mb-2">New deploy token</h2>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action={placeAction(p.place, 'deploy_tokens')} class="settings-form">
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
    </PlaceFrame>
  );
}
