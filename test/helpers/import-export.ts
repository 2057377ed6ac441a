// Fixtures of the project export/import tests: a project with something of every relation the archive
// carries, built through the real API (app.inject with the root token or members' tokens) where the API
// exists, and as rows where it does not (issues, pipelines).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';
import type { CiBuildRow, CiPipelineRow, IssueRow, NamespaceRow, NoteRow, ProjectRow, UserRow } from '../../src/db/schema.ts';
import type { TestApp } from './build-app.ts';
import { fixtureEnv, WorkTree, AUTHOR } from './git.ts';
import { seedPipeline } from './ci.ts';

export const RICH_T0 = 1_700_000_000;

export interface RichProject {
  group: NamespaceRow;
  project: ProjectRow;
  /** the bare repository */
  dir: string;
  owner: UserRow;
  developer: UserRow;
  maintainer: UserRow;
  tokens: { owner: Record<string, string>; developer: Record<string, string>; maintainer: Record<string, string> };
  shas: { c1: string; c2: string; f1: string; f2: string; t1: string };
  /** project labels bug, feature and the group label `group-label` */
  labels: { bug: any; feature: any; group: any };
  milestones: { v1: any; v2: any };
  /** API bodies (as after the last change) */
  mrs: { opened: any; merged: any; closed: any };
  /** every note of the project, oldest first */
  notes: NoteRow[];
  /** the discussion with a reply (on the opened MR) */
  discussionId: string;
  issue: IssueRow;
  pipeline: CiPipelineRow;
  jobs: CiBuildRow[];
}

async function api(ta: TestApp, method: string, url: string, headers: Record<string, string>, payload?: unknown, status = 201): Promise<any> {
  const r = await ta.app.inject({ method: method as 'GET', url: `/api/v4${url}`, headers, payload: payload as any });
  assert.equal(r.statusCode, status, `${method} ${url}: ${r.body}`);
  return r.body ? r.json() : null;
}

/**
 * A private project in a group, with:
 * - commits on main (c1, c2) and on `feature` (f1, f2), a tag v1.0 (annotated, at c2 → t1 is its object);
 * - project labels `bug`, `feature` and a group label `group-label`; milestones v1.0 (active) and v2.0 (closed);
 * - members: the owner (Owner, a group-less personal member of the project), a Developer and a Maintainer
 *   with distinct emails;
 * - merge requests !1 opened (feature → main, labels bug + group-label, milestone v1.0, assignee and
 *   reviewer the maintainer; an approval by the maintainer; award emoji on it and on a note; a discussion
 *   with a reply; a system note), !2 merged (a real merge of `topic`), !3 closed;
 * - issue #1 (a row, with a note) and pipeline #1 on main with two jobs (build, test);
 * - the Development board with a list of the bug label.
 */
