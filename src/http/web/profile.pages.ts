// User settings pages: /-/profile (the profile form), /-/profile/personal_access_tokens (list, create —
// the secret shown once, on the answer to the form —, revoke) and /-/profile/keys (list, add, delete). Writes go through
// c.users.update and c.tokens exactly as PUT /users/:id and the personal access tokens API do, and c.keys as /user/keys does.
// `forgeSettingsPages` registers this module, the project settings and the admin area.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Container } from '../../container.ts';
import type { UserRow } from '../../db/schema.ts';
import { availableScopes } from '../../domain/tokens/scopes.ts';
import { defaultExpiry, maxLifetimeDays, toView } from '../../domain/tokens/tokens.service.ts';
import type { UpdateUserInput } from '../../domain/users/users.service.ts';
import { parseKeyExpiry } from '../../domain/keys/key-validation.ts';
import { Errors } from '../../lib/errors.ts';
import { addDays, todayDate } from '../../lib/time.ts';
import { type KeyFormValues, KeysPage, type ProfileValues, ProfilePage, profileValues, TokensPage } from '../../web/views/settings/profile.tsx';
import type { TokenFormValues } from '../../web/views/settings/token-form.tsx';
import { bodyOf, errorsOf, flag, list, str } from '../../web/views/settings/form-input.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const TOKEN_LIST_LIMIT = 200;
const KEY_LIST_LIMIT = 200;

export function profilePages(app: FastifyInstance, c: Container, web: Web): void {
  // ---- profile ----

  app.get('/-/profile', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    return web.page(reply, ProfilePage({ ctx, values: profileValues(ctx.user) }));
  });

  app.post('/-/profile', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const u = bodyOf(bodyOf(req.body).user);
    const values: ProfileValues = {
      name: str(u.name),
      public_email: str(u.public_email),
      bio: str(u.bio),
      location: str(u.location),
      website_url: str(u.website_url),
      job_title: str(u.job_title),
      pronouns: str(u.pronouns),
      organization: str(u.organization),
      private_profile: flag(u.private_profile),
    };
    const input: UpdateUserInput = { ...values };
    try {
      await c.users.update(ctx.actor, ctx.user.id, input);
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return web.page(reply, ProfilePage({ ctx, values, errors }), 422);
    }
    return web.redirect(reply, '/-/profile', { kind: 'notice', text: 'Profile was successfully updated' });
  });

  // ---- personal access tokens ----

  const tokensPage = async (
    reply: FastifyReply,
    ctx: WebCtx & { user: UserRow },
    opts: { values?: TokenFormValues; errors?: string[] | null; created?: { name: string; token: string }; status?: number } = {},
  ) => {
    const s = await c.settings.get();
    // administrators list every user's tokens: only one's own (not impersonation tokens) here
    const query = await c.tokens.listQuery(ctx.actor, { state: 'active', user_id: String(ctx.user.id) });
    const rows = await query.limit(TOKEN_LIST_LIMIT).execute();
    const today = todayDate();
    return web.page(
      reply,
      TokensPage({
        ctx,
        tokens: rows.filter((r) => r.impersonation === 0).map((r) => toView(r)),
        available: availableScopes(ctx.actor.isAdmin),
        values: opts.values ?? { name: '', description: '', expires_at: defaultExpiry(s), scopes: [] },
        minDate: addDays(today, 1),
        maxDate: addDays(today, maxLifetimeDays(s)),
        expiryRequired: s.require_personal_access_token_expiry,
        disabled: s.disable_personal_access_tokens,
        errors: opts.errors,
        created: opts.created,
      }),
      opts.status,
    );
  };

  app.get('/-/profile/personal_access_tokens', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    return tokensPage(reply, ctx);
  });

  app.post('/-/profile/personal_access_tokens', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const b = bodyOf(req.body);
    const values: TokenFormValues = { name: str(b.name), description: str(b.description), expires_at: str(b.expires_at).trim(), scopes: list(b.scopes) };
    try {
      const view = await c.tokens.createForSelf(ctx.actor, {
        name: values.name,
        scopes: values.scopes,
        description: values.description || undefined,
        expires_at: values.expires_at || undefined,
      });
      // The secret is on this answer only: nothing keeps it, the next view of the list cannot show it.
      return tokensPage(reply, ctx, { created: { name: view.row.name, token: view.token! } });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return tokensPage(reply, ctx, { values, errors, status: 422 });
    }
  });

  app.post('/-/profile/personal_access_tokens/:id/revoke', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const id = (req.params as { id: string }).id;
    try {
      await c.tokens.revokeById(ctx.actor, id);
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return web.redirect(reply, '/-/profile/personal_access_tokens', { kind: 'alert', text: errors.join(' ') });
    }
    return web.redirect(reply, '/-/profile/personal_access_tokens', { kind: 'notice', text: 'Revoked personal access token' });
  });

  // ---- SSH keys ----

  // The list, add and delete go through c.keys as /user/keys does (validation, key_create/key_destroy).
  const keysPage = async (reply: FastifyReply, ctx: WebCtx & { user: UserRow }, opts: { values?: KeyFormValues; errors?: string[]; status?: number } = {}) => {
    const keys = await c.keys.listQuery(ctx.user.id).limit(KEY_LIST_LIMIT).execute();
    const values = opts.values ?? { title: '', key: '', usage_type: 'auth_and_signing', expires_at: '' };
    return web.page(reply, KeysPage({ ctx, keys, values, errors: opts.errors, minDate: addDays(todayDate(), 1) }), opts.status);
  };

  app.get('/-/profile/keys', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    return keysPage(reply, ctx);
  });

  app.post('/-/profile/keys', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const b = bodyOf(req.body);
    const values: KeyFormValues = {
      title: str(b.title),
      key: str(b.key),
      usage_type: str(b.usage_type) || 'auth_and_signing',
      expires_at: str(b.expires_at).trim(),
    };
    try {
      if (parseKeyExpiry(values.expires_at) === undefined) throw Errors.invalid({ expires_at: ['is invalid'] });
      await c.keys.create(ctx.actor, ctx.user, { ...values, expires_at: values.expires_at || undefined });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return keysPage(reply, ctx, { values, errors, status: 422 });
    }
    return web.redirect(reply, '/-/profile/keys', { kind: 'notice', text: 'SSH key was successfully added' });
  });

  app.post('/-/profile/keys/:id/delete', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const id = Number((req.params as { id: string }).id);
    const key = Number.isInteger(id) ? await c.keys.mustFindOf(ctx.user.id, id).catch(() => null) : null;
    if (!key) return web.redirect(reply, '/-/profile/keys', { kind: 'alert', text: 'SSH key not found' });
    await c.keys.remove(ctx.actor, key);
    return web.redirect(reply, '/-/profile/keys', { kind: 'notice', text: 'SSH key was deleted' });
  });
}
