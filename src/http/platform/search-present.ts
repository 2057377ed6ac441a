// What the search API and the search page share: the entities of a page of results — each kind of hit with the
// entity GitLab's search API presents it with (API::Search::SCOPE_ENTITY): BasicProjectDetails, MergeRequestBasic,
// Milestone, UserBasic, Note, CommitDetail, Blob — and the search rate limit.
import type { Container } from '../../container.ts';
import type { NoteRow } from '../../db/schema.ts';
import type { Actor } from '../../domain/access/actor.ts';
import type { SearchHits, SearchTarget } from '../../domain/search/search.service.ts';
import { toBlob } from './entities/blob.entity.ts';
import { toMilestoneBasic } from './entities/milestone.entity.ts';
import { toIssueBasic } from './entities/issue.entity.ts';
import { toNote } from './entities/note.entity.ts';
import { projectViewContext, toProject } from './entities/project.entity.ts';
import { toUserBasic, userViewContext } from './entities/user.entity.ts';
import { presentMergeRequests } from './merge-requests/present.ts';
import { commitDetail } from './repository/context.ts';
import { Errors } from '../../lib/errors.ts';
import type { FixedWindowLimiter } from '../plugins/rate-limit.ts';

type Presenter<S extends SearchHits['scope']> = (
  c: Container,
  actor: Actor,
  target: SearchTarget,
  hits: Extract<SearchHits, { scope: S }>,
) => Promise<unknown[]>;

const nothing = async () => [];

/** scope → its entities; a new scope is one entry here and one in the search service's registry */
const PRESENTERS: { [S in SearchHits['scope']]: Presenter<S> } = {
  projects: async (c, actor, _t, { items }) => {
    const ctx = projectViewContext(userViewContext(c.config.externalUrl, await c.settings.get()), actor.isAdmin, (p) => c.repos.repository(p).isEmptySync());
    return (await c.projectsQuery.views(actor, items)).map((v) => toProject(v, 'basic', ctx));
  },
  merge_requests: async (c, _actor, target, { items }) => {
    const from = target.level === 'project' ? { project: target.project } : target.level === 'group' ? { group: target.group } : undefined;
    return presentMergeRequests(c, items, { from });
  },
  milestones: async (c, _a, _t, { items }) => (await c.milestones.withUrls(items)).map(toMilestoneBasic),
  users: async (c, _a, _t, { items }) => {
    const ctx = userViewContext(c.config.externalUrl, await c.settings.get());
    return items.map((u) => toUserBasic(u, ctx));
  },
  notes: async (c, _a, _t, { items }) => {
    const users = await c.users.basicByIds(items.map((f) => f.note.author_id));
    const user = userViewContext(c.config.externalUrl, await c.settings.get());
    return items.map((f) => {
      if (f.kind === 'issue') return toNote(f.note, { users, user, noteable: { id: f.note.noteable_id, iid: f.issueIid } });
      if (f.kind === 'merge_request') return toNote(f.note, { users, user, noteable: { id: f.note.noteable_id, iid: f.mrIid } });
      // a commit's comment as Entities::Note shows it: noteable_type Commit, no noteable id
      const n = f.note;
      const row: NoteRow = {
        id: n.id,
        project_id: n.project_id,
        noteable_type: 'Commit',
        noteable_id: 0,
        discussion_id: '',
        type: null,
        author_id: n.author_id,
        body: n.note,
        system: 0,
        internal: 0,
        resolvable: 0,
        resolved_at: null,
        resolved_by_id: null,
        position: null,
        created_at: n.created_at,
        updated_at: n.updated_at,
      };
      return { ...toNote(row, { users, user, noteable: { id: -1, iid: 0 } }), noteable_id: null };
    });
  },
  commits: async (_c, _a, _t, { items, repo }) => (repo ? items.map((commit) => commitDetail(repo, commit, null)) : []),
  blobs: async (_c, _a, target, { items }) => (target.level === 'project' ? items.map((b) => toBlob(b, target.project.id)) : []),
  issues: async (c, actor, target, { items }) => {
    const from = target.level === 'project' ? { project: target.project } : target.level === 'group' ? { group: target.group } : null;
    const ctx = { externalUrl: c.config.externalUrl, users: userViewContext(c.config.externalUrl, await c.settings.get()), from };
    return (await c.issues.views(actor, items)).map((v) => toIssueBasic(v, ctx));
  },
  snippet_titles: nothing,
  wiki_blobs: nothing,
};

/** The entities of a page of hits. */
export function presentSearch(c: Container, actor: Actor, target: SearchTarget, hits: SearchHits): Promise<unknown[]> {
  return (PRESENTERS[hits.scope] as Presenter<typeof hits.scope>)(c, actor, target, hits as never);
}

/**
 * check_rate_limit!(:search_rate_limit, scope: [current_user]): `search_rate_limit` searches a minute per user,
 * `search_rate_limit_unauthenticated` per address for anonymous visitors of the page (each node counts its own; 0: no
 * limit); over it, 429 with GitLab's body.
 */
export async function checkSearchRate(
  c: Container,
  limiter: FixedWindowLimiter,
  key: string,
  setting: 'search_rate_limit' | 'search_rate_limit_unauthenticated',
) {
  const limit = (await c.settings.get())[setting];
  if (typeof limit !== 'number' || limit <= 0) return;
  const now = Date.now();
  const hit = limiter.hit(key, limit, 60, now);
  if (!hit.allowed) {
    throw Errors.raw(
      429,
      { message: { error: 'This endpoint has been requested too many times. Try again later.' } },
      { 'retry-after': String(Math.max(1, Math.ceil((hit.resetAt - now) / 1000))) },
    );
  }
}