export async function seedRichProject(ta: TestApp, opts: { path?: string } = {}): Promise<RichProject> {
  const { seed, c } = ta;
  const tag = Math.random().toString(36).slice(2, 7);
  const owner = await seed.user({ username: `owner${tag}`, name: 'Olive Owner', email: `olive.${tag}@example.com` });
  const developer = await seed.user({ username: `dev${tag}`, name: 'Dee Developer', email: `dee.${tag}@example.com` });
  const maintainer = await seed.user({ username: `mae${tag}`, name: 'Mae Maintainer', email: `mae.${tag}@example.com` });
  const group = await seed.group({ path: `grp-${tag}`, visibility: 'private' });
  const { project, dir } = await seed.repoProject({ namespace: group, path: opts.path ?? 'rich', visibility: 'private' });
  await seed.member({ project }, owner, 50);
  const root = ta.root;
  const tokens = {
    owner: (await seed.token(owner)).headers,
    developer: (await seed.token(developer)).headers,
    maintainer: (await seed.token(maintainer)).headers,
  };
  await api(ta, 'POST', `/projects/${project.id}/members`, root, { user_id: developer.id, access_level: 30 });
  await api(ta, 'POST', `/projects/${project.id}/members`, root, { user_id: maintainer.id, access_level: 40 });

  // The repository: a working copy under the test's data directory (removed with it).
  const wtDir = fs.mkdtempSync(path.join(ta.dataDir, 'seed-wt-'));
  execFileSync('git', ['clone', '-q', dir, wtDir], { env: fixtureEnv(), stdio: 'pipe' });
  const wt = new WorkTree(wtDir);
  wt.git(['config', 'user.name', AUTHOR.name]);
  wt.git(['config', 'user.email', AUTHOR.email]);
  wt.git(['checkout', '-q', '-B', 'main']);
  const c1 = wt.write('README.md', 'one\ntwo\nthree\n').commit('Initial commit', { time: RICH_T0 });
  const c2 = wt.write('lib/app.rb', 'puts 1\n').commit('Add the app', { time: RICH_T0 + 60 });
  wt.tag('v1.0', 'Release 1.0');
  wt.checkout('feature', true);
  const f1 = wt.write('f.txt', 'f\n').commit('Feature work', { time: RICH_T0 + 120, author: { name: developer.name, email: developer.email } });
  const f2 = wt.write('f.txt', 'f\nf2\n').commit('More feature work', { time: RICH_T0 + 180, author: { name: developer.name, email: developer.email } });
  wt.checkout('main').checkout('topic', true);
  wt.write('t.txt', 't\n').commit('Topic work', { time: RICH_T0 + 240 });
  wt.checkout('main').checkout('dropped', true);
  wt.write('d.txt', 'd\n').commit('Dropped work', { time: RICH_T0 + 300 });
  wt.checkout('main');
  wt.push();
  const t1 = wt.git(['rev-parse', 'refs/tags/v1.0']);
  fs.rmSync(wtDir, { recursive: true, force: true });

  const labels = {
    bug: await api(ta, 'POST', `/projects/${project.id}/labels`, root, { name: 'bug', color: '#d9534f', description: 'Something is broken' }),
    feature: await api(ta, 'POST', `/projects/${project.id}/labels`, root, { name: 'feature', color: '#5cb85c', priority: 2 }),
    group: await api(ta, 'POST', `/groups/${group.id}/labels`, root, { name: 'group-label', color: '#428bca', description: 'From the group' }),
  };
  const v1 = await api(ta, 'POST', `/projects/${project.id}/milestones`, root, {
    title: 'v1.0',
    description: 'First',
    due_date: '2030-01-31',
    start_date: '2030-01-01',
  });
  let v2 = await api(ta, 'POST', `/projects/${project.id}/milestones`, root, { title: 'v2.0' });
  v2 = await api(ta, 'PUT', `/projects/${project.id}/milestones/${v2.id}`, root, { state_event: 'close' }, 200);

  const mrs = `/projects/${project.id}/merge_requests`;
  let opened = await api(ta, 'POST', mrs, tokens.developer, {
    source_branch: 'feature',
    target_branch: 'main',
    title: 'Add the feature',
    description: 'It does **things**',
    labels: 'bug,group-label',
    milestone_id: v1.id,
    assignee_ids: [maintainer.id],
    reviewer_ids: [maintainer.id],
  });
  let merged = await api(ta, 'POST', mrs, tokens.developer, { source_branch: 'topic', target_branch: 'main', title: 'Topic', labels: 'feature' });
  let closed = await api(ta, 'POST', mrs, tokens.developer, { source_branch: 'dropped', target_branch: 'main', title: 'Dropped idea' });

  const note1 = await api(ta, 'POST', `${mrs}/${opened.iid}/notes`, tokens.maintainer, { body: 'Looks good overall' });
  const disc = await api(ta, 'POST', `${mrs}/${opened.iid}/discussions`, tokens.maintainer, { body: 'Why this name?' });
  await api(ta, 'POST', `${mrs}/${opened.iid}/discussions/${disc.id}/notes`, tokens.developer, { body: 'It is the usual one' });
  await api(ta, 'POST', `${mrs}/${opened.iid}/approve`, tokens.maintainer); // a system note "approved this merge request"
  await api(ta, 'POST', `${mrs}/${opened.iid}/award_emoji`, tokens.maintainer, { name: 'thumbsup' });
  await api(ta, 'POST', `${mrs}/${opened.iid}/notes/${note1.id}/award_emoji`, tokens.developer, { name: 'heart' });
  await api(ta, 'POST', `${mrs}/${merged.iid}/notes`, root, { body: 'Merging this' });
  merged = await api(ta, 'PUT', `${mrs}/${merged.iid}/merge`, tokens.maintainer, undefined, 200);
  closed = await api(ta, 'PUT', `${mrs}/${closed.iid}`, tokens.maintainer, { state_event: 'close' }, 200);
  opened = await api(ta, 'GET', `${mrs}/${opened.iid}`, root, undefined, 200);

  const now = new Date().toISOString();
  const issue = await c.db.kysely
    .insertInto('issues')
    .values({
      project_id: project.id,
      iid: 1,
      title: 'Something is wrong',
      description: 'Steps to reproduce',
      state: 'opened',
      author_id: developer.id,
      milestone_id: v1.id,
      confidential: 0,
      discussion_locked: null,
      due_date: '2030-02-01',
      weight: null,
      closed_by_id: null,
      closed_at: null,
      user_notes_count: 1, // the note below
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await c.db.kysely.insertInto('issue_assignees').values({ issue_id: issue.id, user_id: maintainer.id, created_at: now }).execute();
  const bug = await c.db.kysely.selectFrom('labels').select('id').where('project_id', '=', project.id).where('title', '=', 'bug').executeTakeFirstOrThrow();
  await c.db.kysely.insertInto('issue_labels').values({ issue_id: issue.id, label_id: bug.id, project_id: project.id, created_at: now }).execute();
  // an issue board with a list of the bug label
  const [board] = await api(ta, 'GET', `/projects/${project.id}/boards`, root, undefined, 200);
  await api(ta, 'POST', `/projects/${project.id}/boards/${board.id}/lists`, root, { label_id: bug.id });
  await c.db.kysely
    .insertInto('notes')
    .values({
      project_id: project.id,
      noteable_type: 'Issue',
      noteable_id: issue.id,
      discussion_id: 'b'.repeat(40),
      type: null,
      author_id: maintainer.id,
      body: 'I can reproduce it',
      position: null,
      resolved_at: null,
      resolved_by_id: null,
      created_at: now,
      updated_at: now,
    })
    .execute();

  const { pipeline: p0, jobs } = await seedPipeline(c, project, { ref: 'main', sha: c2, status: 'failed', user_id: maintainer.id, source: 'push' }, [
    { name: 'build', stage: 'build', stage_idx: 0, status: 'success' },
    { name: 'test', stage: 'test', stage_idx: 1, status: 'failed', allow_failure: false },
  ]);
  const pipeline = await c.db.kysely.updateTable('ci_pipelines').set({ iid: 1 }).where('id', '=', p0.id).returningAll().executeTakeFirstOrThrow();
  await c.db.kysely
    .insertInto('internal_ids')
    .values({ usage: 'ci_pipelines', scope_type: 'Project', scope_id: project.id, last_value: 1 })
    .onConflict((oc) => oc.columns(['usage', 'scope_type', 'scope_id']).doUpdateSet({ last_value: 1 }))
    .execute();

  const notes = await c.db.kysely.selectFrom('notes').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
  return {
    group,
    project: await c.db.kysely.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow(),
    dir,
    owner,
    developer,
    maintainer,
    tokens,
    shas: { c1, c2, f1, f2, t1 },
    labels,
    milestones: { v1, v2 },
    mrs: { opened, merged, closed },
    notes,
    discussionId: disc.id,
    issue,
    pipeline,
    jobs,
  };
}

/** Reads `<dir>/<file>` as ndjson (one object per line). */
export function readNdjson(file: string): any[] {
  const text = fs.readFileSync(file, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}
