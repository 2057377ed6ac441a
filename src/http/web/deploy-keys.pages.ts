// Project settings → Deploy keys (/-/deploy_keys below a project's path; forms post to
// /-/p/:project_id/deploy_keys…): the API's service with the viewer's actor, so the checks (admin_project:
// 404 invisible, 403 visible), the validation and the reuse of a key the viewer may use are the API's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { DeployKeysPage, type DeployKeyFormValues } from '../../web/views/settings/deploy-keys.tsx';
import { bodyOf, errorsOf, flag, str } from '../../web/views/settings/form-input.ts';
import { projectUrl } from '../../web/views/settings/project.tsx';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const ID_RE = /^\d{1,10}$/;
const LIST_LIMIT = 200;

/** A validation error of the key behind the link ("deploy_key.title") as the form's message ("Title …"). */
function formErrors(e: unknown): string[] | null {
  if (e instanceof DomainError && e.kind === 'invalid' && e.detail && typeof e.detail === 'object') {
    const detail = Object.fromEntries(Object.entries(e.detail as Record<string, unknown>).map(([k, v]) => [k.replace(/^deploy_key\./, ''), v]));
    return errorsOf(new DomainError('invalid', e.status, detail));
  }
  return errorsOf(e);
}

export function deployKeysPages(app: FastifyInstance, c: Container, web: Web): void {
  const svc = c.deployKeys;
  const empty: DeployKeyFormValues = { title: '', key: '', can_push: false };

  /** The project of a form post, if the viewer may administer it (404 when invisible or not an id, 403 when visible). */
  const projectOf = async (req: FastifyRequest): Promise<{ ctx: WebCtx; resolved: ResolvedProject }> => {
    const ctx = await web.requireUser(req);
    const id = (req.params as { project_id: string }).project_id;
    if (!ID_RE.test(id)) throw Errors.notFound('Project');
    return { ctx, resolved: await svc.project(ctx.actor, id) };
  };
  const keyId = (req: FastifyRequest): number => {
    const id = (req.params as { key_id: string }).key_id;
    if (!ID_RE.test(id) || Number(id) > 2 ** 31 - 1) throw Errors.notFound('Deploy key');
    return Number(id);
  };
  const back = (r: ResolvedProject) => `${projectUrl(r)}/-/deploy_keys`;

  const page = async (
    reply: FastifyReply,
    ctx: WebCtx,
    r: ResolvedProject,
    opts: { values?: DeployKeyFormValues; errors?: string[] | null; status?: number } = {},
  ) => {
    const [enabled, available] = await Promise.all([
      svc.listQuery(r.project.id).limit(LIST_LIMIT).execute(),
      svc.availableQuery(ctx.actor, r.project.id).limit(LIST_LIMIT).execute(),
    ]);
    return web.page(
      reply,
      DeployKeysPage({
        ctx,
        ref: r,
        enabled: enabled.map(({ link_can_push, ...k }) => ({ ...k, can_push: link_can_push })),
        available,
        values: opts.values ?? empty,
        errors: opts.errors,
      }),
      opts.status,
    );
  };

  web.projectPage('/-/deploy_keys', async (_req, reply, { ctx, resolved }) => {
    if (!resolved.access.abilities.has('admin_project')) throw Errors.forbidden();
    return page(reply, ctx, resolved);
  });

  app.post('/-/p/:project_id/deploy_keys', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const b = bodyOf(req.body);
    const values: DeployKeyFormValues = { title: str(b.title), key: str(b.key), can_push: flag(b.can_push) };
    try {
      await svc.create(ctx.actor, resolved.project, values);
    } catch (e) {
      const errors = formErrors(e);
      if (!errors) throw e;
      return page(reply, ctx, resolved, { values, errors, status: 422 });
    }
    return web.redirect(reply, back(resolved), { kind: 'notice', text: 'Deploy key was successfully added.' });
  });

  app.post('/-/p/:project_id/deploy_keys/:key_id/enable', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { ctx, resolved } = await projectOf(req);
    const key = await svc.enable(ctx.actor, resolved.project, keyId(req));
    return web.redirect(reply, back(resolved), { kind: 'notice', text: `Deploy key '${key.title}' was enabled.` });
  });

  app.post('/-/p/:project_id/deploy_keys/:key_id/disable', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const { resolved } = await projectOf(req);
    await svc.disable(resolved.project, keyId(req));
    return web.redirect(reply, back(resolved), { kind: 'notice', text: 'Deploy key was removed from this project.' });
  });
}
