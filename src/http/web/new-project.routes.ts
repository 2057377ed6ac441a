// The "New project" form (GitLab's /projects/new, blank project): GET /projects/new and POST /projects.
// Creation goes through ProjectsService.create, as POST /api/v4/projects; the namespaces offered are
// the user's own and the groups where the policy gives them create_projects. GET /projects and
// /projects/<slug>/ belong to the translation pages (Weblate's URLs): only the static `new` is here.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Container } from '../../container.ts';
import type { NamespaceRow } from '../../db/schema.ts';
import { restrictedLevels } from '../../domain/access/visibility.ts';
import { formErrorsOf } from '../../web/views/components.tsx';
import { allowedValue, NewProjectPage, type NewProjectValues, visibilityLimits } from '../../web/views/dashboard/new-project.tsx';
import { encodePath, HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const VISIBILITIES = ['private', 'internal', 'public'];
/** how many groups the namespace select offers (GitLab's select searches beyond that) */
const MAX_GROUPS = 100;

function field(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  return typeof v === 'string' ? v : '';
}

export function newProjectPages(app: FastifyInstance, c: Container, web: Web): void {
  /** The user's personal namespace, then the groups where they may create projects (by full path). */
  async function namespacesFor(ctx: WebCtx & { user: NonNullable<WebCtx['user']> }): Promise<NamespaceRow[]> {
    const out: NamespaceRow[] = [];
    const own = await c.users.personalNamespaceId(ctx.user.id);
    if (own !== undefined) {
      const ns = await c.resolve.namespaceById(own);
      if (ns) out.push(ns);
    }
    // the groups the user belongs to (and their descendants), then the policy's create_projects
    const groups = await (await c.groups.listQuery(ctx.actor, { min_access_level: 10, order_by: 'path', sort: 'asc' })).limit(MAX_GROUPS).execute();
    const allowed = await Promise.all(groups.map(async (g) => (await c.policy.group(ctx.actor, g)).abilities.has('create_projects')));
    out.push(...groups.filter((_, i) => allowed[i]).sort((a, b) => a.full_path.localeCompare(b.full_path)));
    return out;
  }

  async function render(
    reply: FastifyReply,
    ctx: WebCtx & { user: NonNullable<WebCtx['user']> },
    values: NewProjectValues,
    errors: string[] | null,
    status = 200,
  ) {
    const restricted = restrictedLevels(await c.settings.get(), ctx.actor);
    return web.page(reply, NewProjectPage({ ctx, namespaces: await namespacesFor(ctx), values, errors, restricted }), status);
  }

  app.get('/projects/new', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const s = await c.settings.get();
    const wanted = String((req.query as Record<string, unknown>).namespace_id ?? '');
    const own = await c.users.personalNamespaceId(ctx.user.id);
    const namespaceId = /^\d{1,10}$/.test(wanted) ? wanted : String(own ?? '');
    // the default, or the most open level the namespace and the restrictions allow below it
    const ns = namespaceId === String(own ?? '') ? undefined : await c.resolve.namespaceById(Number(namespaceId));
    const restricted = restrictedLevels(s, ctx.actor);
    const limits = visibilityLimits({ group: ns?.type === 'Group' ? { visibility: ns.visibility, kind: 'project' } : undefined, restricted });
    return render(
      reply,
      ctx,
      {
        name: '',
        path: '',
        namespace_id: namespaceId,
        visibility: allowedValue(s.default_project_visibility, limits),
        initialize_with_readme: true,
      },
      null,
    );
  });

  app.post('/projects', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const values: NewProjectValues = {
      name: field(body, 'name').trim(),
      path: field(body, 'path').trim(),
      namespace_id: field(body, 'namespace_id'),
      visibility: field(body, 'visibility'),
      initialize_with_readme: ['1', 'true', 'on'].includes(field(body, 'initialize_with_readme')),
    };
    const errors: string[] = [];
    if (!values.name) errors.push("Project name can't be blank");
    if (!/^\d{1,10}$/.test(values.namespace_id)) errors.push('Project namespace is not valid');
    if (!VISIBILITIES.includes(values.visibility)) errors.push('Visibility level must be Private, Internal or Public');
    if (errors.length) return render(reply, ctx, values, errors, 422);
    try {
      const project = await c.projects.create(ctx.actor, {
        name: values.name,
        ...(values.path ? { path: values.path } : {}),
        namespace_id: Number(values.namespace_id),
        visibility: values.visibility,
        ...(values.initialize_with_readme ? { initialize_with_readme: true } : {}),
      });
      const ns = await c.resolve.namespaceById(project.namespace_id);
      return web.redirect(reply, `/${encodePath(`${ns?.full_path ?? ''}/${project.path}`)}`, {
        kind: 'notice',
        text: `Project '${project.name}' was successfully created.`,
      });
    } catch (e) {
      // field errors, or the project limit's list (GitLab's `{"error": [...]}`)
      const messages = formErrorsOf(e);
      if (messages) return render(reply, ctx, values, messages, 422);
      throw e;
    }
  });
}
