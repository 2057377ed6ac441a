// POST /markdown with gfm and a project: GitLab references (issues, merge requests, labels, milestones,
// users and groups) linked with GitLab's HTML, across projects, left as written when they name nothing, and
// redacted per viewer (confidential issues, private projects) without leaking a title; the render cache
// keeps one linking for every viewer and follows renames.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Container } from '../../../src/container.ts';
import type { NamespaceRow, ProjectRow, UserRow } from '../../../src/db/schema.ts';
import { nowIso } from '../../../src/lib/time.ts';
import { buildTestApp, EXTERNAL_URL as X } from '../../helpers/build-app.ts';
import { bareGit, workTree } from '../../helpers/git.ts';

async function issue(c: Container, project: ProjectRow, iid: number, attrs: Partial<{ title: string; confidential: number; author_id: number }> = {}) {
  const now = nowIso();
  return c.db.kysely
    .insertInto('issues')
    .values({ project_id: project.id, iid, title: `Issue ${iid}`, state: 'opened', author_id: null, created_at: now, updated_at: now, ...attrs })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function mergeRequest(c: Container, project: ProjectRow, iid: number, title: string) {
  const now = nowIso();
  return c.db.kysely
    .insertInto('merge_requests')
    .values({
      iid,
      project_id: project.id,
      source_project_id: project.id,
      source_branch: `feature-${iid}`,
      target_branch: 'main',
      title,
      description: null,
      state: 'opened',
      author_id: null,
      milestone_id: null,
      merge_user_id: null,
      closed_by_id: null,
      sha: null,
      diff_base_sha: null,
      merge_commit_sha: null,
      squash_commit_sha: null,
      merge_error: null,
      fast_forward_possible: null,
      discussion_locked: null,
      merged_at: null,
      closed_at: null,
      prepared_at: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function label(c: Container, owner: { project?: ProjectRow; group?: NamespaceRow }, title: string, color: string, description: string | null = null) {
  const now = nowIso();
  return c.db.kysely
    .insertInto('labels')
    .values({
      project_id: owner.project?.id ?? null,
      group_id: owner.group?.id ?? null,
      title,
      color,
      description,
      priority: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

async function milestone(c: Container, owner: { project?: ProjectRow; group?: NamespaceRow }, iid: number, title: string) {
  const now = nowIso();
  return c.db.kysely
    .insertInto('milestones')
    .values({
      iid,
      project_id: owner.project?.id ?? null,
      group_id: owner.group?.id ?? null,
      title,
      description: null,
      state: 'active',
      due_date: null,
      start_date: null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

type App = Awaited<ReturnType<typeof buildTestApp>>['app'];
async function md(app: App, headers: Record<string, string>, text: string, project?: string, gfm = true): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v4/markdown', headers, payload: { text, gfm, ...(project ? { project } : {}) } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().html as string;
}

test('each kind of reference becomes GitLab’s link; titles and names escaped', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice', name: 'Alice <Admin> "A"' });
  const group = await seed.group({ path: 'grp', name: 'The Group' });
  const sub = await seed.group({ path: 'sub', name: 'Sub & Co', parent: group });
  const project = await seed.project({ namespace: group, path: 'proj', visibility: 'public' });
  const p = project.id;
  const i1 = await issue(c, project, 1, { title: 'First "issue" <b>bold</b>' });
  const mr = await mergeRequest(c, project, 1, 'Add <feature> & more');
  const bug = await label(c, { project }, 'bug', '#FF0000', 'Something <broken>');
  const two = await label(c, { project }, 'two words', '#eeeeee');
  const m1 = await milestone(c, { project }, 1, 'v1.0');
  const m2 = await milestone(c, { project }, 2, 'Big release');
  const ctx = 'grp/proj';

  assert.equal(
    await md(app, root, 'See #1.', ctx),
    `<p>See <a href="${X}/grp/proj/-/issues/1" data-reference-type="issue" data-original="#1" data-link="false" data-link-reference="false" data-project="${p}" data-issue="${i1.id}" data-project-path="grp/proj" data-iid="1" data-issue-type="issue" data-container="body" data-placement="top" title="First &quot;issue&quot; &lt;b&gt;bold&lt;/b&gt;" class="gfm gfm-issue">#1</a>.</p>`,
  );
  assert.equal(
    await md(app, root, '!1', ctx),
    `<p><a href="${X}/grp/proj/-/merge_requests/1" data-reference-type="merge_request" data-original="!1" data-link="false" data-link-reference="false" data-project="${p}" data-merge-request="${mr.id}" data-project-path="grp/proj" data-iid="1" data-container="body" data-placement="top" title="Add &lt;feature&gt; &amp; more" class="gfm gfm-merge_request">!1</a></p>`,
  );
  const bugLink = (original: string) =>
    // black text on red: the contrast of the pages (WCAG), where GitLab's sum of channels chooses white
    `<span class="gl-label gl-label-sm"><a href="${X}/grp/proj/-/issues?label_name=bug" data-reference-type="label" data-original="${original}" data-link="false" data-link-reference="false" data-project="${p}" data-label="${bug.id}" data-container="body" data-placement="top" title="Something &lt;broken&gt;" class="gfm gfm-label has-tooltip gl-link gl-label-link"><span class="gl-label-text gl-label-text-dark" data-container="body" data-html="true" style="background-color: #FF0000">bug</span></a></span>`;
  assert.equal(await md(app, root, `~bug ~${bug.id}`, ctx), `<p>${bugLink('~bug')} ${bugLink(`~${bug.id}`)}</p>`);
  assert.equal(
    await md(app, root, '~"two words"', ctx),
    `<p><span class="gl-label gl-label-sm"><a href="${X}/grp/proj/-/issues?label_name=two+words" data-reference-type="label" data-original="~&quot;two words&quot;" data-link="false" data-link-reference="false" data-project="${p}" data-label="${two.id}" data-container="body" data-placement="top" title="" class="gfm gfm-label has-tooltip gl-link gl-label-link"><span class="gl-label-text gl-label-text-dark" data-container="body" data-html="true" style="background-color: #eeeeee">two words</span></a></span></p>`,
  );
  const milestoneLink = (m: { id: number; iid: number; title: string }, original: string) =>
    `<a href="${X}/grp/proj/-/milestones/${m.iid}" data-reference-type="milestone" data-original="${original}" data-link="false" data-link-reference="false" data-project="${p}" data-milestone="${m.id}" data-container="body" data-placement="top" title="" class="gfm gfm-milestone has-tooltip">%${m.title}</a>`;
  assert.equal(
    await md(app, root, '%v1.0 %"Big release" %2', ctx),
    `<p>${milestoneLink(m1, '%v1.0')} ${milestoneLink(m2, '%&quot;Big release&quot;')} ${milestoneLink(m2, '%2')}</p>`,
  );
  assert.equal(
    await md(app, root, 'cc @alice, @grp/sub and @all', ctx),
    `<p>cc <a href="${X}/alice" data-reference-type="user" data-user="${alice.id}" data-container="body" data-placement="top" class="gfm gfm-project_member js-user-link" title="Alice &lt;Admin&gt; &quot;A&quot;">@alice</a>, ` +
      `<a href="${X}/groups/grp/sub" data-reference-type="user" data-group="${sub.id}" data-container="body" data-placement="top" class="gfm gfm-project_member js-user-link" title="The Group / Sub &amp; Co">@grp/sub</a> and ` +
      `<a href="${X}/grp/proj" data-reference-type="user" data-project="${p}" data-container="body" data-placement="top" class="gfm gfm-project_member js-user-link" title="All Project and Group Members">@all</a></p>`,
  );
  // inside emphasis, headings and lists too; the heading's anchor reads the reference's text
  assert.match(
    await md(app, root, '# Fixes #1', ctx),
    /^<h1 dir="auto"><a href="#fixes-1" aria-hidden="true" class="anchor" id="user-content-fixes-1"><\/a>Fixes <a href="[^"]+\/issues\/1" /,
  );
  assert.match(await md(app, root, '- **!1**', ctx), /<li><strong><a href="[^"]+\/merge_requests\/1" [^>]*>!1<\/a><\/strong><\/li>/);
});

test('cross-project references: sibling and distant projects, inherited group labels and milestones', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp', name: 'Grp' });
  const far = await seed.group({ path: 'far', name: 'Far Away' });
  const project = await seed.project({ namespace: group, path: 'proj', visibility: 'public' });
  const sibling = await seed.project({ namespace: group, path: 'other', name: 'Other One', visibility: 'public' });
  const distant = await seed.project({ namespace: far, path: 'lib', name: 'Lib', visibility: 'public' });
  const i = await issue(c, sibling, 3, { title: 'Sibling issue' });
  const j = await issue(c, distant, 4, { title: 'Distant issue' });
  const mr = await mergeRequest(c, sibling, 2, 'Sibling MR');
  const own = await issue(c, project, 5, { title: 'Own issue' });
  const sibLabel = await label(c, { project: sibling }, 'bug', '#000000');
  const farLabel = await label(c, { project: distant }, 'bug', '#000000');
  const groupLabel = await label(c, { group }, 'group-wide', '#00ff00');
  const sibMilestone = await milestone(c, { project: sibling }, 1, 'v2');
  const groupMilestone = await milestone(c, { group }, 1, 'Q3 plan');
  const ctx = 'grp/proj';

  const html = await md(app, root, 'grp/other#3 other#3 far/lib#4 other!2 grp/proj#5', ctx);
  const issueLink = (path: string, pid: number, row: { id: number; iid: number; title: string }, original: string, text: string) =>
    `<a href="${X}/${path}/-/issues/${row.iid}" data-reference-type="issue" data-original="${original}" data-link="false" data-link-reference="false" data-project="${pid}" data-issue="${row.id}" data-project-path="${path}" data-iid="${row.iid}" data-issue-type="issue" data-container="body" data-placement="top" title="${row.title}" class="gfm gfm-issue">${text}</a>`;
  assert.equal(
    html,
    `<p>${issueLink('grp/other', sibling.id, i, 'grp/other#3', 'other#3')} ${issueLink('grp/other', sibling.id, i, 'other#3', 'other#3')} ` +
      `${issueLink('far/lib', distant.id, j, 'far/lib#4', 'far/lib#4')} ` +
      `<a href="${X}/grp/other/-/merge_requests/2" data-reference-type="merge_request" data-original="other!2" data-link="false" data-link-reference="false" data-project="${sibling.id}" data-merge-request="${mr.id}" data-project-path="grp/other" data-iid="2" data-container="body" data-placement="top" title="Sibling MR" class="gfm gfm-merge_request">other!2</a> ` +
      `${issueLink('grp/proj', project.id, own, 'grp/proj#5', '#5')}</p>`,
  );

  // a label of another project names the project (its name; with the namespace's across namespaces)
  const labelLink = (path: string, pid: number, id: number, original: string, inner: string) =>
    `<span class="gl-label gl-label-sm"><a href="${X}/${path}/-/issues?label_name=bug" data-reference-type="label" data-original="${original}" data-link="false" data-link-reference="false" data-project="${pid}" data-label="${id}" data-container="body" data-placement="top" title="" class="gfm gfm-label has-tooltip gl-link gl-label-link"><span class="gl-label-text gl-label-text-light" data-container="body" data-html="true" style="background-color: #000000">${inner}</span></a></span>`;
  assert.equal(
    await md(app, root, 'other~bug far/lib~bug', ctx),
    `<p>${labelLink('grp/other', sibling.id, sibLabel.id, 'other~bug', 'bug <i>in Other One</i>')} ${labelLink('far/lib', distant.id, farLabel.id, 'far/lib~bug', 'bug <i>in Far Away / Lib</i>')}</p>`,
  );
  // a group label is the project's too; a project has no `bug` of its own here
  assert.match(
    await md(app, root, '~group-wide ~bug', ctx),
    new RegExp(`^<p><span class="gl-label gl-label-sm"><a [^>]*data-label="${groupLabel.id}"[^>]*>.*</span> ~bug</p>$`),
  );
  assert.equal(
    await md(app, root, 'other%v2 %"Q3 plan"', ctx),
    `<p><a href="${X}/grp/other/-/milestones/1" data-reference-type="milestone" data-original="other%v2" data-link="false" data-link-reference="false" data-project="${sibling.id}" data-milestone="${sibMilestone.id}" data-container="body" data-placement="top" title="" class="gfm gfm-milestone has-tooltip">%v2 <i>in other</i></a> ` +
      `<a href="${X}/groups/grp/-/milestones/1" data-reference-type="milestone" data-original="%&quot;Q3 plan&quot;" data-link="false" data-link-reference="false" data-group="${group.id}" data-namespace="${group.id}" data-milestone="${groupMilestone.id}" data-container="body" data-placement="top" title="" class="gfm gfm-milestone has-tooltip">%Q3 plan</a></p>`,
  );
});

test('references to nothing, in code, in links or escaped stay as written', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'proj', visibility: 'public' });
  await issue(c, project, 1);
  const ctx = 'grp/proj';
  assert.equal(
    await md(app, root, '#99 !99 ~nolabel ~"no such" %none %99 @nobody nothere#1 far/away!1 #0 #1x', ctx),
    '<p>#99 !99 ~nolabel ~&quot;no such&quot; %none %99 @nobody nothere#1 far/away!1 #0 #1x</p>',
  );
  assert.equal(
    await md(app, root, '`#1` [see #1](https://e.com) \\#1 <https://e.com/#1>\n\n```\n#1\n```\n\n    #1', ctx),
    '<p><code>#1</code> <a href="https://e.com" rel="nofollow noreferrer noopener" target="_blank">see #1</a> #1 <a href="https://e.com/#1" rel="nofollow noreferrer noopener" target="_blank">https://e.com/#1</a></p>\n<pre><code>#1\n</code></pre>\n<pre><code>#1\n</code></pre>',
  );
  // without gfm nothing is a reference; without a project only users and groups
  assert.equal(await md(app, root, '#1 @root', ctx, false), '<p>#1 @root</p>');
  assert.match(await md(app, root, '#1 ~a grp/proj#1 @root'), /^<p>#1 ~a grp\/proj#1 <a href="[^"]+\/root" data-reference-type="user" [^>]+>@root<\/a><\/p>$/);
});

test('redaction: a confidential issue for Reporters, its author and assignees; a private project for its members', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const [author, assignee, guest, reporter, stranger, admin] = await Promise.all([
    seed.user(),
    seed.user(),
    seed.user(),
    seed.user(),
    seed.user(),
    seed.user({ is_admin: true }),
  ]);
  const group = await seed.group({ path: 'grp', visibility: 'public' });
  const project = await seed.project({ namespace: group, path: 'proj', visibility: 'public' });
  await seed.member({ project }, guest, 10);
  await seed.member({ group }, reporter, 20);
  const secret = await issue(c, project, 2, { title: 'Secret "plan"', confidential: 1, author_id: author.id });
  await c.db.kysely.insertInto('issue_assignees').values({ issue_id: secret.id, user_id: assignee.id, created_at: nowIso() }).execute();
  const privateProject = await seed.project({ namespace: group, path: 'hidden', visibility: 'private' });
  await seed.member({ project: privateProject }, reporter, 20);
  await mergeRequest(c, privateProject, 1, 'Private change');
  await issue(c, privateProject, 1, { title: 'Private issue' });

  const headers = async (u: UserRow | null) => (u ? (await seed.token(u)).headers : {});
  const text = 'See #2, hidden!1 and hidden#1.';
  const redacted = '<p>See #2, hidden!1 and hidden#1.</p>';
  for (const who of [null, stranger, guest]) {
    const html = await md(app, await headers(who), text, 'grp/proj');
    assert.equal(html, redacted, who?.username ?? 'anonymous');
  }
  for (const who of [author, assignee]) {
    const html = await md(app, await headers(who), text, 'grp/proj');
    assert.equal(html.match(/<a /g)?.length, 1, who.username);
    assert.ok(html.includes('title="Secret &quot;plan&quot;"'), html);
  }
  for (const who of [reporter, admin]) {
    const html = await md(app, await headers(who), text, 'grp/proj');
    assert.equal(html.match(/<a /g)?.length, 3, html);
    assert.ok(html.includes('title="Private change"') && html.includes('title="Private issue"') && html.includes('title="Secret &quot;plan&quot;"'), html);
  }
  // the private project's own page context is 404 for those who cannot see it
  const hidden = await app.inject({
    method: 'POST',
    url: '/api/v4/markdown',
    headers: await headers(stranger),
    payload: { text: '!1', gfm: true, project: 'grp/hidden' },
  });
  assert.equal(hidden.statusCode, 404);
  assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });
  const member = await md(app, await headers(reporter), '!1 #1', 'grp/hidden');
  assert.match(member, /^<p><a href="[^"]+\/grp\/hidden\/-\/merge_requests\/1" [^>]+>!1<\/a> <a href="[^"]+\/grp\/hidden\/-\/issues\/1" [^>]+>#1<\/a><\/p>$/);
  // a project whose issues are for members only: its public issue is redacted for outsiders
  await c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ issues_access_level: 'private' }) })
    .where('id', '=', project.id)
    .execute();
  await issue(c, project, 3, { title: 'Members only' });
  assert.equal(await md(app, await headers(stranger), '#3', 'grp/proj'), '<p>#3</p>');
  assert.match(await md(app, await headers(guest), '#3', 'grp/proj'), /title="Members only"/);
});

