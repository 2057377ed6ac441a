// A large project, seeded fast, for the import/export bench and tests: the repository written by
// `git fast-import` (one process, one pack: 10,000 commits in a second or two), the rows by bulk inserts
// (chunks of 500) in one transaction. What it makes is deterministic (the same data on every run) and
// comes back counted, so that an imported copy can be compared with it.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import type { Container } from '../../src/container.ts';
import type { ProjectRow } from '../../src/db/schema.ts';
import { insertAll, projectRow, userRow } from './rows.ts';

export interface LargeProjectOptions {
  /** commits on the default branch (main), besides the feature branches' own (default 10,000) */
  commits?: number;
  /** branches besides main, each a few commits off main (default 8) */
  branches?: number;
  mergeRequests?: number;
  notes?: number;
  issues?: number;
  labels?: number;
  milestones?: number;
  /** project members (new users; default 50) */
  members?: number;
  /** the project's path in root's namespace (default "large-project") */
  path?: string;
  visibility?: 'private' | 'internal' | 'public';
}

export interface LargeProject {
  project: ProjectRow;
  /** the members' user ids */
  userIds: number[];
  /** every ref of the repository → its object id (branches, tags) */
  refs: Record<string, string>;
  counts: {
    commits: number;
    branches: number;
    tags: number;
    mergeRequests: number;
    notes: number;
    issues: number;
    labels: number;
    milestones: number;
    members: number;
    approvals: number;
    awardEmoji: number;
    mergeRequestLabels: number;
  };
  /** seconds spent: the repository, the rows */
  seconds: { repository: number; rows: number };
}

