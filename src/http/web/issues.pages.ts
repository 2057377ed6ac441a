// Issue pages (GitLab's /-/issues, /-/issues/new, /-/issues/:iid): a project's list with its tabs and filters (and
// the same list over a group's projects, /groups/<group>/-/issues, and over the viewer's issues, /dashboard/issues),
// the new issue form, the issue page (description, discussion, sidebar) and its forms (create,
// edit, close, reopen, comment, subscribe, link and unlink issues). Every read and write goes through the issue services
// with the viewer's actor — the same code as the API's routes (`c.issues`, `c.issuesQuery`, `c.issueLinks`,
// `c.notes`): a confidential issue the viewer may not read is the 404 page, and the list never holds one.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import type { ResolvedProject } from '../../domain/access/resolve.ts';
import { canReadIssues } from '../../domain/issues/issue-access.ts';
import { LINK_TYPES, type LinkType } from '../../domain/issues/issue-links.service.ts';
import type { IssueFilters, IssueListScope } from '../../domain/issues/issues-query.ts';
import type { FoundIssue, IssueInput } from '../../domain/issues/issues.service.ts';
import type { IssueView } from '../../domain/issues/present.ts';
import { humanTime, referenceTo } from '../../domain/merge-requests/rules.ts';
import { createNoteRefusal } from '../../domain/notes/notes-access.ts';
import { noteableOf } from '../../domain/notes/noteable.ts';
import { canReadCode } from '../../domain/repository/read-access.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { formErrorsOf } from '../../web/views/components.tsx';
import { issueHref } from '../../web/views/issues/common.tsx';
import {
  DASHBOARD_ISSUE_TABS,
  type DashboardIssueScope,
  ISSUE_SORTS,
  ISSUE_STATE_TABS,
  type IssueListFilters,
  type IssueListPlace,
  type IssueState,
  IssuesListPage,
} from '../../web/views/issues/list.tsx';
import { mrHref } from '../../web/views/merge-requests/common.tsx';
import { type IssueFormChoices, type NewIssueValues, NewIssuePage } from '../../web/views/issues/new.tsx';
import { IssuePage, type IssuePageProps } from '../../web/views/issues/show.tsx';
import type { ProjectTabsNav } from '../../web/views/project-tabs.tsx';
import { groupSettingsHref, groupSettingsNav } from '../../web/views/groups/group-settings.tsx';
import { groupAncestors } from './group-ancestors.ts';
import { idOf, pageOf, projectRef, str } from './page-params.ts';
import { HIDDEN, PAGE, type Web, type WebCtx } from './web.ts';

const PER_PAGE = 20;
/** a page of the discussion: the newest notes beyond this are a later concern (GitLab paginates too) */
const NOTES_LIMIT = 500;
/** the people offered as assignees: the project's first members (the form takes any of them) */
const ASSIGNEE_CHOICES = 100;

type Body = Record<string, unknown>;
const OPTS = { config: PAGE, schema: HIDDEN };

/** A checkbox: checked is any value but the off ones. */
const checked = (v: unknown): boolean => {
  const s = str(v).toLowerCase();
  return s !== '' && s !== '0' && s !== 'false' && s !== 'off';
};

/** Every value of a form field sent once or many times (checkboxes, multiple selects), trimmed, blanks dropped. */
function fieldValues(v: unknown): string[] {
  const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  return list.map((x) => str(x)).filter((x) => x !== '');
}

/** Text typed in a textarea, only its trailing blanks trimmed. */
const typed = (v: unknown): string => (typeof v === 'string' ? v.replace(/\s+$/, '') : '');

/** Form errors of a domain error (field maps, messages); null for what the error page shows. */
function errorsOf(e: unknown): string[] | null {
  if (e instanceof DomainError && (e.status === 403 || e.status === 404 || e.status === 401)) return null;
  return formErrorsOf(e);
}

/** The list's query string, read leniently: an unknown state or order is the default one. */
function listFilters(q: Record<string, unknown>): IssueListFilters {
  const state = str(q.state);
  const confidential = str(q.confidential);
  const sort = str(q.sort);
  return {
    state: ISSUE_STATE_TABS.some(([s]) => s === state) ? (state as IssueState) : 'opened',
    search: str(q.search).slice(0, 255),
    author_username: str(q.author_username).slice(0, 255),
    assignee_username: str(q.assignee_username).slice(0, 255),
    labels: str(q.labels).slice(0, 1000),
    milestone: str(q.milestone).slice(0, 255),
    confidential: confidential === 'yes' || confidential === 'no' ? confidential : '',
    sort: ISSUE_SORTS.some((s) => s.value === sort) ? sort : ISSUE_SORTS[0]!.value,
  };
}