test('the cache: one linking for every viewer, redacted per viewer; renames and new titles show at once', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'proj', visibility: 'public' });
  const secret = await issue(c, project, 1, { title: 'Hidden', confidential: 1 });
  const bug = await label(c, { project }, 'bug', '#FF0000');
  const text = '#1 and ~bug';
  const before = { ...c.markdown.counts };
  const forRoot = await md(app, root, text, 'grp/proj');
  const forAnonymous = await md(app, {}, text, 'grp/proj');
  assert.match(forRoot, /title="Hidden"/);
  assert.match(forAnonymous, /^<p>#1 and <span class="gl-label gl-label-sm"><a /);
  assert.ok(!forAnonymous.includes('Hidden'));
  assert.equal(c.markdown.counts.sync - before.sync, 1, 'rendered once');
  assert.equal(c.markdown.counts.hits - before.hits, 1, 'the second viewer reads the cache');

  // renamed through the API: the same text now shows the new title (its reference by id still resolves)
  const renamed = await app.inject({ method: 'PUT', url: `/api/v4/projects/${project.id}/labels/${bug.id}`, headers: root, payload: { new_name: 'defect' } });
  assert.equal(renamed.statusCode, 200, renamed.body);
  assert.match(await md(app, root, `~${bug.id}`, 'grp/proj'), />defect<\/span><\/a><\/span><\/p>$/);
  assert.equal(await md(app, root, '~bug', 'grp/proj'), '<p>~bug</p>');
  await c.db.kysely.updateTable('issues').set({ title: 'Renamed' }).where('id', '=', secret.id).execute();
  assert.match(await md(app, root, text, 'grp/proj'), /title="Renamed"/);
});

