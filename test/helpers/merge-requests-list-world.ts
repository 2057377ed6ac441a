// A small world for the merge request list tests: projects of every visibility and merge-request
// feature level, users in every role, and merge requests written straight to the database (each with
// what a filter reads: assignees, reviewers, labels, milestones, approvals, award emoji, deployments).
import type { MergeRequestRow, NamespaceRow, ProjectRow, UserRow } from '../../src/db/schema.ts';
import { buildTestApp } from './build-app.ts';

export const get = (app: any, url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

/** created_at of the n-th merge request: one minute apart, so the default order is known */
export const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, n, 0)).toISOString();

export interface MrAttrs {
  title: string;
  description: string | null;
  state: string;
  draft: boolean;
  author: UserRow | null;
  assignees: UserRow[];
  reviewers: UserRow[];
  labels: number[];
  milestone: number | null;
  mergeUser: UserRow | null;
  approvedBy: UserRow[];
  source_branch: string;
  target_branch: string;
  source_project_id: number;
  created_at: string;
  updated_at: string;
  merged_at: string | null;
  upvotes: number;
}

export async function world(t: any) {
  const ctx = await buildTestApp(t);
  const { seed, c } = ctx;
  const k = c.db.kysely;
  const me = await seed.user({ username: 'me', name: 'Me' });
  const other = await seed.user({ username: 'other', name: 'Other' });
  const alice = await seed.user({ username: 'alice', name: 'Alice' });
  const bob = await seed.user({ username: 'bob', name: 'Bob' });
  const ext = await seed.user({ username: 'ext', name: 'External', external: true });
  const top = await seed.group({ path: 'top', name: 'Top', visibility: 'public' });
  const sub = await seed.group({ path: 'sub', name: 'Sub', parent: top, visibility: 'public' });
  const elsewhere = await seed.group({ path: 'elsewhere', name: 'Elsewhere', visibility: 'public' });
  const P: Record<string, ProjectRow> = {};
  const make = async (key: string, ns: NamespaceRow, visibility: string, attrs: { archived?: boolean; mr?: string } = {}) => {
    P[key] = await seed.project({ namespace: ns, path: key, name: key, visibility, archived: attrs.archived });
    if (attrs.mr) {
      P[key] = await k
        .updateTable('projects')
        .set({ settings: JSON.stringify({ merge_requests_access_level: attrs.mr }) })
        .where('id', '=', P[key].id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
  };
  await make('pub', top, 'public');
  await make('int', top, 'internal');
  await make('priv', top, 'private'); // me: Developer
  await make('subpub', sub, 'public');
  await make('archived', top, 'public', { archived: true });
  await make('mrprivate', top, 'public', { mr: 'private' }); // me: Reporter; other: Guest
  await make('mrdisabled', top, 'public', { mr: 'disabled' });
  await make('away', elsewhere, 'public');
  await make('secret', await seed.namespaceOf(other), 'private');
  await seed.member({ project: P.priv }, me, 30);
  await seed.member({ project: P.mrprivate }, me, 20);
  await seed.member({ project: P.mrprivate }, other, 10);
  const meTok = (await seed.token(me)).headers;
  const otherTok = (await seed.token(other)).headers;
  const extTok = (await seed.token(ext)).headers;

  let n = 0;
  const iids = new Map<number, number>();
  /** a merge request in `project` (the n-th created: created_at = at(n)) with its related rows */
  async function mr(project: ProjectRow, attrs: Partial<MrAttrs> = {}): Promise<MergeRequestRow> {
    n++;
    const iid = (iids.get(project.id) ?? 0) + 1;
    iids.set(project.id, iid);
    const created = attrs.created_at ?? at(n);
    const row = await k
      .insertInto('merge_requests')
      .values({
        iid,
        project_id: project.id,
        source_project_id: attrs.source_project_id ?? project.id,
        source_branch: attrs.source_branch ?? `feature-${n}`,
        target_branch: attrs.target_branch ?? 'main',
        title: attrs.title ?? `Change ${n}`,
        description: attrs.description === undefined ? `Description of change ${n}` : attrs.description,
        state: attrs.state ?? 'opened',
        draft: attrs.draft ? 1 : 0,
        author_id: attrs.author === undefined ? me.id : (attrs.author?.id ?? null),
        milestone_id: attrs.milestone ?? null,
        merge_user_id: attrs.mergeUser?.id ?? null,
        merged_at: attrs.merged_at ?? null,
        upvotes: attrs.upvotes ?? 0,
        created_at: created,
        updated_at: attrs.updated_at ?? created,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const now = created;
    for (const u of attrs.assignees ?? [])
      await k.insertInto('merge_request_assignees').values({ merge_request_id: row.id, user_id: u.id, created_at: now }).execute();
    for (const u of attrs.reviewers ?? [])
      await k.insertInto('merge_request_reviewers').values({ merge_request_id: row.id, user_id: u.id, created_at: now }).execute();
    for (const l of attrs.labels ?? []) await k.insertInto('merge_request_labels').values({ merge_request_id: row.id, label_id: l, created_at: now }).execute();
    for (const u of attrs.approvedBy ?? []) await k.insertInto('approvals').values({ merge_request_id: row.id, user_id: u.id, created_at: now }).execute();
    return row;
  }

  async function label(project: ProjectRow | null, title: string, group?: NamespaceRow, priority: number | null = null): Promise<number> {
    const now = at(0);
    const row = await k
      .insertInto('labels')
      .values({
        project_id: project?.id ?? null,
        group_id: group?.id ?? null,
        title,
        color: '#428bca',
        description: null,
        priority,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  let milestoneIid = 0;
  async function milestone(project: ProjectRow, title: string, attrs: { due_date?: string; start_date?: string; state?: string } = {}): Promise<number> {
    const now = at(0);
    const row = await k
      .insertInto('milestones')
      .values({
        iid: ++milestoneIid,
        project_id: project.id,
        group_id: null,
        title,
        description: null,
        state: attrs.state ?? 'active',
        due_date: attrs.due_date ?? null,
        start_date: attrs.start_date ?? null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async function award(row: MergeRequestRow, user: UserRow, name: string): Promise<void> {
    await k
      .insertInto('award_emoji')
      .values({ awardable_type: 'MergeRequest', awardable_id: row.id, user_id: user.id, name, created_at: at(0), updated_at: at(0) })
      .execute();
  }

  let deploymentIid = 0;
  /** a deployment of `project` to `environment` (created when missing) that shipped `mrs` */
  async function deploy(project: ProjectRow, environment: string, mrs: MergeRequestRow[], attrs: { finished_at: string; status?: string }): Promise<void> {
    let env = await k.selectFrom('environments').select('id').where('project_id', '=', project.id).where('name', '=', environment).executeTakeFirst();
    if (!env) {
      env = await k
        .insertInto('environments')
        .values({ project_id: project.id, name: environment, slug: environment, external_url: null, created_at: at(0), updated_at: at(0) })
        .returning('id')
        .executeTakeFirstOrThrow();
    }
    const d = await k
      .insertInto('deployments')
      .values({
        iid: ++deploymentIid,
        project_id: project.id,
        environment_id: env.id,
        ref: 'main',
        sha: 'a'.repeat(40),
        user_id: null,
        status: attrs.status ?? 'success',
        created_at: attrs.finished_at,
        updated_at: attrs.finished_at,
        finished_at: attrs.finished_at,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const m of mrs)
      await k.insertInto('deployment_merge_requests').values({ deployment_id: d.id, merge_request_id: m.id, environment_id: env.id }).execute();
  }

  return { ...ctx, me, other, alice, bob, ext, top, sub, elsewhere, P, meTok, otherTok, extTok, mr, label, milestone, award, deploy };
}

/** ids of a list response (asserting it is a 200) */
export function idsOf(res: any): number[] {
  if (res.statusCode !== 200) throw new Error(`expected 200, got ${res.statusCode}: ${res.body}`);
  return res.json().map((m: { id: number }) => m.id);
}
