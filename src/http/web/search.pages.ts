// The search page, GitLab's /search?search=…&scope=…(&project_id=…|&group_id=…): the scopes of basic search
// at the instance, a group or a project, through the search service the API uses and the same entities. The
// header's search box leads here. /search/ (with the slash, Weblate's URL) stays the translation units'
// search; a tab of this page leads there.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { GLOBAL_SCOPES, GROUP_SCOPES, PROJECT_SCOPES, type SearchScope, type SearchTarget } from '../../domain/search/search.service.ts';
import { checkSearchRate, presentSearch } from '../platform/search-present.ts';
import { FixedWindowLimiter } from '../plugins/rate-limit.ts';
import { type SearchItem, SearchResultsPage, type SearchTab } from '../../web/views/search/search.tsx';
import { pageOf, str } from './page-params.ts';
import { translationSearchPage } from './translation-search.ts';
import { HIDDEN, PAGE, type Web } from './web.ts';

const OPTS = { config: PAGE, schema: HIDDEN };
const PER_PAGE = 20;

/** The tabs of each level, in GitLab's order, with their names; scopes Hearth has nothing for are left out. */
const TAB_TEXT: Partial<Record<SearchScope, string>> = {
  blobs: 'Code',
  commits: 'Commits',
  projects: 'Projects',
  issues: 'Issues',
  merge_requests: 'Merge requests',
  milestones: 'Milestones',
  notes: 'Comments',
  users: 'Users',
};
const TABS: Record<SearchTarget['level'], SearchScope[]> = {
  global: GLOBAL_SCOPES.filter((s) => TAB_TEXT[s]),
  group: GROUP_SCOPES.filter((s) => TAB_TEXT[s]),
  project: ['blobs', 'issues', 'commits', 'merge_requests', 'milestones', 'notes', 'users'].filter((s) =>
    (PROJECT_SCOPES as readonly string[]).includes(s),
  ) as SearchScope[],
};
/** what the empty list says it did not find */
const NOUNS: Partial<Record<SearchScope, string>> = { blobs: 'code', notes: 'comments', merge_requests: 'merge requests' };

/** The path of one of our own URLs (entities carry absolute ones). */
const local = (url: string) => {
  try {
    const u = new URL(url);
    return u.pathname + u.search + u.hash;
  } catch {
    return url;
  }
};

type Entity = Record<string, any>;

/** The page's items of a page of entities (what the API answers for the same search). */
function itemsOf(scope: SearchScope, entities: Entity[], target: SearchTarget): SearchItem[] {
  const projectUrl = target.level === 'project' ? `/${target.namespace.full_path}/${target.project.path}` : '';
  switch (scope) {
    case 'projects':
      return entities.map((e) => ({ kind: 'project', name: e.name, fullName: e.name_with_namespace, href: local(e.web_url), description: e.description }));
    case 'merge_requests':
      return entities.map((e) => ({
        kind: 'merge_request',
        title: e.title,
        href: local(e.web_url),
        reference: e.references?.full ?? `!${e.iid}`,
        state: e.state,
      }));
    case 'issues':
      return entities.map((e) => {
        const href = local(e.web_url);
        // the issue's project from its URL (Entities::IssueBasic carries no references)
        const path = href.split('/-/issues/')[0]!.replace(/^\//, '');
        return {
          kind: 'issue',
          title: e.title,
          href,
          reference: target.level === 'project' ? `#${e.iid}` : `${decodeURIComponent(path)}#${e.iid}`,
          state: e.state,
          confidential: e.confidential === true,
        };
      });
    case 'milestones':
      return entities.map((e) => ({ kind: 'milestone', title: e.title, href: local(e.web_url), state: e.state }));
    case 'users':
      return entities.map((e) => ({ kind: 'user', name: e.name, username: e.username, href: local(e.web_url) }));
    case 'notes':
      return entities.map((e) => ({
        kind: 'note',
        body: e.body,
        author: e.author?.name ?? null,
        href:
          e.noteable_type === 'MergeRequest'
            ? `${projectUrl}/-/merge_requests/${e.noteable_iid}#note_${e.id}`
            : e.noteable_type === 'Issue'
              ? `${projectUrl}/-/issues/${e.noteable_iid}#note_${e.id}`
              : `${projectUrl}/-/commits`,
        on: e.noteable_type === 'MergeRequest' ? `!${e.noteable_iid}` : e.noteable_type === 'Issue' ? `#${e.noteable_iid}` : 'a commit',
      }));
    case 'commits':
      return entities.map((e) => ({ kind: 'commit', title: e.title, shortId: e.short_id, href: local(e.web_url), author: e.author_name }));
    case 'blobs':
      return entities.map((e) => ({
        kind: 'blob',
        path: e.path,
        href: `${projectUrl}/-/blob/${encodeURIComponent(e.ref)}/${e.path.split('/').map(encodeURIComponent).join('/')}#L${e.startline}`,
        startline: e.startline,
        lines: String(e.data).replace(/\n$/, '').split('\n'),
      }));
    default:
      return [];
  }
}

export function searchPages(app: FastifyInstance, c: Container, web: Web): void {
  const limiter = new FixedWindowLimiter();
  app.get('/search', OPTS, async (req: FastifyRequest, reply) => {
    // Weblate's /search/ is the translation units' search
    if (req.url.split('?')[0].endsWith('/')) return translationSearchPage(c, web, req, reply);
    const ctx = await web.context(req);
    const q = req.query as Record<string, unknown>;
    const term = str(q.search).trim();
    const projectId = str(q.project_id);
    const groupId = str(q.group_id);
    const target: SearchTarget = projectId
      ? await c.search.projectTarget(ctx.actor, projectId)
      : groupId
        ? await c.search.groupTarget(ctx.actor, groupId)
        : { level: 'global' };
    const scopes = TABS[target.level];
    const asked = str(q.scope) as SearchScope;
    const scope = scopes.includes(asked) ? asked : scopes[0];
    const page = pageOf(q.page);
    const place: Record<string, string> = projectId ? { project_id: projectId } : groupId ? { group_id: groupId } : {};
    const ref = str(q.ref);
    if (ref) place.ref = ref;
    const tabs: SearchTab[] = scopes.map((s) => ({
      text: TAB_TEXT[s]!,
      href: `/search?${new URLSearchParams({ search: term, ...place, scope: s }).toString()}`,
      current: s === scope,
    }));
    // the translation units: the instance's other search
    if (target.level === 'global') tabs.push({ text: 'Translation strings', href: `/search/?${new URLSearchParams({ q: term }).toString()}`, current: false });
    let items: SearchItem[] = [];
    let hasNext = false;
    if (term) {
      if (ctx.user) await checkSearchRate(c, limiter, `user:${ctx.user.id}`, 'search_rate_limit');
      else await checkSearchRate(c, limiter, `ip:${req.ip}`, 'search_rate_limit_unauthenticated');
      const found = await c.search.search(ctx.actor, target, { scope, search: term, ref: ref || undefined, page, perPage: PER_PAGE });
      items = itemsOf(scope, (await presentSearch(c, ctx.actor, target, found.hits)) as Entity[], target);
      hasNext = found.hasNext;
    }
    const where = target.level === 'project' ? `${target.namespace.full_path}/${target.project.path}` : target.level === 'group' ? target.group.full_path : '';
    return web.page(reply, SearchResultsPage({ ctx, term, where, keep: { ...place, scope }, tabs, items, scopeText: NOUNS[scope] ?? scope, page, hasNext }));
  });
}