test('a long text (rendered on a worker thread) links and redacts its references the same way', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const project = await seed.project({ namespace: group, path: 'proj', visibility: 'public' });
  await issue(c, project, 1, { title: 'Open issue' });
  await issue(c, project, 2, { title: 'Closed door', confidential: 1 });
  const text = `${'Some filler text for a long note.\n\n'.repeat(100)}Fixes #1 and #2.`;
  const threadsBefore = c.markdown.counts.threads;
  const html = await md(app, root, text, 'grp/proj');
  assert.equal(c.markdown.counts.threads, threadsBefore + 1);
  assert.match(html, /<p>Fixes <a [^>]+title="Open issue"[^>]+>#1<\/a> and <a [^>]+title="Closed door"[^>]+>#2<\/a>\.<\/p>$/);
  assert.match(await md(app, {}, text, 'grp/proj'), /<p>Fixes <a [^>]+title="Open issue"[^>]+>#1<\/a> and #2\.<\/p>$/);
});

test('commits: a SHA of 7 to 40 digits, `project@sha`; redacted where the code is not readable', async (t) => {
  const { app, seed, root } = await buildTestApp(t);
  const stranger = await seed.user();
  const group = await seed.group({ path: 'grp', visibility: 'public' });
  const { project, dir } = await seed.repoProject({ namespace: group, path: 'proj', visibility: 'public' });
  const { project: hidden, dir: hiddenDir } = await seed.repoProject({ namespace: group, path: 'hidden', visibility: 'private' });
  const wt = workTree(t, dir).write('a.txt', 'a\n');
  wt.commit('Add <a> & "b"\n\nbody');
  wt.push();
  const hiddenWt = workTree(t, hiddenDir).write('s.txt', 's\n');
  hiddenWt.commit('Secret work');
  hiddenWt.push();
  const sha = bareGit(dir, ['rev-parse', 'main']).trim();
  const hiddenSha = bareGit(hiddenDir, ['rev-parse', 'main']).trim();
  const link = (s: string, original: string, text: string) =>
    `<a href="${X}/grp/proj/-/commit/${s}" data-reference-type="commit" data-original="${original}" data-link="false" data-link-reference="false" data-project="${project.id}" data-commit="${s}" data-container="body" data-placement="top" title="Add &lt;a&gt; &amp; &quot;b&quot;" class="gfm gfm-commit has-tooltip">${text}</a>`;
  assert.equal(
    await md(app, root, `Since ${sha.slice(0, 7)}, ${sha} and grp/proj@${sha.slice(0, 10)}.`, 'grp/proj'),
    `<p>Since ${link(sha, sha.slice(0, 7), sha.slice(0, 8))}, ${link(sha, sha, sha.slice(0, 8))} and ${link(sha, `grp/proj@${sha.slice(0, 10)}`, sha.slice(0, 8))}.</p>`,
  );
  // not a commit of the project, not a whole word, in code: as written
  assert.equal(await md(app, root, 'deadbeef1 x1234567 `' + sha.slice(0, 9) + '`', 'grp/proj'), `<p>deadbeef1 x1234567 <code>${sha.slice(0, 9)}</code></p>`);
  // another project's commit: its code is for its members
  const text = `hidden@${hiddenSha.slice(0, 8)}`;
  assert.match(
    await md(app, root, text, 'grp/proj'),
    /^<p><a href="[^"]+\/grp\/hidden\/-\/commit\/[0-9a-f]{40}" [^>]*title="Secret work"[^>]*>hidden@[0-9a-f]{8}<\/a><\/p>$/,
  );
  assert.equal(await md(app, (await seed.token(stranger)).headers, text, 'grp/proj'), `<p>${text}</p>`);
  assert.equal(await md(app, {}, text, 'grp/proj'), `<p>${text}</p>`);
  void hidden;
});
