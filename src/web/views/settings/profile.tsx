// User settings: the profile form, personal access tokens (the shared token pieces: the new one shown once) and the
// SSH keys page.
import type { KeyRow, UserRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { Child, SafeHtml } from '../../jsx/jsx-runtime.ts';
import { ButtonForm, FormErrors, PostForm, Tabs, TimeAgo } from '../components.tsx';
import { Layout } from '../layout.tsx';
import { Field, Select, TextArea } from './fields.tsx';
import { type CreatedToken, CreatedTokenNotice, TokenForm, type TokenFormValues, type TokenListItem, TokenTable } from './token-form.tsx';

export type SettingsTab = 'profile' | 'tokens' | 'keys';

function SettingsFrame(p: { ctx: WebCtx; title: string; tab: SettingsTab; children?: Child }): SafeHtml {
  return (
    <Layout ctx={p.ctx} title={p.title} crumbs={[{ text: 'User settings', href: '/-/profile' }, { text: p.title }]}>
      <Tabs
        label="User settings"
        tabs={[
          { href: '/-/profile', text: 'Profile', current: p.tab === 'profile' },
          { href: '/-/profile/personal_access_tokens', text: 'Access tokens', current: p.tab === 'tokens' },
          { href: '/-/profile/keys', text: 'SSH keys', current: p.tab === 'keys' },
        ]}
      />
      {p.children}
    </Layout>
  );
}

/** What the profile form shows: the stored row, or what the user typed when it was refused. */
export interface ProfileValues {
  name: string;
  public_email: string;
  bio: string;
  location: string;
  website_url: string;
  job_title: string;
  pronouns: string;
  organization: string;
  private_profile: boolean;
}

export function profileValues(u: UserRow): ProfileValues {
  return {
    name: u.name,
    public_email: u.public_email ?? '',
    bio: u.bio ?? '',
    location: u.location ?? '',
    website_url: u.website_url ?? '',
    job_title: u.job_title ?? '',
    pronouns: u.pronouns ?? '',
    organization: u.organization ?? '',
    private_profile: u.private_profile === 1,
  };
}

export function ProfilePage(p: { ctx: WebCtx & { user: UserRow }; values: ProfileValues; errors?: string[] | null }): SafeHtml {
  const v = p.values;
  const email = p.ctx.user.email;
  return (
    <SettingsFrame ctx={p.ctx} title="Edit profile" tab="profile">
      <h1 class="h2 mb-3">Edit profile</h1>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action="/-/profile" class="settings-form">
        <Field id="user_name" name="user[name]" label="Full name" value={v.name} required autocomplete="name" />
        <div class="FormControl mb-3">
          <label class="FormControl-label" for="user_public_email">
            Public email
          </label>
          <select class="form-select" id="user_public_email" name="user[public_email]">
            <option value="" selected={v.public_email === ''}>
              Do not show on profile
            </option>
            <option value={email} selected={v.public_email === email}>
              {email}
            </option>
            {v.public_email && v.public_email !== email ? (
              <option value={v.public_email} selected>
                {v.public_email}
              </option>
            ) : null}
          </select>
        </div>
        <Field id="user_pronouns" name="user[pronouns]" label="Pronouns" value={v.pronouns} />
        <Field id="user_job_title" name="user[job_title]" label="Job title" value={v.job_title} />
        <Field id="user_organization" name="user[organization]" label="Organization" value={v.organization} />
        <Field id="user_location" name="user[location]" label="Location" value={v.location} />
        <Field id="user_website_url" name="user[website_url]" label="Website URL" value={v.website_url} type="url" placeholder="https://example.com" />
        <TextArea id="user_bio" name="user[bio]" label="Bio" value={v.bio} hint="Tell us about yourself in fewer than 250 characters." />
        <div class="form-checkbox">
          <label for="user_private_profile">
            <input type="checkbox" id="user_private_profile" name="user[private_profile]" value="1" checked={v.private_profile} /> Private profile
          </label>
          <p class="note">Don't display activity-related personal information on your profile.</p>
        </div>
        <button type="submit" class="btn btn-primary">
          Update profile settings
        </button>
      </PostForm>
    </SettingsFrame>
  );
}

export interface TokensPageProps {
  ctx: WebCtx & { user: UserRow };
  tokens: TokenListItem[];
  /** the scopes this user may give a token */
  available: string[];
  values: TokenFormValues;
  /** the date input's bounds */
  minDate: string;
  maxDate: string;
  expiryRequired: boolean;
  /** personal access tokens are disabled by the administrator */
  disabled: boolean;
  errors?: string[] | null;
  /** the secret of the token just created: shown on this page only */
  created?: CreatedToken | null;
}

export function TokensPage(p: TokensPageProps): SafeHtml {
  return (
    <SettingsFrame ctx={p.ctx} title="Personal access tokens" tab="tokens">
      <h1 class="h2 mb-3">Personal access tokens</h1>
      {p.created ? <CreatedTokenNotice created={p.created} what="personal access token" /> : null}
      <h2 class="h3 mb-2">{`Active personal access tokens (${p.tokens.length})`}</h2>
      <TokenTable
        ctx={p.ctx}
        tokens={p.tokens}
        revokeUrl={(id) => `/-/profile/personal_access_tokens/${id}/revoke`}
        empty="This user has no active personal access tokens."
      />
      <h2 class="h3 mb-2">Add a personal access token</h2>
      {p.disabled ? (
        <p class="flash flash-warn">Personal access tokens have been disabled by your administrator.</p>
      ) : (
        <TokenForm
          ctx={p.ctx}
          action="/-/profile/personal_access_tokens"
          values={p.values}
          available={p.available}
          minDate={p.minDate}
          maxDate={p.maxDate}
          expiry={{
            required: p.expiryRequired,
            hint: p.expiryRequired ? `A token must expire; at the latest on ${p.maxDate}.` : 'Leave empty for a token that expires tomorrow.',
          }}
          submit="Create personal access token"
          errors={p.errors}
        />
      )}
    </SettingsFrame>
  );
}

/** What the SSH key form shows: empty, or what the user typed when the key was refused. */
export interface KeyFormValues {
  title: string;
  key: string;
  usage_type: string;
  expires_at: string;
}

export interface KeysPageProps {
  ctx: WebCtx & { user: UserRow };
  keys: KeyRow[];
  values: KeyFormValues;
  errors?: string[] | null;
  /** the form's least expiry date (tomorrow) */
  minDate: string;
}

const USAGE_TYPES = [
  { value: 'auth_and_signing', text: 'Authentication & Signing' },
  { value: 'auth', text: 'Authentication' },
  { value: 'signing', text: 'Signing' },
];
const usageText = (v: string) => USAGE_TYPES.find((u) => u.value === v)?.text ?? v;

export function KeysPage(p: KeysPageProps): SafeHtml {
  const v = p.values;
  return (
    <SettingsFrame ctx={p.ctx} title="SSH keys" tab="keys">
      <h1 class="h2 mb-3">SSH keys</h1>
      <p class="color-fg-muted mb-3">SSH keys allow you to establish a secure connection between your computer and Hearth: clone and push over SSH.</p>
      <h2 class="h3 mb-2">Add an SSH key</h2>
      <FormErrors errors={p.errors} />
      <PostForm ctx={p.ctx} action="/-/profile/keys" class="settings-form">
        <TextArea
          id="key_key"
          name="key"
          label="Key"
          value={v.key}
          rows={5}
          hint="Paste your public SSH key, which is usually contained in the file '~/.ssh/id_ed25519.pub' or '~/.ssh/id_rsa.pub' and begins with 'ssh-ed25519' or 'ssh-rsa'. Do not paste your private SSH key."
        />
        <Field id="key_title" name="title" label="Title" value={v.title} required maxlength={255} hint="Example: MacBook key" />
        <Select id="key_usage_type" name="usage_type" label="Usage type" value={v.usage_type} options={USAGE_TYPES} />
        <Field
          id="key_expires_at"
          name="expires_at"
          label="Expiration date"
          type="date"
          value={v.expires_at}
          min={p.minDate}
          hint="Optional. The key can no longer be used after this date."
        />
        <button type="submit" class="btn btn-primary">
          Add key
        </button>
      </PostForm>
      <h2 class="h3 mt-4 mb-2">{`Your SSH keys (${p.keys.length})`}</h2>
      {p.keys.length ? (
        <table class="settings-table mb-4">
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Fingerprint</th>
              <th scope="col">Usage type</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {p.keys.map((k) => (
              <tr>
                <th scope="row">{k.title}</th>
                <td class="text-mono">{k.fingerprint_sha256}</td>
                <td>{usageText(k.usage_type)}</td>
                <td>
                  <TimeAgo at={k.created_at} />
                </td>
                <td>
                  <TimeAgo at={k.last_used_at} />
                </td>
                <td>{k.expires_at ? k.expires_at.slice(0, 10) : 'Never'}</td>
                <td>
                  <ButtonForm ctx={p.ctx} action={`/-/profile/keys/${k.id}/delete`} label="Delete" aria={`Delete ${k.title}`} danger />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="color-fg-muted mb-4">There are no SSH keys with access to your account.</p>
      )}
    </SettingsFrame>
  );
}
