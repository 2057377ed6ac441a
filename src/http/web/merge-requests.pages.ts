// Merge request pages: the project's list and the dashboard's, the new merge request form, the merge
// request page (Overview / Commits / Changes) and its forms (merge, approve, revoke, close, reopen,
// comment), and the markdown preview. Every read and write goes through the merge request services
// with the viewer's actor — the same code as the API's routes (`c.mergeRequests`, `c.merges`, `c.notes`).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SelectQueryBuilder } from 'kysely';
import type { Container } from '../../container.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import type { RecordEvent } from '../../domain/merge-requests/approvals.ts';
import {
  canReadMergeRequests,
  type MergeRequestFilters,
  type MergeRequestListScope,
  type MergeRequestsQB,
} from '../../domain/merge-requests/merge-requests-query.ts';
import type { FoundMergeRequest } from '../../domain/merge-requests/merge-requests.service.ts';
import { createNoteRefusal } from '../../domain/notes/notes-access.ts';
import { noteableOf } from '../../domain/notes/noteable.ts';
import { settingsOf } from '../../domain/core/project-settings.ts';
import { diffBetween, diffLimits } from '../../git/diff.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { diffCache } from './mr-diff-cache.ts';
import { presentMergeRequest } from '../platform/merge-requests/present.ts';
import { renderDiff } from '../../web/diff.ts';
import { render } from '../../web/jsx/jsx-runtime.ts';
import { formErrorsOf, Markdown } from '../../web/views/components.tsx';
import { mrHref } from '../../web/views/merge-requests/common.tsx';
import {
  DASHBOARD_TABS,
  DashboardMergeRequestsPage,
  type DashboardScope,
  type ListFilters,
  ProjectMergeRequestsPage,
  STATE_TABS,
} from '../../web/views/merge-requests/list.tsx';
import { NewMergeRequestPage, type NewMergeRequestValues } from '../../web/views/merge-requests/new.tsx';
import { MergeRequestPage, type MergeRequestPageProps, type MergeRequestTab } from '../../web/views/merge-requests/show.tsx';
import { idOf, pageOf, projectRef, str } from './page-params.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const PER_PAGE = 20;
/** a page of the discussion: the newest notes beyond this are a later concern (GitLab paginates too) */
const NOTES_LIMIT = 500;

type Body = Record<string, unknown>;

/** A checkbox: checked is any value but the off ones. */
const checked = (v: unknown): boolean => {
  const s = str(v).toLowerCase();
  return s !== '' && s !== '0' && s !== 'false' && s !== 'off';
};

/** Form errors of a domain error: field maps, lists ("Source branch … does not exist"), messages. */
function errorsOf(e: unknown): string[] | null {
  if (e instanceof DomainError && (e.status === 403 || e.status === 404 || e.status === 401)) return null;
  return formErrorsOf(e);
}

/** count(*) of a list query per state, one query (the tabs' counters). */
async function countByState(q: MergeRequestsQB): Promise<Record<ListFilters['state'], number>> {
  const rows = (await (q as unknown as SelectQueryBuilder<any, any, any>)
    .clearSelect()
    .clearOrderBy()
    .select((eb) => ['merge_requests.state', eb.fn.countAll().as('n')])
    .groupBy('merge_requests.state')
    .execute()) as { state: string; n: number | string }[];
  const by = new Map(rows.map((r) => [r.state, Number(r.n)]));
  const opened = by.get('opened') ?? 0;
  const merged = by.get('merged') ?? 0;
  const closed = by.get('closed') ?? 0;
  return { opened, merged, closed, all: [...by.values()].reduce((a, b) => a + b, 0) };
}