const BASE = Date.UTC(2024, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

/** A deterministic pseudo-random sequence (the same data on every run). */
function randomSequence(seed: number) {
  let s = seed;
  const rand = () => {
    s = (s * 1_103_515_245 + 12_345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
  return { rand, pick: <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] };
}

/**
 * Writes the history with one `git fast-import`: `commits` commits on main, each changing two of a
 * growing set of files (a new file every 50 commits), `branches` feature branches of 3 commits each off
 * main at spread points, and a lightweight tag every 1,000 commits plus an annotated v1.0.0.
 */
async function fastImport(gitDir: string, commits: number, branches: number): Promise<void> {
  const child = spawn('git', ['fast-import', '--quiet', '--done'], {
    cwd: gitDir,
    env: { ...process.env, GIT_DIR: gitDir },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
  const parts: string[] = [];
  let pending = 0;
  const flush = async () => {
    if (!parts.length) return;
    const ok = child.stdin.write(parts.join(''));
    parts.length = 0;
    pending = 0;
    if (!ok) await new Promise<void>((r) => child.stdin.once('drain', () => r()));
  };
  const emit = async (s: string) => {
    parts.push(s);
    pending += s.length;
    if (pending > 1 << 20) await flush();
  };
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}`; // every content ends with a newline
  const who = (n: number, at: number) => `Dev ${n % 7} <dev${n % 7}@example.com> ${Math.floor(at / 1000)} +0000`;
  let mark = 0;
  const mainMarks: number[] = [];
  const files = ['README.md'];
  for (let n = 0; n < commits; n++) {
    const at = BASE + n * 60_000;
    if (n % 50 === 0 && n > 0) files.push(`src/module-${n / 50}/file-${n}.ts`);
    const changed = n === 0 ? ['README.md'] : [files[n % files.length], files[(n * 7 + 3) % files.length]];
    mark++;
    let s = `commit refs/heads/main\nmark :${mark}\nauthor ${who(n, at)}\ncommitter ${who(n, at)}\n${data(`Change ${n}: ${changed.join(', ')}\n`)}`;
    if (n > 0) s += `from :${mainMarks[n - 1]}\n`;
    for (const f of new Set(changed)) s += `M 100644 inline ${f}\n${data(`// ${f}\nexport const revision = ${n};\n${'// padding line\n'.repeat(n % 20)}`)}`;
    await emit(s + '\n');
    mainMarks.push(mark);
    if (n > 0 && n % 1000 === 0) await emit(`reset refs/tags/r${n}\nfrom :${mark}\n\n`);
  }
  for (let b = 0; b < branches; b++) {
    const base = mainMarks[Math.floor(((b + 1) * (commits - 1)) / (branches + 1))];
    let parent = base;
    for (let j = 0; j < 3; j++) {
      const at = BASE + (commits + b * 3 + j) * 60_000;
      mark++;
      await emit(
        `commit refs/heads/feature-${b}\nmark :${mark}\nauthor ${who(b, at)}\ncommitter ${who(b, at)}\n${data(`Feature ${b}, step ${j}\n`)}from :${parent}\n` +
          `M 100644 inline features/feature-${b}.md\n${data(`# Feature ${b}\n\nstep ${j}\n`)}\n`,
      );
      parent = mark;
    }
  }
  await emit(`tag v1.0.0\nfrom :${mainMarks[mainMarks.length - 1]}\ntagger ${who(0, BASE)}\n${data('Release 1.0.0\n')}\n`);
  await emit('done\n');
  await flush();
  child.stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`git fast-import failed (${code}): ${stderr}`);
}

async function gitOut(gitDir: string, args: string[]): Promise<string> {
  const child = spawn('git', args, { env: { ...process.env, GIT_DIR: gitDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => out.push(d));
  const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? 1)));
  if (code !== 0) throw new Error(`git ${args.join(' ')} failed (${code})`);
  return Buffer.concat(out).toString();
}

/** Every ref of a bare repository → its object id. */
export async function repositoryRefs(gitDir: string): Promise<Record<string, string>> {
  const out = await gitOut(gitDir, ['for-each-ref', '--format=%(refname) %(objectname)']);
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ') as [string, string]),
  );
}

/**
 * A private project of root's namespace with a large history and `mergeRequests` merge requests (their
 * source branches the feature branches), `notes` notes on them (threads, some system notes), labels,
 * milestones, approvals, award emoji on merge requests and notes, issues, and `members` members; the
 * counters (user_notes_count, upvotes, downvotes) and internal_ids consistent with the rows.
 */
export async function seedLargeProject(c: Container, opts: LargeProjectOptions = {}): Promise<LargeProject> {
  const o = {
    commits: 10_000,
    branches: 8,
    mergeRequests: 5_000,
    notes: 20_000,
    issues: 1_000,
    labels: 30,
    milestones: 12,
    members: 50,
    path: 'large-project',
    visibility: 'private' as const,
    ...opts,
  };
  const { rand, pick } = randomSequence(17);
  const k = c.db.kysely;
  const now = iso(BASE);
  const ns = await k.selectFrom('namespaces').selectAll().where('owner_id', '=', 1).where('type', '=', 'User').executeTakeFirstOrThrow();
  const project = await k
    .insertInto('projects')
    .values(
      projectRow(
        ns.id,
        o.path,
        {
          creator_id: 1,
          name: o.path.replace(/-/g, ' ').replace(/^./, (x) => x.toUpperCase()),
          description: `A large project: ${o.commits} commits, ${o.mergeRequests} merge requests, ${o.notes} notes`,
          visibility: o.visibility,
          topics: '["bench","import-export"]',
        },
        now,
      ),
    )
    .returningAll()
    .executeTakeFirstOrThrow();

  // --- the repository ---
  const t0 = performance.now();
  const repo = await c.repos.create(project, { defaultBranch: 'main' });
  await fastImport(repo.gitDir, o.commits, o.branches);
  repo.touchRefs();
  const refs = await repositoryRefs(repo.gitDir);
  const t1 = performance.now();

  // --- the rows, in one transaction ---
  const tag = crypto.randomBytes(3).toString('hex');
  const userRows = Array.from({ length: o.members }, (_, j) => userRow(`${o.path}-${tag}-m${j}`, { name: `Member ${j}` }, now));
  const counts = await k.transaction().execute(async (trx) => {
    await insertAll(trx, 'users', userRows);
    const userIds = (await trx.selectFrom('users').select('id').where('username', 'like', `${o.path}-${tag}-m%`).orderBy('id').execute()).map((u) => u.id);
    const levels = [10, 20, 30, 30, 30, 40, 50];
    await insertAll(
      trx,
      'members',
      userIds.map((id, j) => ({
        source_type: 'Project' as const,
        source_id: project.id,
        user_id: id,
        access_level: levels[j % levels.length],
        expires_at: j % 10 === 9 ? '2099-12-31' : null,
        member_role_id: null,
        created_by_id: 1,
        created_at: now,
        updated_at: now,
      })),
    );
    const people = [1, ...userIds];

    await insertAll(
      trx,
      'labels',
      Array.from({ length: o.labels }, (_, i) => ({
        project_id: project.id,
        group_id: null,
        title: i % 3 === 0 ? `scope::label-${i}` : `label-${i}`,
        color: `#${((i * 2_654_435_761) >>> 8).toString(16).padStart(6, '0').slice(0, 6)}`,
        description: `Label ${i}`,
        priority: i % 5 === 0 ? i : null,
        created_at: now,
        updated_at: now,
      })),
    );
    const labelRows = await trx.selectFrom('labels').select(['id', 'title']).where('project_id', '=', project.id).orderBy('id').execute();
    const labelIds = labelRows.map((l) => l.id);
    await insertAll(
      trx,
      'milestones',
      Array.from({ length: o.milestones }, (_, i) => ({
        iid: i + 1,
        project_id: project.id,
        group_id: null,
        title: `v${i}.0`,
        description: `Milestone ${i}`,
        state: i < o.milestones / 2 ? 'closed' : 'active',
        due_date: iso(BASE + (i + 1) * 30 * 86_400_000).slice(0, 10),
        start_date: iso(BASE + i * 30 * 86_400_000).slice(0, 10),
        created_at: now,
        updated_at: now,
      })),
    );
    const milestoneIds = (await trx.selectFrom('milestones').select('id').where('project_id', '=', project.id).orderBy('id').execute()).map((m) => m.id);

    // merge requests: sources the feature branches (and branches that no longer exist, as after a merge)
    const STATES = ['opened', 'opened', 'merged', 'merged', 'closed'];
    const WORDS = ['fix', 'refactor', 'add', 'remove', 'update', 'cache', 'login', 'parser', 'api', 'docs', 'tests', 'build'];
    const mainHead = refs['refs/heads/main'] ?? null;
    const mrs = Array.from({ length: o.mergeRequests }, (_, n) => {
      const created = BASE + n * 120_000;
      const state = pick(STATES);
      const branch = n < o.branches ? `feature-${n}` : `topic-${n}`;
      const title = `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} #${n}`;
      const draft = rand() < 0.05;
      return {
        iid: n + 1,
        project_id: project.id,
        source_project_id: project.id,
        source_branch: branch,
        target_branch: 'main',
        title: draft ? `Draft: ${title}` : title,
        description: `Changes the ${pick(WORDS)} of the ${pick(WORDS)} (${n}).\n\nCloses nothing.`,
        state,
        draft: draft ? 1 : 0,
        author_id: pick(people),
        milestone_id: milestoneIds.length && rand() < 0.5 ? pick(milestoneIds) : null,
        merge_user_id: state === 'merged' ? pick(people) : null,
        closed_by_id: state === 'closed' ? pick(people) : null,
        sha: refs[`refs/heads/${branch}`] ?? mainHead,
        merge_commit_sha: state === 'merged' ? mainHead : null,
        merged_at: state === 'merged' ? iso(created + 3_600_000) : null,
        closed_at: state === 'closed' ? iso(created + 3_600_000) : null,
        created_at: iso(created),
        updated_at: iso(created + 7_200_000),
      };
    });
    await insertAll(trx, 'merge_requests', mrs);
    const mrRows = await trx.selectFrom('merge_requests').select(['id', 'state']).where('project_id', '=', project.id).orderBy('iid').execute();
    const mrIds = mrRows.map((m) => m.id);

    const assignees: any[] = [];
    const reviewers: any[] = [];
    const mrLabels: any[] = [];
    const approvals: any[] = [];
    for (const m of mrRows) {
      if (rand() < 0.7) assignees.push({ merge_request_id: m.id, user_id: pick(people), created_at: now });
      if (rand() < 0.5) reviewers.push({ merge_request_id: m.id, user_id: pick(people), created_at: now });
      const chosen = new Set<number>();
      const nLabels = labelIds.length ? Math.floor(rand() * 4) : 0;
      for (let j = 0; j < nLabels; j++) chosen.add(pick(labelIds));
      for (const l of chosen) mrLabels.push({ merge_request_id: m.id, label_id: l, created_at: now });
      if (m.state === 'merged' || rand() < 0.2) {
        const approvers = new Set<number>([pick(people), pick(people)]);
        for (const u of approvers) approvals.push({ merge_request_id: m.id, user_id: u, created_at: now });
      }
    }
    await insertAll(trx, 'merge_request_assignees', assignees);
    await insertAll(trx, 'merge_request_reviewers', reviewers);
    await insertAll(trx, 'merge_request_labels', mrLabels);
    await insertAll(trx, 'approvals', approvals);

    // notes: threads of 1–4 on random merge requests; a tenth system notes
    const notes: any[] = [];
    while (notes.length < o.notes && mrIds.length) {
      const mr = pick(mrIds);
      const discussion = crypto.createHash('sha1').update(`${project.id}:${notes.length}`).digest('hex');
      const thread = 1 + Math.floor(rand() * 4);
      const system = rand() < 0.1;
      for (let j = 0; j < thread && notes.length < o.notes; j++) {
        const at = iso(BASE + notes.length * 30_000);
        notes.push({
          project_id: project.id,
          noteable_type: 'MergeRequest',
          noteable_id: mr,
          discussion_id: discussion,
          type: system ? null : thread > 1 ? 'DiscussionNote' : null,
          author_id: pick(people),
          body: system ? `added ${1 + (notes.length % 5)} commits` : `Comment ${notes.length}: ${pick(WORDS)} the ${pick(WORDS)}, please.`,
          system: system ? 1 : 0,
          internal: !system && rand() < 0.05 ? 1 : 0,
          resolvable: !system && thread > 1 ? 1 : 0,
          resolved_at: null,
          resolved_by_id: null,
          position: null,
          created_at: at,
          updated_at: at,
        });
        if (system) break;
      }
    }
    await insertAll(trx, 'notes', notes);
    const noteIds = (await trx.selectFrom('notes').select('id').where('project_id', '=', project.id).where('system', '=', 0).orderBy('id').execute()).map(
      (n) => n.id,
    );

    // award emoji: on a third of the merge requests and a tenth of the notes, one per user and name
    const EMOJI = ['thumbsup', 'thumbsup', 'thumbsdown', 'tada', 'rocket', 'eyes'];
    const awards: any[] = [];
    const seen = new Set<string>();
    const award = (type: 'MergeRequest' | 'Note', id: number) => {
      const name = pick(EMOJI);
      const user = pick(people);
      const key = `${type}:${id}:${user}:${name}`;
      if (seen.has(key)) return;
      seen.add(key);
      awards.push({ awardable_type: type, awardable_id: id, user_id: user, name, created_at: now, updated_at: now });
    };
    for (const id of mrIds) if (rand() < 0.33) for (let j = 0; j < 1 + Math.floor(rand() * 3); j++) award('MergeRequest', id);
    for (const id of noteIds) if (rand() < 0.1) award('Note', id);
    await insertAll(trx, 'award_emoji', awards);

    // the counters the merge request rows keep, in one statement
    await trx
      .updateTable('merge_requests')
      .set((eb) => ({
        user_notes_count: eb
          .selectFrom('notes')
          .select((n) => n.fn.countAll<number>().as('n'))
          .where('notes.noteable_type', '=', 'MergeRequest')
          .whereRef('notes.noteable_id', '=', 'merge_requests.id')
          .where('notes.system', '=', 0),
        upvotes: eb
          .selectFrom('award_emoji')
          .select((a) => a.fn.countAll<number>().as('n'))
          .where('award_emoji.awardable_type', '=', 'MergeRequest')
          .whereRef('award_emoji.awardable_id', '=', 'merge_requests.id')
          .where('award_emoji.name', '=', 'thumbsup'),
        downvotes: eb
          .selectFrom('award_emoji')
          .select((a) => a.fn.countAll<number>().as('n'))
          .where('award_emoji.awardable_type', '=', 'MergeRequest')
          .whereRef('award_emoji.awardable_id', '=', 'merge_requests.id')
          .where('award_emoji.name', '=', 'thumbsdown'),
      }))
      .where('project_id', '=', project.id)
      .execute();

    const issueRows = Array.from({ length: o.issues }, (_, n) => {
      const closed = rand() < 0.4;
      const created = BASE + n * 300_000;
      return {
        project_id: project.id,
        iid: n + 1,
        title: `Issue ${n}: ${pick(WORDS)} ${pick(WORDS)}`,
        description: `Steps to reproduce ${n}.`,
        state: closed ? 'closed' : 'opened',
        author_id: pick(people),
        milestone_id: milestoneIds.length && rand() < 0.3 ? pick(milestoneIds) : null,
        confidential: rand() < 0.05 ? 1 : 0,
        discussion_locked: null,
        due_date: null,
        weight: null,
        closed_by_id: closed ? pick(people) : null,
        closed_at: closed ? iso(created + 86_400_000) : null,
        created_at: iso(created),
        updated_at: iso(created + 3_600_000),
      };
    });
    await insertAll(trx, 'issues', issueRows);
    const issueIds = (await trx.selectFrom('issues').select('id').where('project_id', '=', project.id).orderBy('iid').execute()).map((r) => r.id);
    await insertAll(
      trx,
      'issue_assignees',
      issueIds.flatMap((issue_id) => (rand() < 0.5 ? [{ issue_id, user_id: pick(people), created_at: iso(BASE) }] : [])),
    );
    await insertAll(
      trx,
      'issue_labels',
      issueIds.flatMap((issue_id) =>
        labelRows.length && rand() < 0.5 ? [{ issue_id, label_id: pick(labelRows).id, project_id: project.id, created_at: iso(BASE) }] : [],
      ),
    );

    const iids: [string, number][] = [
      ['merge_requests', o.mergeRequests],
      ['milestones', o.milestones],
      ['issues', o.issues],
    ];
    for (const [usage, last] of iids) {
      if (last) await trx.insertInto('internal_ids').values({ usage, scope_type: 'Project', scope_id: project.id, last_value: last }).execute();
    }
    return {
      userIds,
      mergeRequests: mrs.length,
      notes: notes.length,
      issues: o.issues,
      labels: labelIds.length,
      milestones: milestoneIds.length,
      members: userIds.length,
      approvals: approvals.length,
      awardEmoji: awards.length,
      mergeRequestLabels: mrLabels.length,
    };
  });
  const t2 = performance.now();
  const { userIds, ...rows } = counts;
  const branches = Object.keys(refs).filter((r) => r.startsWith('refs/heads/')).length;
  const tags = Object.keys(refs).filter((r) => r.startsWith('refs/tags/')).length;
  return {
    project,
    userIds,
    refs,
    counts: { commits: o.commits + o.branches * 3, branches, tags, ...rows },
    seconds: { repository: (t1 - t0) / 1000, rows: (t2 - t1) / 1000 },
  };
}
