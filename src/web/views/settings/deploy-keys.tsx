// Project settings → Deploy keys (Maintainers and up), as GitLab's section of the repository settings:
// the keys enabled on the project (write access or read-only, remove), a form for a new key with the
// write-access checkbox, and the keys the viewer may enable here (of their other projects, and public ones).
import type { KeyRow } from '../../../db/schema.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { ButtonForm, FormErrors, PostForm, TimeAgo } from '../components.tsx';
import { Checkbox, Field, TextArea } from './fields.tsx';
import { actionUrl, Frame, type ProjectRef } from './project.tsx';

export interface DeployKeyFormValues {
  title: string;
  key: string;
  can_push: boolean;
}

export interface EnabledDeployKey extends KeyRow {
  can_push: number;
}

function KeyLine(p: { k: KeyRow }): SafeHtml {
  return (
    <div class="flex-auto">
      <span class="text-bold">{p.k.title}</span>
      {p.k.public ? <span class="Label ml-2">Public</span> : null}
      <div class="f6 color-fg-muted text-mono">{p.k.fingerprint_sha256}</div>
      <div class="f6 color-fg-muted">
        Created <TimeAgo at={p.k.created_at} /> · last used <TimeAgo at={p.k.last_used_at} />
        {p.k.expires_at ? ` · expires ${p.k.expires_at.slice(0, 10)}` : ''}
      </div>
    </div>
  );
}

export function DeployKeysPage(p: {
  ctx: WebCtx;
  ref: ProjectRef;
  enabled: EnabledDeployKey[];
  available: KeyRow[];
  values: DeployKeyFormValues;
  errors?: string[] | null;
}): SafeHtml {
  const privateKeys = p.available.filter((k) => !k.public);
  const publicKeys = p.available.filter((k) => k.public);
  const availableList = (keys: KeyRow[], empty: string) =>
    keys.length ? (
      <ul class="Box list-style-none">
        {keys.map((k) => (
          <li class="Box-row d-flex flex-items-center flex-wrap">
            <KeyLine k={k} />
            <ButtonForm ctx={p.ctx} action={actionUrl(p.ref, `deploy_keys/${k.id}/enable`)} label="Enable" aria={`Enable ${k.title}`} />
          </li>
        ))}
      </ul>
    ) : (
      <p class="color-fg-muted">{empty}</p>
    );
  return (
    <Frame ctx={p.ctx} ref={p.ref} title="Deploy keys" tab="deploy_keys">
      <h1 class="h2 mb-3">Deploy keys</h1>
      <p class="color-fg-muted mb-3">
        Deploy keys read the repository over SSH without a user account; with write access they push as well (protected branches excepted).
      </p>
      <section aria-labelledby="deploy-keys-enabled" class="mb-5">
        <h2 id="deploy-keys-enabled" class="h3 mb-2">{`Enabled deploy keys (${p.enabled.length})`}</h2>
        {p.enabled.length ? (
          <ul class="Box list-style-none">
            {p.enabled.map((k) => (
              <li class="Box-row d-flex flex-items-center flex-wrap">
                <KeyLine k={k} />
                <span class={k.can_push ? 'Label Label--attention mr-2' : 'Label mr-2'}>{k.can_push ? 'Write access' : 'Read-only'}</span>
                <ButtonForm ctx={p.ctx} action={actionUrl(p.ref, `deploy_keys/${k.id}/disable`)} label="Remove" aria={`Remove ${k.title}`} danger />
              </li>
            ))}
          </ul>
        ) : (
          <p class="color-fg-muted">No deploy keys are enabled on this project.</p>
        )}
      </section>
      <section aria-labelledby="deploy-keys-add" class="mb-5">
        <h2 id="deploy-keys-add" class="h3 mb-2">
          Add new deploy key
        </h2>
        <FormErrors errors={p.errors} />
        <PostForm ctx={p.ctx} action={actionUrl(p.ref, 'deploy_keys')} class="settings-form">
          <Field id="deploy_key_title" name="title" label="Title" value={p.values.title} required maxlength={255} />
          <TextArea
            id="deploy_key_key"
            name="key"
            label="Key"
            value={p.values.key}
            rows={5}
            hint="Paste a public key (ssh-ed25519, ssh-rsa, ecdsa-sha2-…); a key already in use elsewhere is enabled here if you may use it."
          />
          <Checkbox id="deploy_key_can_push" name="can_push" label="Grant write permissions to this key" checked={p.values.can_push} />
          <button type="submit" class="btn btn-primary">
            Add key
          </button>
        </PostForm>
      </section>
      <section aria-labelledby="deploy-keys-private" class="mb-5">
        <h2 id="deploy-keys-private" class="h3 mb-2">
          Privately accessible deploy keys
        </h2>
        {availableList(privateKeys, 'No deploy keys of your other projects to enable here.')}
      </section>
      <section aria-labelledby="deploy-keys-public">
        <h2 id="deploy-keys-public" class="h3 mb-2">
          Public deploy keys
        </h2>
        {availableList(publicKeys, 'No public deploy keys to enable here.')}
      </section>
    </Frame>
  );
}