export function mergeRequestPages(app: FastifyInstance, c: Container, web: Web): void {
  const query = c.mergeRequestsQuery;

  /** One page of a list query (one row more than shown, to know whether there is a next page). */
  async function pageOfList(q: MergeRequestsQB, page: number) {
    const rows = await q
      .limit(PER_PAGE + 1)
      .offset((page - 1) * PER_PAGE)
      .execute();
    const hasNext = rows.length > PER_PAGE;
    const views = await c.mergeRequests.views(hasNext ? rows.slice(0, PER_PAGE) : rows);
    return { views, hasNext };
  }

  // ---- lists -------------------------------------------------------------------------------------

  web.projectPage('/-/merge_requests', async (req, reply, { ctx, resolved }) => {
    // authorize! :read_merge_request (the merge request feature's level included), as the API's list
    if (!canReadMergeRequests(ctx.actor, resolved.project, resolved.access)) throw Errors.forbidden();
    const q = req.query as Record<string, unknown>;
    const stateParam = str(q.state);
    const filters: ListFilters = {
      state: STATE_TABS.some(([s]) => s === stateParam) ? (stateParam as ListFilters['state']) : 'opened',
      label_name: str(q.label_name).slice(0, 255),
      author_username: str(q.author_username).slice(0, 255),
      search: str(q.search).slice(0, 255),
    };
    const where: MergeRequestListScope = { kind: 'project', project: resolved.project };
    const f: MergeRequestFilters = {
      labels: filters.label_name ? [filters.label_name] : undefined,
      authorUsername: filters.author_username || undefined,
      search: filters.search || undefined,
      orderBy: 'created_at',
      sort: 'desc',
    };
    const page = pageOf(q.page);
    const [listQ, allQ] = await Promise.all([
      query.list(ctx.actor, where, { ...f, state: filters.state }),
      query.list(ctx.actor, where, { ...f, state: 'all' }),
    ]);
    const [{ views, hasNext }, counts] = await Promise.all([pageOfList(listQ, page), countByState(allQ)]);
    return web.page(
      reply,
      ProjectMergeRequestsPage({
        ctx,
        project: projectRef(resolved),
        views,
        counts,
        filters,
        page,
        hasNext,
        canCreate: !!ctx.user && c.mergeRequests.canCreateFrom(ctx.actor, resolved),
      }),
    );
  });

  app.get('/dashboard/merge_requests', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const q = req.query as Record<string, unknown>;
    const scopeParam = str(q.scope);
    const scope: DashboardScope = DASHBOARD_TABS.some(([s]) => s === scopeParam) ? (scopeParam as DashboardScope) : 'assigned';
    const stateParam = str(q.state);
    const state = STATE_TABS.some(([s]) => s === stateParam) ? (stateParam as ListFilters['state']) : 'opened';
    const apiScope = scope === 'authored' ? 'created_by_me' : scope === 'assigned' ? 'assigned_to_me' : 'reviews_for_me';
    const page = pageOf(q.page);
    const list = await query.list(ctx.actor, { kind: 'all' }, { scope: apiScope, state, orderBy: 'updated_at', sort: 'desc' });
    const { views, hasNext } = await pageOfList(list, page);
    return web.page(reply, DashboardMergeRequestsPage({ ctx, scope, state, views, page, hasNext }));
  });

  // ---- new merge request -------------------------------------------------------------------------

  async function branchesOf(resolved: ResolvedProject): Promise<string[]> {
    const repo = c.repos.repository(resolved.project);
    if (!repo.exists()) return [];
    return (await repo.branches()).map((b) => b.short);
  }

  /** The project of a new merge request form: the viewer must be allowed to create one (403 otherwise). */
  function requireCreate(ctx: WebCtx, resolved: ResolvedProject): void {
    if (!canReadMergeRequests(ctx.actor, resolved.project, resolved.access)) throw Errors.forbidden();
    if (!c.mergeRequests.canCreateFrom(ctx.actor, resolved)) throw Errors.forbidden();
  }

  web.projectPage('/-/merge_requests/new', async (req, reply, { resolved }) => {
    const ctx = await web.requireUser(req);
    requireCreate(ctx, resolved);
    const q = req.query as Record<string, unknown>;
    const branches = await branchesOf(resolved);
    const target = str(q.target_branch) || resolved.project.default_branch || branches[0] || '';
    const source = str(q.source_branch) || branches.find((b) => b !== target) || '';
    const values: NewMergeRequestValues = { source_branch: source, target_branch: target, title: str(q.title), description: '' };
    return web.page(reply, NewMergeRequestPage({ ctx, project: projectRef(resolved), branches, values }));
  });

  app.post('/-/p/:project_id/merge_requests', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const id = idOf((req.params as { project_id: string }).project_id);
    if (id === null) return web.notFound(req, reply);
    const resolved = await c.resolve.project(ctx.actor, id);
    requireCreate(ctx, resolved);
    const b = (req.body ?? {}) as Body;
    const values: NewMergeRequestValues = {
      source_branch: str(b.source_branch),
      target_branch: str(b.target_branch),
      title: str(b.title),
      // the description as typed (only a trailing newline of the textarea trimmed)
      description: typeof b.description === 'string' ? b.description.replace(/\s+$/, '') : '',
    };
    try {
      const found = await c.mergeRequests.create(ctx.actor, String(id), {
        title: values.title,
        source_branch: values.source_branch,
        target_branch: values.target_branch,
        description: values.description || undefined,
      });
      // MergeRequests::AfterCreateService: the first mergeability check, in the background
      c.merges.checkIfUnchecked(found.mr);
      return web.redirect(reply, mrHref(projectRef(found), found.mr.iid), { kind: 'notice', text: 'The merge request was created.' });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      const branches = await branchesOf(resolved);
      return web.page(reply, NewMergeRequestPage({ ctx, project: projectRef(resolved), branches, values, errors }), 422);
    }
  });

  app.post('/-/markdown_preview', { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const b = (req.body ?? {}) as Body;
    const text = [b.text, b.description, b.body].find((v) => typeof v === 'string') as string | undefined;
    const projectId = idOf(b.project_id);
    // a project's context (relative links) only for a project the viewer sees
    const project = projectId === null ? null : projectRef(await c.resolve.project(ctx.actor, projectId));
    const html = text?.trim()
      ? await ctx.markdown.fill(render(Markdown({ text, ctx, project: project ? { fullPath: project.fullPath, defaultBranch: project.defaultBranch } : null })))
      : '<p class="color-fg-muted">Nothing to preview.</p>';
    return reply
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; img-src 'self' data: https: http:; style-src 'self' 'unsafe-inline'")
      .type('text/html; charset=utf-8')
      .send(html);
  });

  // ---- one merge request ---------------------------------------------------------------------------

  async function overviewProps(ctx: WebCtx, found: FoundMergeRequest): Promise<Omit<MergeRequestPageProps, 'mr' | 'tab'>> {
    const [canUpdate, approvalState, notes] = await Promise.all([
      c.mergeRequests.canUpdate(ctx.actor, found),
      c.approvals.state(ctx.actor, found),
      c.notes.list(ctx.actor, noteableOf('MergeRequest', found, found.mr), { orderBy: 'created_at', sort: 'asc' }).then((q) => q.limit(NOTES_LIMIT).execute()),
    ]);
    const users = await c.users.basicByIds([...notes.map((n) => n.author_id), ...approvalState.approvals.map((a) => a.user_id)]);
    const required = Number((settingsOf(found.project) as Record<string, unknown>).approvals_before_merge ?? 0) || 0;
    return {
      ctx,
      project: projectRef(found),
      canUpdate,
      canComment: createNoteRefusal(ctx.actor, noteableOf('MergeRequest', found, found.mr)) === null,
      approvals: {
        approvedBy: approvalState.approvals.map((a) => users.get(a.user_id)).filter((u) => u !== undefined),
        required,
        userHasApproved: approvalState.userHasApproved,
        userCanApprove: approvalState.userCanApprove,
      },
      notes,
      users,
    };
  }

  /** The cached, rendered diff of a merge request's source against its base (keyed by the two shas). */
  async function renderedDiff(found: FoundMergeRequest) {
    const source = await c.mergeRequests.diffSource(found);
    if (!source) return undefined;
    const key = `${found.project.id}:${source.base}..${source.head}`;
    return diffCache.get(key, async () => {
      const diff = await diffBetween(source.repo, source.base, source.head, diffLimits(await c.settings.get(), false));
      return renderDiff(diff.files);
    });
  }

  function showMergeRequest(tab: MergeRequestTab) {
    return async (_req: FastifyRequest, reply: FastifyReply, args: { ctx: WebCtx; resolved: ResolvedProject; params: Record<string, string | undefined> }) => {
      const { ctx, resolved, params } = args;
      const iid = idOf(params.iid);
      if (iid === null) return web.notFound(_req, reply);
      const found = await c.mergeRequests.find(ctx.actor, resolved.project.id, iid);
      // check_mergeability(async: true) for callers who may update it, as the API's GET
      if (ctx.actor.user && (ctx.actor.isAdmin || found.access.abilities.has('push_code'))) c.merges.checkIfUnchecked(found.mr);
      const mr = await presentMergeRequest(c, ctx.actor, found);
      const base = { ctx, project: projectRef(found), mr, tab, canUpdate: false, canComment: false };
      if (tab === 'commits') return web.page(reply, MergeRequestPage({ ...base, commits: await c.mergeRequests.commits(found) }));
      if (tab === 'diffs') return web.page(reply, MergeRequestPage({ ...base, diff: await renderedDiff(found) }));
      return web.page(reply, MergeRequestPage({ ...(await overviewProps(ctx, found)), mr, tab }));
    };
  }

  web.projectPage('/-/merge_requests/:iid', showMergeRequest('overview'));
  web.projectPage('/-/merge_requests/:iid/commits', showMergeRequest('commits'));
  web.projectPage('/-/merge_requests/:iid/diffs', showMergeRequest('diffs'));

  // ---- the forms of a merge request ----------------------------------------------------------------

  const ONE = '/-/p/:project_id/merge_requests/:iid';

  /** The merge request of a form, found as the viewer sees it (404/403 pages otherwise). */
  async function formTarget(req: FastifyRequest): Promise<{ ctx: WebCtx; found: FoundMergeRequest; href: string } | null> {
    const ctx = await web.requireUser(req);
    const p = req.params as { project_id: string; iid: string };
    const id = idOf(p.project_id);
    const iid = idOf(p.iid);
    if (id === null || iid === null) return null;
    const found = await c.mergeRequests.find(ctx.actor, id, iid);
    return { ctx, found, href: mrHref(projectRef(found), found.mr.iid) };
  }

  /** A refused action: 401 from a service means "not allowed" to a signed-in viewer — a 403 page. */
  const refused = (e: unknown): never => {
    if (e instanceof DomainError && e.status === 401) throw Errors.forbidden();
    throw e;
  };

  /** What a form's failure tells the viewer (a flash), or a rethrow for 403/404 and the unexpected. */
  function alertOf(e: unknown, fallback: string): string {
    if (!(e instanceof DomainError) || e.status === 404 || e.status === 403 || e.status >= 500) throw e;
    if (e.status === 401) refused(e);
    const errors = errorsOf(e);
    return errors?.length ? errors.join(' ') : fallback;
  }

  app.post(`${ONE}/merge`, { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const b = (req.body ?? {}) as Body;
    const sha = str(b.sha);
    let state: string;
    try {
      const mr = await c.merges.merge(t.ctx.actor, t.found, {
        squash: checked(b.squash),
        should_remove_source_branch: checked(b.should_remove_source_branch),
        sha: /^[0-9a-f]{40,64}$/.test(sha) ? sha : undefined,
      });
      state = mr.state;
    } catch (e) {
      return web.redirect(reply, t.href, { kind: 'alert', text: alertOf(e, 'The merge request could not be merged.') });
    }
    const merged = state === 'merged';
    return web.redirect(reply, t.href, {
      kind: merged ? 'notice' : 'alert',
      text: merged ? 'The merge request was merged.' : 'The merge request could not be merged yet; it will be merged when its checks pass.',
    });
  });

  const recordEvent =
    (ctx: WebCtx): RecordEvent =>
    (trx, mr, action) =>
      c.mergeRequests.recordEvent(trx, ctx.actor, mr, action);

  app.post(`${ONE}/approve`, { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    try {
      await c.approvals.approve(t.ctx.actor, t.found, undefined, recordEvent(t.ctx));
    } catch (e) {
      // 401 here is GitLab's "already approved, or the author may not"
      if (e instanceof DomainError && e.status === 401) return web.redirect(reply, t.href, { kind: 'alert', text: 'You cannot approve this merge request.' });
      return web.redirect(reply, t.href, { kind: 'alert', text: alertOf(e, 'The merge request could not be approved.') });
    }
    return web.redirect(reply, t.href, { kind: 'notice', text: 'You approved the merge request.' });
  });

  app.post(`${ONE}/unapprove`, { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    try {
      await c.approvals.unapprove(t.ctx.actor, t.found, recordEvent(t.ctx));
    } catch (e) {
      if (e instanceof DomainError && e.status === 404)
        return web.redirect(reply, t.href, { kind: 'alert', text: 'You have not approved this merge request.' });
      return web.redirect(reply, t.href, { kind: 'alert', text: alertOf(e, 'The approval could not be revoked.') });
    }
    return web.redirect(reply, t.href, { kind: 'notice', text: 'You revoked your approval.' });
  });

  for (const [action, event, done] of [
    ['close', 'close', 'The merge request was closed.'],
    ['reopen', 'reopen', 'The merge request was reopened.'],
  ] as const) {
    app.post(`${ONE}/${action}`, { config: PAGE, schema: HIDDEN }, async (req, reply) => {
      const t = await formTarget(req);
      if (!t) return web.notFound(req, reply);
      try {
        const updated = await c.mergeRequests.update(t.ctx.actor, t.found, { state_event: event });
        c.merges.checkIfUnchecked(updated.mr);
      } catch (e) {
        return web.redirect(reply, t.href, {
          kind: 'alert',
          text: alertOf(e, `The merge request could not be ${action === 'close' ? 'closed' : 'reopened'}.`),
        });
      }
      return web.redirect(reply, t.href, { kind: 'notice', text: done });
    });
  }

  app.post(`${ONE}/notes`, { config: PAGE, schema: HIDDEN }, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const b = (req.body ?? {}) as Body;
    const body = typeof b.body === 'string' ? b.body.replace(/\s+$/, '') : '';
    let noteId: number;
    try {
      if (!body.trim()) throw Errors.invalid({ note: ["can't be blank"] });
      noteId = (await c.notes.create(t.ctx.actor, noteableOf('MergeRequest', t.found, t.found.mr), { body })).id;
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) return refused(e);
      const mr = await presentMergeRequest(c, t.ctx.actor, t.found);
      const props = await overviewProps(t.ctx, t.found);
      return web.page(reply, MergeRequestPage({ ...props, mr, tab: 'overview', commentError: errors.join(' '), commentBody: body }), 422);
    }
    return web.redirect(reply, `${t.href}#note_${noteId}`, { kind: 'notice', text: 'Your comment was added.' });
  });
}