/** The page's filters as the list query's (IssuesFinder's parameters). */
function domainFilters(f: IssueListFilters): IssueFilters {
  const sort = ISSUE_SORTS.find((s) => s.value === f.sort) ?? ISSUE_SORTS[0]!;
  const labels = f.labels
    .split(',')
    .map((l) => l.trim())
    .filter(Boolean);
  return {
    search: f.search || undefined,
    authorUsername: f.author_username || undefined,
    assigneeUsernames: f.assignee_username ? [f.assignee_username] : undefined,
    labels: labels.length ? labels : undefined,
    milestone: f.milestone || undefined,
    confidential: f.confidential === '' ? undefined : f.confidential === 'yes',
    orderBy: sort.orderBy,
    sort: sort.sort,
  };
}

/** A due date as typed: YYYY-MM-DD of a real day, '' for none; anything else is a form error. */
function dueDateOf(v: string): string | null {
  if (v === '') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) throw Errors.invalid({ due_date: ['is not a date (YYYY-MM-DD)'] });
  const d = new Date(`${v}T00:00:00Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) throw Errors.invalid({ due_date: ['is not a date (YYYY-MM-DD)'] });
  return v;
}

/**
 * The issue a link form names: `#12` or `12` in this project, `project#12` in the same namespace,
 * `group/project#12` elsewhere, or an issue's URL on this site. null when it names none.
 */
function linkTargetOf(text: string, externalUrl: string): { project: string | null; iid: number } | null {
  let t = text.trim();
  if (/^https?:\/\//i.test(t)) {
    let url: URL;
    try {
      url = new URL(t);
    } catch {
      return null;
    }
    const base = new URL(externalUrl);
    if (url.host !== base.host) return null;
    const basePath = base.pathname.replace(/\/+$/, '');
    let path: string;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      return null;
    }
    if (basePath && path.startsWith(`${basePath}/`)) path = path.slice(basePath.length);
    const m = /^\/(.+?)\/-\/issues\/(\d+)\/?$/.exec(path);
    if (!m) return null;
    t = `${m[1]}#${m[2]}`;
  }
  const m = /^(?:([A-Za-z0-9_.](?:[\w.\-/]*[\w.])?)?#)?(\d{1,10})$/.exec(t);
  if (!m) return null;
  const iid = idOf(m[2]);
  return iid === null ? null : { project: m[1] ?? null, iid };
}

export function issuePages(app: FastifyInstance, c: Container, web: Web): void {
  /** The tab bar of the project's pages, `openIssues` given when the page counted them already. */
  async function navOf(ctx: WebCtx, r: ResolvedProject, openIssues?: number): Promise<ProjectTabsNav> {
    return {
      fullPath: `${r.namespace.full_path}/${r.project.path}`,
      defaultBranch: r.project.default_branch || 'main',
      readCode: canReadCode(ctx.actor, r.project, r.access),
      openIssues: openIssues ?? (await c.issuesQuery.openCount(ctx.actor, r)),
    };
  }

  // ---- the lists ---------------------------------------------------------------------------------

  /**
   * One page of a list of issues as the viewer reads them (IssuesFinder through the list query, as the API's
   * lists): the page's rows presented and the counts by state of the same filters; a dashboard adds its scope.
   */
  async function listPage(req: FastifyRequest, ctx: WebCtx, where: IssueListScope, scope?: IssueFilters['scope']) {
    const q = req.query as Record<string, unknown>;
    const filters = listFilters(q);
    const f: IssueFilters = { ...domainFilters(filters), scope };
    const page = pageOf(q.page);
    const list = await c.issuesQuery.list(ctx.actor, where, { ...f, state: filters.state });
    const [rows, counts] = await Promise.all([
      list
        .limit(PER_PAGE + 1)
        .offset((page - 1) * PER_PAGE)
        .execute(),
      c.issuesQuery.statistics(ctx.actor, where, f),
    ]);
    const hasNext = rows.length > PER_PAGE;
    const known = where.kind === 'project' ? [{ project: where.project, namespace: where.namespace }] : [];
    const views = await c.issues.views(ctx.actor, hasNext ? rows.slice(0, PER_PAGE) : rows, known);
    const unfiltered =
      !filters.search && !filters.author_username && !filters.assignee_username && !filters.labels && !filters.milestone && !filters.confidential;
    return { filters, views, counts, page, hasNext, unfiltered };
  }

  web.projectPage('/-/issues', async (req, reply, { ctx, resolved }) => {
    // authorize! :read_issue (the issues feature's level included), as the API's list
    if (!canReadIssues(ctx.actor, resolved.project, resolved.access)) throw Errors.forbidden();
    const where: IssueListScope = { kind: 'project', project: resolved.project, namespace: resolved.namespace, access: resolved.access };
    const { unfiltered, ...list } = await listPage(req, ctx, where);
    const place: IssueListPlace = {
      kind: 'project',
      project: projectRef(resolved),
      nav: await navOf(ctx, resolved, unfiltered ? list.counts.opened : undefined),
      canCreate: c.issues.canCreate(ctx.actor, resolved),
    };
    return web.page(reply, IssuesListPage({ ctx, place, ...list }));
  });

  // the issues of the group's projects and its subgroups' (GET /groups/:id/issues: archived projects left out);
  // the group was resolved with the viewer's access, so a group they may not see is the 404 page
  web.groupPage('/-/issues', async (req, reply, { ctx, resolved }) => {
    const where: IssueListScope = { kind: 'group', group: resolved.group, nonArchived: true };
    const [{ unfiltered: _, ...list }, ancestors] = await Promise.all([listPage(req, ctx, where), groupAncestors(c, resolved.group)]);
    return web.page(
      reply,
      IssuesListPage({
        ctx,
        place: { kind: 'group', group: resolved.group, ancestors, settings: groupSettingsHref(resolved.group, groupSettingsNav(resolved.access.abilities)) },
        ...list,
      }),
    );
  });

  // the viewer's issues across projects (GET /issues): assigned to them (GitLab's default) or created by them
  app.get('/dashboard/issues', OPTS, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const wanted = str((req.query as Record<string, unknown>).scope);
    const scope: DashboardIssueScope = DASHBOARD_ISSUE_TABS.some(([s]) => s === wanted) ? (wanted as DashboardIssueScope) : 'assigned_to_me';
    const { unfiltered: _, ...list } = await listPage(req, ctx, { kind: 'all' }, scope);
    return web.page(reply, IssuesListPage({ ctx, place: { kind: 'dashboard', scope }, ...list }));
  });

  // ---- new issue ---------------------------------------------------------------------------------

  /** The project of a new issue form: the viewer must be allowed to create one (403 otherwise). */
  function requireCreate(ctx: WebCtx, resolved: ResolvedProject): void {
    if (!canReadIssues(ctx.actor, resolved.project, resolved.access)) throw Errors.forbidden();
    if (!c.issues.canCreate(ctx.actor, resolved)) throw Errors.forbidden();
  }

  /**
   * The labels, milestones and people the form offers — only to those whose metadata the service keeps. An
   * edited issue's own milestone (closed perhaps) and assignees stay offered, so saving keeps them.
   */
  async function choicesOf(ctx: WebCtx, resolved: ResolvedProject, current?: IssueView): Promise<IssueFormChoices | null> {
    if (!c.issues.canSetMetadata(ctx.actor, resolved)) return null;
    const source = { type: 'Project' as const, ...resolved };
    const [labels, milestones, members] = await Promise.all([
      c.labels.availableForProject(resolved.project),
      c.milestones.listQuery(ctx.actor, source, { state: 'active', include_ancestors: true }).then((q) => q.execute()),
      c.members.canList(source) ? c.members.list(source, { deep: true }).limit(ASSIGNEE_CHOICES).execute() : Promise.resolve([]),
    ]);
    const users = members.filter((m) => m.u_state === 'active').map((m) => ({ id: m.user_id, username: m.u_username, name: m.u_name }));
    const shownMilestones = milestones.map((m) => ({ id: m.id, title: m.title }));
    const m = current?.milestone;
    if (m && !shownMilestones.some((x) => x.id === m.id)) shownMilestones.unshift({ id: m.id, title: m.title });
    for (const a of current?.assignees ?? []) if (!users.some((u) => u.id === a.id)) users.unshift({ id: a.id, username: a.username, name: a.name });
    return {
      labels: labels.map((l) => ({ title: l.title, color: l.color, description: l.description })),
      milestones: shownMilestones,
      users,
    };
  }

  web.projectPage('/-/issues/new', async (req, reply, { resolved }) => {
    const ctx = await web.requireUser(req);
    requireCreate(ctx, resolved);
    const q = req.query as Record<string, unknown>;
    const values: NewIssueValues = {
      title: str(q.title).slice(0, 255),
      description: typed(q.description),
      labels: [],
      milestone_id: '',
      assignee_ids: [],
      due_date: '',
      confidential: false,
    };
    return web.page(
      reply,
      NewIssuePage({ ctx, project: projectRef(resolved), nav: await navOf(ctx, resolved), values, choices: await choicesOf(ctx, resolved) }),
    );
  });

  app.post('/-/p/:project_id/issues', OPTS, async (req, reply) => {
    const ctx = await web.requireUser(req);
    const id = idOf((req.params as { project_id: string }).project_id);
    if (id === null) return web.notFound(req, reply);
    const resolved = await c.resolve.project(ctx.actor, id);
    requireCreate(ctx, resolved);
    const b = (req.body ?? {}) as Body;
    const values: NewIssueValues = {
      title: str(b.title),
      description: typed(b.description),
      labels: fieldValues(b.labels),
      milestone_id: str(b.milestone_id),
      assignee_ids: fieldValues(b.assignee_ids),
      due_date: str(b.due_date),
      confidential: checked(b.confidential),
    };
    try {
      const input: IssueInput = {
        title: values.title,
        description: values.description || undefined,
        confidential: values.confidential,
        labels: values.labels.length ? values.labels : undefined,
        milestone_id: idOf(values.milestone_id) ?? undefined,
        assignee_ids: values.assignee_ids.map((x) => idOf(x)).filter((x): x is number => x !== null),
        due_date: dueDateOf(values.due_date),
      };
      const found = await c.issues.create(ctx.actor, id, input);
      return web.redirect(reply, issueHref(projectRef(found), found.issue.iid), { kind: 'notice', text: 'The issue was created.' });
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      return web.page(
        reply,
        NewIssuePage({ ctx, project: projectRef(resolved), nav: await navOf(ctx, resolved), values, choices: await choicesOf(ctx, resolved), errors }),
        422,
      );
    }
  });

  // ---- edit an issue ------------------------------------------------------------------------------

  /** The form's values of an issue as it is. */
  const valuesOf = (view: IssueView): NewIssueValues => ({
    title: view.row.title,
    description: view.row.description ?? '',
    labels: view.labels.map((l) => l.title),
    milestone_id: view.milestone ? String(view.milestone.id) : '',
    assignee_ids: view.assignees.map((a) => String(a.id)),
    due_date: view.row.due_date ?? '',
    confidential: view.row.confidential === 1,
  });

  web.projectPage('/-/issues/:iid/edit', async (req, reply, { resolved, params }) => {
    const ctx = await web.requireUser(req);
    const iid = idOf(params.iid);
    if (iid === null) return web.notFound(req, reply);
    const found = await c.issues.find(ctx.actor, resolved.project.id, iid);
    if (!c.issues.canUpdate(ctx.actor, found)) throw Errors.forbidden();
    const [view] = await c.issues.views(ctx.actor, [found.issue], [found]);
    return web.page(
      reply,
      NewIssuePage({
        ctx,
        project: projectRef(found),
        nav: await navOf(ctx, found),
        values: valuesOf(view!),
        choices: await choicesOf(ctx, found, view),
        editing: { iid },
      }),
    );
  });

  // ---- one issue ----------------------------------------------------------------------------------

  async function issueProps(ctx: WebCtx, found: FoundIssue): Promise<Omit<IssuePageProps, 'commentError' | 'commentBody'>> {
    const noteable = noteableOf('Issue', found, found.issue);
    const [[view], notes, participants, related, mergeRequests, nav, subscribed] = await Promise.all([
      c.issues.views(ctx.actor, [found.issue], [found]),
      c.notes.list(ctx.actor, noteable, { orderBy: 'created_at', sort: 'asc' }).then((q) => q.limit(NOTES_LIMIT).execute()),
      c.issues.participants(ctx.actor, found),
      c.issueLinks.related(ctx.actor, found),
      c.issueMentions.related(ctx.actor, found),
      navOf(ctx, found),
      ctx.user ? c.issues.isSubscribed(ctx.actor, found) : Promise.resolve(null),
    ]);
    const refusal = createNoteRefusal(ctx.actor, noteable);
    const [users, relatedViews] = await Promise.all([
      c.users.basicByIds(notes.map((n) => n.author_id)),
      c.issues.views(
        ctx.actor,
        related.map((r) => r.issue),
      ),
    ]);
    const fullPath = (v: (typeof relatedViews)[number]) => v.project.fullPath;
    const here = `${found.namespace.full_path}/${found.project.path}`;
    return {
      ctx,
      project: projectRef(found),
      nav,
      view: view!,
      notes,
      users,
      participants,
      related: related.map((r, i) => {
        const v = relatedViews[i]!;
        return {
          linkId: r.link.id,
          linkType: r.linkType,
          title: v.row.title,
          state: v.row.state,
          confidential: v.row.confidential === 1,
          href: issueHref({ fullPath: fullPath(v) }, v.row.iid),
          reference: fullPath(v) === here ? `#${v.row.iid}` : `${fullPath(v)}#${v.row.iid}`,
        };
      }),
      mergeRequests: mergeRequests.map((m) => {
        const path = `${m.namespace.full_path}/${m.project.path}`;
        return {
          title: m.mr.title,
          state: m.mr.state,
          href: mrHref({ fullPath: path }, m.mr.iid),
          reference: referenceTo(m.mr.iid, { ...m.project, fullPath: path }, { project: found.project }),
        };
      }),
      timeEstimate: humanTime(found.issue.time_estimate),
      timeSpent: humanTime(found.issue.total_time_spent),
      canUpdate: c.issues.canUpdate(ctx.actor, found),
      canComment: refusal === null,
      commentRefusal: refusal as IssuePageProps['commentRefusal'],
      subscribed,
      canLink: c.issueLinks.canLink(ctx.actor, found),
    };
  }

  web.projectPage('/-/issues/:iid', async (req, reply, { ctx, resolved, params }) => {
    const iid = idOf(params.iid);
    if (iid === null) return web.notFound(req, reply);
    const found = await c.issues.find(ctx.actor, resolved.project.id, iid);
    return web.page(reply, IssuePage(await issueProps(ctx, found)));
  });

  // ---- the forms of an issue ---------------------------------------------------------------------

  const ONE = '/-/p/:project_id/issues/:iid';

  /** The issue of a form, found as the viewer sees it (404/403 pages otherwise). */
  async function formTarget(req: FastifyRequest): Promise<{ ctx: WebCtx; found: FoundIssue; href: string } | null> {
    const ctx = await web.requireUser(req);
    const p = req.params as { project_id: string; iid: string };
    const id = idOf(p.project_id);
    const iid = idOf(p.iid);
    if (id === null || iid === null) return null;
    const found = await c.issues.find(ctx.actor, id, iid);
    return { ctx, found, href: issueHref(projectRef(found), found.issue.iid) };
  }

  /** What a form's failure tells the viewer (a flash), or a rethrow for what the error page shows. */
  function alertOf(e: unknown, fallback: string): string {
    if (!(e instanceof DomainError) || e.status >= 500) throw e;
    // a 401 from a service is "not allowed" to a signed-in viewer
    if (e.status === 401 || e.status === 403) throw Errors.forbidden();
    // a refusal states its own message ("No matching issue found …", "Issue(s) already assigned")
    if (e.kind === 'refused' && typeof e.detail === 'string') return e.detail;
    const errors = formErrorsOf(e);
    return errors?.length ? errors.join(' ') : fallback;
  }

  app.post(ONE, OPTS, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    if (!c.issues.canUpdate(t.ctx.actor, t.found)) throw Errors.forbidden();
    const b = (req.body ?? {}) as Body;
    const values: NewIssueValues = {
      title: str(b.title),
      description: typed(b.description),
      labels: fieldValues(b.labels),
      milestone_id: str(b.milestone_id),
      assignee_ids: fieldValues(b.assignee_ids),
      due_date: str(b.due_date),
      confidential: checked(b.confidential),
    };
    try {
      const input: IssueInput = { title: values.title, description: values.description || null, confidential: values.confidential };
      // the whole set of each: what is left unchecked is taken off (the service keeps none from those who may not set them)
      if (c.issues.canSetMetadata(t.ctx.actor, t.found)) {
        Object.assign(input, {
          labels: values.labels,
          milestone_id: idOf(values.milestone_id),
          assignee_ids: values.assignee_ids.map((x) => idOf(x)).filter((x): x is number => x !== null),
          due_date: dueDateOf(values.due_date),
        } satisfies IssueInput);
      }
      await c.issues.update(t.ctx.actor, t.found, input);
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) throw e;
      const [view] = await c.issues.views(t.ctx.actor, [t.found.issue], [t.found]);
      return web.page(
        reply,
        NewIssuePage({
          ctx: t.ctx,
          project: projectRef(t.found),
          nav: await navOf(t.ctx, t.found),
          values,
          choices: await choicesOf(t.ctx, t.found, view),
          errors,
          editing: { iid: t.found.issue.iid },
        }),
        422,
      );
    }
    return web.redirect(reply, t.href, { kind: 'notice', text: 'The issue was updated.' });
  });

  for (const [action, event, done] of [
    ['close', 'close', 'The issue was closed.'],
    ['reopen', 'reopen', 'The issue was reopened.'],
  ] as const) {
    app.post(`${ONE}/${action}`, OPTS, async (req, reply) => {
      const t = await formTarget(req);
      if (!t) return web.notFound(req, reply);
      try {
        await c.issues.update(t.ctx.actor, t.found, { state_event: event });
      } catch (e) {
        if (e instanceof DomainError && e.status === 404) throw e;
        return web.redirect(reply, t.href, { kind: 'alert', text: alertOf(e, `The issue could not be ${action === 'close' ? 'closed' : 'reopened'}.`) });
      }
      return web.redirect(reply, t.href, { kind: 'notice', text: done });
    });
  }

  app.post(`${ONE}/notes`, OPTS, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const body = typed((req.body as Body | undefined)?.body);
    let noteId: number;
    try {
      if (!body.trim()) throw Errors.invalid({ comment: ["can't be blank"] });
      noteId = (await c.notes.create(t.ctx.actor, noteableOf('Issue', t.found, t.found.issue), { body })).id;
    } catch (e) {
      const errors = errorsOf(e);
      if (!errors) {
        if (e instanceof DomainError && e.status === 401) throw Errors.forbidden();
        throw e;
      }
      const props = await issueProps(t.ctx, t.found);
      return web.page(reply, IssuePage({ ...props, commentError: errors.join(' '), commentBody: body }), 422);
    }
    return web.redirect(reply, `${t.href}#note_${noteId}`, { kind: 'notice', text: 'Your comment was added.' });
  });

  app.post(`${ONE}/subscription`, OPTS, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const on = checked((req.body as Body | undefined)?.subscribed);
    await c.issues.setSubscription(t.ctx.actor, t.found, on);
    return web.redirect(reply, t.href, {
      kind: 'notice',
      text: on ? 'You subscribed to the notifications of this issue.' : 'You unsubscribed from the notifications of this issue.',
    });
  });

  app.post(`${ONE}/links`, OPTS, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const b = (req.body ?? {}) as Body;
    const typeParam = str(b.link_type);
    const type: LinkType = (LINK_TYPES as readonly string[]).includes(typeParam) ? (typeParam as LinkType) : 'relates_to';
    const target = linkTargetOf(str(b.issue), c.config.externalUrl);
    if (!target) {
      return web.redirect(reply, `${t.href}#linked-issues`, {
        kind: 'alert',
        text: 'Name the issue to link as #12, group/project#12 or its URL.',
      });
    }
    try {
      // `project#12` names a project of the same namespace, as GitLab's references do
      const project =
        target.project === null
          ? String(t.found.project.id)
          : target.project.includes('/')
            ? target.project
            : `${t.found.namespace.full_path}/${target.project}`;
      await c.issueLinks.create(t.ctx.actor, t.found, project, target.iid, type);
    } catch (e) {
      return web.redirect(reply, `${t.href}#linked-issues`, { kind: 'alert', text: alertOf(e, 'The issue could not be linked.') });
    }
    return web.redirect(reply, `${t.href}#linked-issues`, { kind: 'notice', text: 'The issue was linked.' });
  });

  app.post(`${ONE}/links/:link_id/remove`, OPTS, async (req, reply) => {
    const t = await formTarget(req);
    if (!t) return web.notFound(req, reply);
    const linkId = idOf((req.params as { link_id: string }).link_id);
    if (linkId === null) return web.notFound(req, reply);
    try {
      await c.issueLinks.remove(t.ctx.actor, t.found, linkId);
    } catch (e) {
      if (e instanceof DomainError && e.status === 404) throw e;
      return web.redirect(reply, `${t.href}#linked-issues`, { kind: 'alert', text: alertOf(e, 'The link could not be removed.') });
    }
    return web.redirect(reply, `${t.href}#linked-issues`, { kind: 'notice', text: 'The link was removed.' });
  });
}
