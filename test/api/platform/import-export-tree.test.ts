// The project's tree in an archive (src/domain/import-export/tree): tree/project.json and
// tree/project/<relation>.ndjson written from the database in GitLab's names, read back into another
// project (members mapped as GitLab's MembersMapper, unmapped authors become the importer with GitLab's
// note suffix), failures recorded per item, relation imports (only, skipExisting), clearTree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { readNdjson, seedRichProject, type RichProject } from '../../helpers/import-export.ts';
import { clearTree, importTree, readProjectAttributes, TreeError, writeTree } from '../../../src/domain/import-export/tree/index.ts';
import type { ProjectRow, UserRow } from '../../../src/db/schema.ts';

const deps = (ta: TestApp) => ta.c.notes.deps;
const rootUser = async (ta: TestApp) => (await ta.c.users.byId(1))!;

function treeDir(ta: TestApp): string {
  return fs.mkdtempSync(path.join(ta.dataDir, 'tree-'));
}

const rel = (dir: string, name: string) => readNdjson(path.join(dir, 'tree/project', `${name}.ndjson`));

async function get(ta: TestApp, url: string, headers = ta.root): Promise<any> {
  const r = await ta.app.inject({ method: 'GET', url: `/api/v4${url}`, headers });
  assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
  return r.json();
}

/** Rewrites what differs between two projects by construction (ids, paths, URLs). */
function normalise(value: unknown, project: ProjectRow, fullPath: string): unknown {
  if (Array.isArray(value)) return value.map((v) => normalise(v, project, fullPath));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (['id', 'project_id', 'source_project_id', 'target_project_id', 'noteable_id', 'awardable_id', 'web_url'].includes(k)) continue;
      out[k] = normalise(v, project, fullPath);
    }
    return out;
  }
  if (typeof value === 'string') return value.split(fullPath).join('<project>');
  return value;
}

async function fullPathOf(ta: TestApp, project: ProjectRow): Promise<string> {
  const ns = await ta.c.db.kysely.selectFrom('namespaces').select('full_path').where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  return `${ns.full_path}/${project.path}`;
}

/** Everything the API shows of a project's relations, normalised. */
async function snapshot(ta: TestApp, project: ProjectRow) {
  const p = `/projects/${project.id}`;
  const fp = await fullPathOf(ta, project);
  const mrs = await get(ta, `${p}/merge_requests?sort=asc&order_by=created_at`);
  const perMr: Record<string, unknown> = {};
  for (const mr of mrs) {
    const notes = await get(ta, `${p}/merge_requests/${mr.iid}/notes?sort=asc&order_by=created_at`);
    const noteAwards = [];
    for (const n of notes) noteAwards.push(await get(ta, `${p}/merge_requests/${mr.iid}/notes/${n.id}/award_emoji`));
    perMr[mr.iid] = {
      notes,
      noteAwards,
      discussions: (await get(ta, `${p}/merge_requests/${mr.iid}/discussions`)).map((d: any) => ({ id: d.id, notes: d.notes.map((n: any) => n.body) })),
      awards: await get(ta, `${p}/merge_requests/${mr.iid}/award_emoji`),
      // merge_status: the background mergeability check moves it on its own time
      approvals: { ...(await get(ta, `${p}/merge_requests/${mr.iid}/approvals`)), merge_status: undefined },
    };
  }
  return normalise(
    {
      mrs,
      perMr,
      labels: await get(ta, `${p}/labels?include_ancestor_groups=false`),
      milestones: await get(ta, `${p}/milestones`),
      members: await get(ta, `${p}/members`),
    },
    project,
    fp,
  ) as any;
}

async function freshProject(ta: TestApp, owner?: UserRow): Promise<ProjectRow> {
  const { project } = await ta.seed.repoProject({ path: `copy${Math.random().toString(36).slice(2, 6)}`, ...(owner ? { owner } : {}) });
  if (owner) await ta.seed.member({ project }, owner, 50);
  return project;
}

const ids = (rows: { id: number }[]) => rows.map((r) => r.id);

/** A wildcard protected branch (a user may merge) and a protected tag on the source project. */
async function protectRefs(ta: TestApp, rich: RichProject): Promise<void> {
  const post = (url: string, payload: object) => ta.app.inject({ method: 'POST', url: `/api/v4/projects/${rich.project.id}${url}`, headers: ta.root, payload });
  const b = await post('/protected_branches', {
    name: 'release/*',
    push_access_level: 30,
    allow_force_push: true,
    allowed_to_merge: [{ user_id: rich.developer.id }],
  });
  assert.equal(b.statusCode, 201, b.body);
  const tg = await post('/protected_tags', { name: 'v*', create_access_level: 0 });
  assert.equal(tg.statusCode, 201, tg.body);
}

test('writeTree: project.json, the single-object relations and every relation file in GitLab’s names', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const { c } = ta;
  await c.db.kysely
    .updateTable('projects')
    .set({
      settings: JSON.stringify({ merge_method: 'ff', squash_option: 'always', only_allow_merge_if_pipeline_succeeds: true, issues_access_level: 'private' }),
    })
    .where('id', '=', rich.project.id)
    .execute();
  const project = await c.db.kysely.selectFrom('projects').selectAll().where('id', '=', rich.project.id).executeTakeFirstOrThrow();
  await protectRefs(ta, rich);
  const dir = treeDir(ta);
  const counts = await writeTree(deps(ta), project, dir, { description: 'Exported copy' });
  assert.deepEqual(counts, {
    labels: 3,
    milestones: 2,
    issues: 1,
    project_members: 3,
    merge_requests: 3,
    ci_pipelines: 1,
    environments: 0,
    protected_branches: 2,
    protected_tags: 1,
    boards: 1,
  });
  assert.deepEqual(fs.readdirSync(path.join(dir, 'tree/project')).sort(), [
    'boards.ndjson',
    'ci_cd_settings.ndjson',
    'ci_pipelines.ndjson',
    'environments.ndjson',
    'issues.ndjson',
    'labels.ndjson',
    'merge_requests.ndjson',
    'milestones.ndjson',
    'project_feature.ndjson',
    'project_members.ndjson',
    'protected_branches.ndjson',
    'protected_tags.ndjson',
  ]);
  // protected branches and tags as GitLab's import_export.yml writes them, with their access levels
  const rules = await c.db.kysely.selectFrom('protected_branches').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
  const tagRule = await c.db.kysely.selectFrom('protected_tags').selectAll().where('project_id', '=', project.id).executeTakeFirstOrThrow();
  const access = await c.db.kysely.selectFrom('protected_ref_access_levels').selectAll().orderBy('id').execute();
  const accessLine = (a: (typeof access)[number], owner: 'protected_branch_id' | 'protected_tag_id', deployKey: boolean) => ({
    id: a.id,
    [owner]: a[owner],
    access_level: a.access_level,
    created_at: a.created_at,
    updated_at: a.updated_at,
    user_id: a.user_id,
    group_id: a.group_id,
    ...(deployKey ? { deploy_key_id: null } : {}),
  });
  assert.deepEqual(
    rel(dir, 'protected_branches'),
    rules.map((r) => {
      const mine = access.filter((a) => a.protected_branch_id === r.id);
      const of = (action: string) => mine.filter((a) => a.action === action).map((a) => accessLine(a, 'protected_branch_id', action === 'push'));
      return {
        id: r.id,
        project_id: project.id,
        name: r.name,
        created_at: r.created_at,
        updated_at: r.updated_at,
        code_owner_approval_required: false,
        allow_force_push: r.name === 'release/*',
        namespace_id: null,
        merge_access_levels: of('merge'),
        push_access_levels: of('push'),
        unprotect_access_levels: of('unprotect'),
      };
    }),
  );
  assert.deepEqual(
    rel(dir, 'protected_branches').map((r: any) => [
      r.name,
      r.push_access_levels.map((a: any) => a.access_level),
      r.merge_access_levels.map((a: any) => [a.access_level, a.user_id]),
    ]),
    [
      ['main', [40], [[40, null]]],
      ['release/*', [30], [[null, rich.developer.id]]],
    ],
  );
  assert.deepEqual(rel(dir, 'protected_tags'), [
    {
      id: tagRule.id,
      name: 'v*',
      project_id: project.id,
      created_at: tagRule.created_at,
      updated_at: tagRule.updated_at,
      create_access_levels: access.filter((a) => a.protected_tag_id === tagRule.id).map((a) => accessLine(a, 'protected_tag_id', true)),
    },
  ]);

  const pj = JSON.parse(fs.readFileSync(path.join(dir, 'tree/project.json'), 'utf8'));
  assert.equal(pj.description, 'Exported copy');
  assert.equal(pj.visibility_level, 0);
  assert.equal(pj.archived, false);
  assert.equal(pj.default_branch, 'main');
  assert.equal(pj.merge_requests_ff_only_enabled, true);
  assert.equal(pj.merge_requests_rebase_enabled, false);
  assert.equal(pj.squash_option, 'always');
  assert.equal(pj.only_allow_merge_if_pipeline_succeeds, true);
  assert.equal(pj.public_builds, true);
  assert.equal(pj.build_allow_git_fetch, true);
  for (const k of ['name', 'path', 'id', 'namespace_id', 'created_at', 'lfs_enabled', 'packages_enabled', 'merge_method']) assert.equal(k in pj, false, k);
  const feature = fs.readFileSync(path.join(dir, 'tree/project/project_feature.ndjson'), 'utf8');
  assert.equal(feature.endsWith('\n'), false);
  assert.equal(JSON.parse(feature).issues_access_level, 10);
  assert.equal(JSON.parse(feature).merge_requests_access_level, 20);
  assert.equal(JSON.parse(feature).container_registry_access_level, 0);
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'tree/project/ci_cd_settings.ndjson'), 'utf8')), { group_runners_enabled: true });

  // project_members: the direct members with their users
  const members = rel(dir, 'project_members');
  const devMember = await c.db.kysely
    .selectFrom('members')
    .selectAll()
    .where('source_id', '=', project.id)
    .where('user_id', '=', rich.developer.id)
    .executeTakeFirstOrThrow();
  assert.deepEqual(
    members.map((m) => [m.user.username, m.access_level]),
    [
      [rich.owner.username, 50],
      [rich.developer.username, 30],
      [rich.maintainer.username, 40],
    ],
  );
  assert.deepEqual(members[1], {
    id: devMember.id,
    access_level: 30,
    source_type: 'Project',
    user_id: rich.developer.id,
    notification_level: 3,
    created_at: devMember.created_at,
    updated_at: devMember.updated_at,
    created_by_id: 1,
    invite_email: null,
    invite_token: null,
    invite_accepted_at: null,
    requested_at: null,
    expires_at: null,
    user: { id: rich.developer.id, public_email: null, username: rich.developer.username, email: rich.developer.email, name: 'Dee Developer' },
  });

  // labels: the project's and the group label a merge request uses (type GroupLabel)
  const labels = rel(dir, 'labels');
  const labelRows = await c.db.kysely.selectFrom('labels').selectAll().orderBy('id').execute();
  assert.deepEqual(
    labels.map((l) => [l.title, l.type]),
    [
      ['bug', 'ProjectLabel'],
      ['feature', 'ProjectLabel'],
      ['group-label', 'GroupLabel'],
    ],
  );
  const featureRow = labelRows.find((l) => l.title === 'feature')!;
  assert.deepEqual(labels[1], {
    id: featureRow.id,
    title: 'feature',
    color: '#5cb85c',
    project_id: project.id,
    created_at: featureRow.created_at,
    updated_at: featureRow.updated_at,
    template: false,
    description: null,
    group_id: null,
    type: 'ProjectLabel',
    priorities: [{ project_id: project.id, priority: 2, created_at: featureRow.created_at, updated_at: featureRow.updated_at }],
  });
  const groupRow = labelRows.find((l) => l.title === 'group-label')!;
  assert.deepEqual(labels[2], {
    id: groupRow.id,
    title: 'group-label',
    color: '#428bca',
    project_id: null,
    created_at: groupRow.created_at,
    updated_at: groupRow.updated_at,
    template: false,
    description: 'From the group',
    group_id: rich.group.id,
    type: 'GroupLabel',
    priorities: [],
  });

  // milestones
  const milestones = rel(dir, 'milestones');
  const v1 = await c.db.kysely.selectFrom('milestones').selectAll().where('id', '=', rich.milestones.v1.id).executeTakeFirstOrThrow();
  const v1Json = {
    id: v1.id,
    title: 'v1.0',
    project_id: project.id,
    description: 'First',
    due_date: '2030-01-31',
    created_at: v1.created_at,
    updated_at: v1.updated_at,
    state: 'active',
    iid: 1,
    start_date: '2030-01-01',
    group_id: null,
    events: [],
  };
  assert.deepEqual(milestones[0], v1Json);
  assert.equal(milestones[1].state, 'closed');

  // merge_requests with their nested relations
  const mrs = rel(dir, 'merge_requests');
  assert.deepEqual(
    mrs.map((m) => [m.iid, m.state]),
    [
      [1, 'opened'],
      [2, 'merged'],
      [3, 'closed'],
    ],
  );
  const mr = await c.db.kysely.selectFrom('merge_requests').selectAll().where('id', '=', rich.mrs.opened.id).executeTakeFirstOrThrow();
  const notes = rich.notes.filter((n) => n.noteable_type === 'MergeRequest' && n.noteable_id === mr.id);
  const awards = await c.db.kysely.selectFrom('award_emoji').selectAll().orderBy('id').execute();
  const approval = await c.db.kysely.selectFrom('approvals').selectAll().where('merge_request_id', '=', mr.id).executeTakeFirstOrThrow();
  const links = await c.db.kysely.selectFrom('merge_request_labels').selectAll().where('merge_request_id', '=', mr.id).orderBy('label_id').execute();
  const assignee = await c.db.kysely.selectFrom('merge_request_assignees').selectAll().where('merge_request_id', '=', mr.id).executeTakeFirstOrThrow();
  const reviewer = await c.db.kysely.selectFrom('merge_request_reviewers').selectAll().where('merge_request_id', '=', mr.id).executeTakeFirstOrThrow();
  const labelEvents = await c.db.kysely.selectFrom('resource_label_events').selectAll().where('merge_request_id', '=', mr.id).orderBy('id').execute();
  const milestoneEvents = await c.db.kysely.selectFrom('resource_milestone_events').selectAll().where('merge_request_id', '=', mr.id).orderBy('id').execute();
  const stateEvents = await c.db.kysely.selectFrom('resource_state_events').selectAll().where('merge_request_id', '=', mr.id).orderBy('id').execute();
  const labelJson = (l: (typeof labelRows)[number]) => labels.find((x) => x.id === l.id);
  const noteJson = (n: (typeof notes)[number], name: string, noteAwards: typeof awards) => ({
    id: n.id,
    note: n.body,
    noteable_type: 'MergeRequest',
    author_id: n.author_id,
    created_at: n.created_at,
    updated_at: n.updated_at,
    project_id: project.id,
    attachment: { url: null },
    line_code: null,
    commit_id: null,
    system: n.system === 1,
    st_diff: null,
    updated_by_id: null,
    type: n.type,
    position: null,
    original_position: null,
    resolved_at: null,
    resolved_by_id: null,
    resolvable: n.resolvable === 1,
    discussion_id: n.discussion_id,
    change_position: null,
    resolved_by_push: null,
    confidential: null,
    internal: false,
    last_edited_at: n.updated_at,
    author: { name },
    award_emoji: noteAwards.map((a) => ({
      id: a.id,
      name: a.name,
      user_id: a.user_id,
      awardable_type: 'Note',
      created_at: a.created_at,
      updated_at: a.updated_at,
    })),
    events: [],
  });
  const names: Record<number, string> = { [rich.developer.id]: 'Dee Developer', [rich.maintainer.id]: 'Mae Maintainer' };
  assert.deepEqual(mrs[0], {
    id: mr.id,
    target_branch: 'main',
    source_branch: 'feature',
    source_project_id: project.id,
    author_id: rich.developer.id,
    assignee_id: rich.maintainer.id,
    title: 'Add the feature',
    created_at: mr.created_at,
    updated_at: mr.updated_at,
    state: 'opened',
    // the background mergeability check may move it while the test runs
    merge_status: mrs[0].merge_status,
    target_project_id: project.id,
    iid: 1,
    description: 'It does **things**',
    updated_by_id: null,
    merge_error: null,
    merge_params: JSON.parse(mr.merge_params),
    merge_when_pipeline_succeeds: false,
    merge_user_id: null,
    merge_commit_sha: null,
    squash_commit_sha: null,
    in_progress_merge_commit_sha: null,
    lock_version: 0,
    time_estimate: 0,
    squash: false,
    last_edited_at: null,
    last_edited_by_id: null,
    discussion_locked: null,
    draft: false,
    allow_maintainer_to_push: false,
    diff_head_sha: rich.shas.f2,
    source_branch_sha: rich.shas.f2,
    target_branch_sha: null,
    merge_request_diff: {
      state: 'collected',
      base_commit_sha: mr.diff_base_sha,
      head_commit_sha: rich.shas.f2,
      start_commit_sha: mr.diff_base_sha,
      created_at: mr.created_at,
      updated_at: mr.updated_at,
    },
    metrics: { merged_at: null, merged_by_id: null, latest_closed_at: null, latest_closed_by_id: null, created_at: mr.created_at, updated_at: mr.updated_at },
    milestone: v1Json,
    notes: notes.map((n) =>
      noteJson(
        n,
        names[n.author_id!],
        awards.filter((a) => a.awardable_type === 'Note' && a.awardable_id === n.id),
      ),
    ),
    award_emoji: awards
      .filter((a) => a.awardable_type === 'MergeRequest' && a.awardable_id === mr.id)
      .map((a) => ({
        id: a.id,
        name: 'thumbsup',
        user_id: rich.maintainer.id,
        awardable_type: 'MergeRequest',
        created_at: a.created_at,
        updated_at: a.updated_at,
      })),
    approvals: [{ user_id: rich.maintainer.id, created_at: approval.created_at, updated_at: approval.created_at }],
    merge_request_assignees: [{ user_id: rich.maintainer.id, created_at: assignee.created_at }],
    merge_request_reviewers: [{ user_id: rich.maintainer.id, created_at: reviewer.created_at, state: reviewer.state }],
    label_links: links.map((l) => ({
      target_type: 'MergeRequest',
      created_at: l.created_at,
      updated_at: l.created_at,
      label: labelJson(labelRows.find((x) => x.id === l.label_id)!),
    })),
    resource_label_events: labelEvents.map((e) => ({
      action: e.action,
      user_id: e.user_id,
      created_at: e.created_at,
      label: labelJson(labelRows.find((x) => x.id === e.label_id)!),
    })),
    resource_milestone_events: milestoneEvents.map((e) => ({
      action: e.action,
      state: e.state,
      user_id: e.user_id,
      created_at: e.created_at,
      milestone: v1Json,
    })),
    resource_state_events: stateEvents.map((e) => ({ state: e.state, user_id: e.user_id, created_at: e.created_at, source_commit: e.source_commit })),
    events: [],
    timelogs: [],
  });
  assert.equal(notes.length, 4);
  assert.ok(['unchecked', 'checking', 'can_be_merged'].includes(mrs[0].merge_status));
  assert.deepEqual(
    mrs[0].notes.map((n: any) => [n.note, n.type, n.system, n.discussion_id === rich.discussionId]),
    [
      ['Looks good overall', null, false, false],
      ['Why this name?', 'DiscussionNote', false, true],
      ['It is the usual one', 'DiscussionNote', false, true],
      ['approved this merge request', null, true, false],
    ],
  );
  assert.equal(mrs[0].label_links.length, 2);
  assert.equal(mrs[1].merge_commit_sha, rich.mrs.merged.merge_commit_sha);
  assert.equal(mrs[1].metrics.merged_by_id, rich.maintainer.id);
  assert.equal(mrs[1].metrics.merged_at, rich.mrs.merged.merged_at);
  assert.equal(mrs[2].metrics.latest_closed_by_id, rich.maintainer.id);

  // issues (with a note, the label by title, the milestone and the assignees)
  const issues = rel(dir, 'issues');
  const issueNote = rich.notes.find((n) => n.noteable_type === 'Issue')!;
  const bug = labelRows.find((l) => l.title === 'bug')!;
  assert.deepEqual(issues, [
    {
      id: rich.issue.id,
      title: 'Something is wrong',
      author_id: rich.developer.id,
      project_id: project.id,
      created_at: rich.issue.created_at,
      updated_at: rich.issue.updated_at,
      description: 'Steps to reproduce',
      iid: 1,
      updated_by_id: null,
      weight: null,
      confidential: false,
      due_date: '2030-02-01',
      lock_version: 0,
      time_estimate: 0,
      relative_position: null,
      last_edited_at: null,
      last_edited_by_id: null,
      discussion_locked: null,
      closed_at: null,
      closed_by_id: null,
      state: 'opened',
      issue_type: 'issue',
      milestone: v1Json,
      notes: [{ ...noteJson(issueNote, 'Mae Maintainer', []), noteable_type: 'Issue' }],
      award_emoji: [],
      issue_assignees: [{ user_id: rich.maintainer.id }],
      label_links: [{ target_type: 'Issue', created_at: rich.issue.created_at, updated_at: rich.issue.created_at, label: labelJson(bug) }],
      resource_label_events: [],
      resource_milestone_events: [],
      resource_state_events: [],
      issue_links: [],
      events: [],
      timelogs: [],
    },
  ]);

  // ci_pipelines: stages → statuses
  const pipelines = rel(dir, 'ci_pipelines');
  const pl = rich.pipeline;
  const job = (b: (typeof rich.jobs)[number]) => ({
    id: b.id,
    project_id: project.id,
    status: b.status,
    finished_at: b.finished_at,
    created_at: b.created_at,
    updated_at: b.updated_at,
    started_at: b.started_at,
    queued_at: b.queued_at,
    coverage: null,
    name: b.name,
    options: JSON.parse(b.options),
    allow_failure: false,
    stage: b.stage,
    stage_idx: b.stage_idx,
    tag: false,
    ref: 'main',
    sha: rich.shas.c2,
    user_id: rich.maintainer.id,
    type: 'Ci::Build',
    target_url: null,
    description: null,
    erased_at: null,
    artifacts_expire_at: null,
    environment: null,
    yaml_variables: [],
    tag_list: [],
    when: 'on_success',
    timeout: null,
    retried: false,
    failure_reason: null,
    scheduling_type: 'stage',
  });
  assert.deepEqual(pipelines, [
    {
      id: pl.id,
      ref: 'main',
      sha: rich.shas.c2,
      before_sha: null,
      created_at: pl.created_at,
      updated_at: pl.updated_at,
      tag: false,
      yaml_errors: null,
      committed_at: null,
      project_id: project.id,
      status: 'failed',
      started_at: null,
      finished_at: null,
      duration: null,
      queued_duration: null,
      user_id: rich.maintainer.id,
      failure_reason: null,
      iid: 1,
      source: 'push',
      protected: false,
      config_source: 'repository_source',
      coverage: null,
      variables: [],
      notes: [],
      stages: [
        {
          name: 'build',
          status: 'success',
          position: 0,
          created_at: rich.jobs[0].created_at,
          updated_at: rich.jobs[0].updated_at,
          statuses: [job(rich.jobs[0])],
        },
        {
          name: 'test',
          status: 'failed',
          position: 1,
          created_at: rich.jobs[1].created_at,
          updated_at: rich.jobs[1].updated_at,
          statuses: [job(rich.jobs[1])],
        },
      ],
    },
  ]);
  assert.deepEqual(rel(dir, 'environments'), []);
});

test('writeTree: environments with their deployments', async (t) => {
  const ta = await buildTestApp(t);
  const project = await ta.seed.project();
  const now = new Date().toISOString();
  const env = await ta.c.db.kysely
    .insertInto('environments')
    .values({
      project_id: project.id,
      name: 'production',
      slug: 'production',
      external_url: 'https://example.com',
      tier: 'production',
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const dep = await ta.c.db.kysely
    .insertInto('deployments')
    .values({
      iid: 1,
      project_id: project.id,
      environment_id: env.id,
      ref: 'main',
      sha: 'c'.repeat(40),
      user_id: 1,
      status: 'success',
      created_at: now,
      updated_at: now,
      finished_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const dir = treeDir(ta);
  await writeTree(deps(ta), project, dir);
  assert.deepEqual(rel(dir, 'environments'), [
    {
      id: env.id,
      name: 'production',
      slug: 'production',
      external_url: 'https://example.com',
      state: 'available',
      tier: 'production',
      created_at: now,
      updated_at: now,
      deployments: [
        { id: dep.id, iid: 1, ref: 'main', tag: false, sha: 'c'.repeat(40), user_id: 1, status: 'success', created_at: now, updated_at: now, finished_at: now },
      ],
    },
  ]);
  // into another project: the environment and its deployment, the deployments iid advanced
  const other = await ta.seed.project();
  const result = await importTree(deps(ta), dir, { project: other, importer: await rootUser(ta) });
  assert.deepEqual(result.failed, []);
  const envs = await ta.c.db.kysely.selectFrom('environments').selectAll().where('project_id', '=', other.id).execute();
  assert.deepEqual(
    envs.map((e) => [e.name, e.slug, e.external_url, e.tier]),
    [['production', 'production', 'https://example.com', 'production']],
  );
  const deps2 = await ta.c.db.kysely.selectFrom('deployments').selectAll().where('project_id', '=', other.id).execute();
  assert.deepEqual(
    deps2.map((d) => [d.iid, d.environment_id, d.ref, d.sha, d.status, d.finished_at]),
    [[1, envs[0].id, 'main', 'c'.repeat(40), 'success', now]],
  );
  const iid = await ta.c.db.kysely
    .selectFrom('internal_ids')
    .selectAll()
    .where('scope_id', '=', other.id)
    .where('usage', '=', 'deployments')
    .executeTakeFirstOrThrow();
  assert.equal(iid.last_value, 1);
});

test('readProjectAttributes: GitLab’s project.json as Hearth’s attributes; missing or not an object → TreeError', async (t) => {
  const ta = await buildTestApp(t);
  const project = await ta.seed.project({ visibility: 'internal' });
  await ta.c.db.kysely
    .updateTable('projects')
    .set({
      description: 'The original',
      settings: JSON.stringify({
        merge_method: 'rebase_merge',
        squash_option: 'default_on',
        build_timeout: 7200,
        wiki_access_level: 'disabled',
        public_jobs: false,
      }),
    })
    .where('id', '=', project.id)
    .execute();
  const row = await ta.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', project.id).executeTakeFirstOrThrow();
  const dir = treeDir(ta);
  await writeTree(deps(ta), row, dir);
  const attrs = await readProjectAttributes(dir);
  assert.equal(attrs.description, 'The original');
  assert.equal(attrs.visibility, 'internal');
  assert.equal(attrs.default_branch, 'main');
  assert.equal(attrs.merge_method, 'rebase_merge');
  assert.equal(attrs.squash_option, 'default_on');
  assert.equal(attrs.build_timeout, 7200);
  assert.equal(attrs.public_jobs, false);
  assert.equal(attrs.build_git_strategy, 'fetch');
  assert.equal(attrs.wiki_access_level, 'disabled');
  assert.equal(attrs.issues_access_level, 'enabled');
  assert.equal(attrs.group_runners_enabled, true);
  assert.equal('archived' in attrs, false);

  // a GitLab archive: integer squash option, ff flag, project_feature levels, unknown and wrongly typed keys
  const gl = treeDir(ta);
  fs.mkdirSync(path.join(gl, 'tree/project'), { recursive: true });
  fs.writeFileSync(
    path.join(gl, 'tree/project.json'),
    JSON.stringify({
      description: null,
      visibility_level: 20,
      merge_requests_ff_only_enabled: true,
      squash_option: 0,
      build_timeout: 'long',
      star_count: 9,
      only_allow_merge_if_all_discussions_are_resolved: true,
    }),
  );
  fs.writeFileSync(
    path.join(gl, 'tree/project/project_feature.ndjson'),
    JSON.stringify({ issues_access_level: 0, pages_access_level: 30, builds_access_level: 99 }),
  );
  assert.deepEqual(await readProjectAttributes(gl), {
    description: '',
    visibility: 'public',
    merge_method: 'ff',
    squash_option: 'never',
    only_allow_merge_if_all_discussions_are_resolved: true,
    issues_access_level: 'disabled',
    pages_access_level: 'public',
  });

  const missing = treeDir(ta);
  await assert.rejects(readProjectAttributes(missing), (e) => e instanceof TreeError && e.message === 'project.json file not found');
  const bad = treeDir(ta);
  fs.mkdirSync(path.join(bad, 'tree'));
  fs.writeFileSync(path.join(bad, 'tree/project.json'), '[1,2]');
  await assert.rejects(readProjectAttributes(bad), (e) => e instanceof TreeError && e.message === 'project.json is not a JSON object');
  fs.writeFileSync(path.join(bad, 'tree/project.json'), '{"description": ');
  await assert.rejects(readProjectAttributes(bad), (e) => e instanceof TreeError && e.message === 'project.json is not valid JSON');
});

/** The source snapshot as the imported project must show it (GitLab's import rules applied). */
function expectedImport(src: any, rich: RichProject) {
  const out = structuredClone(src);
  for (const mr of out.mrs) {
    mr.imported = true;
    mr.imported_from = 'gitlab_project';
  }
  // root is no member of the source project: its note is the importer's, with GitLab's suffix
  const merging = out.perMr[rich.mrs.merged.iid].notes.find((n: any) => n.body === 'Merging this');
  merging.body = `Merging this\n\n *By Administrator on ${merging.updated_at.split('.')[0]} (imported from GitLab)*`;
  for (const d of out.perMr[rich.mrs.merged.iid].discussions) d.notes = d.notes.map((b: string) => (b === 'Merging this' ? merging.body : b));
  return out;
}

function dropVolatile(snap: any) {
  for (const mr of snap.mrs) {
    delete mr.merge_status;
    delete mr.detailed_merge_status;
    delete mr.prepared_at;
    delete mr.has_conflicts;
    delete mr.user;
  }
  return snap;
}

test('importTree: a fresh project gets equal merge requests, notes, discussions, approvals, award emoji, labels, milestones, issues, pipelines; members mapped', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  await protectRefs(ta, rich);
  const dir = treeDir(ta);
  await writeTree(deps(ta), rich.project, dir);
  const target = await freshProject(ta);
  const root = await rootUser(ta);
  const result = await importTree(deps(ta), dir, { project: target, importer: root });
  assert.deepEqual(result, {
    // main is protected in the new project already: only release/* comes
    counts: {
      project_members: 3,
      labels: 3,
      milestones: 2,
      issues: 1,
      merge_requests: 3,
      ci_pipelines: 1,
      environments: 0,
      protected_branches: 1,
      protected_tags: 1,
      boards: 1,
    },
    failed: [],
  });
  // the rules, their access levels (the merging user mapped by email) through the API
  const branches = await get(ta, `/projects/${target.id}/protected_branches`);
  const developerHere = (await ta.c.db.kysely.selectFrom('users').select('id').where('email', '=', rich.developer.email).executeTakeFirstOrThrow()).id;
  assert.deepEqual(
    branches.map((b: any) => [
      b.name,
      b.push_access_levels.map((a: any) => a.access_level),
      b.merge_access_levels.map((a: any) => [a.access_level, a.user_id]),
      b.unprotect_access_levels.map((a: any) => a.access_level),
      b.allow_force_push,
    ]),
    [
      ['main', [40], [[40, null]], [], false],
      ['release/*', [30], [[null, developerHere]], [40], true],
    ],
  );
  assert.deepEqual(
    (await get(ta, `/projects/${target.id}/protected_tags`)).map((x: any) => [x.name, x.create_access_levels.map((a: any) => a.access_level)]),
    [['v*', [0]]],
  );
  const statuses = await ta.c.db.kysely.selectFrom('merge_requests').select('merge_status').where('project_id', '=', target.id).execute();
  assert.deepEqual(
    statuses.map((s) => s.merge_status),
    ['unchecked', 'unchecked', 'unchecked'],
  );

  const src = await snapshot(ta, rich.project);
  const dst = await snapshot(ta, target);
  const expected = expectedImport(src, rich);
  assert.deepEqual(dropVolatile(dst).mrs, dropVolatile(expected).mrs);
  assert.deepEqual(dst.perMr, expected.perMr);
  // the group label became a project label of the new project (its group has none of that title)
  assert.deepEqual(
    dst.labels,
    src.labels.map((l: any) => ({ ...l, is_project_label: true, subscribed: false })),
  );
  assert.deepEqual(dst.milestones, src.milestones);
  // members: mapped by email; Owner is capped at Maintainer (MembersMapper#highest_access_level); the importer is kept
  assert.deepEqual(
    dst.members.map((m: any) => [m.username, m.access_level]),
    [
      ['root', 40],
      [rich.owner.username, 40],
      [rich.developer.username, 30],
      [rich.maintainer.username, 40],
    ],
  );

  const db = ta.c.db.kysely;
  const mrRows = await db.selectFrom('merge_requests').selectAll().where('project_id', '=', target.id).orderBy('iid').execute();
  assert.deepEqual(
    mrRows.map((m) => [m.iid, m.imported_from, m.sha, m.merge_commit_sha]),
    [
      [1, 'gitlab_project', rich.shas.f2, null],
      [2, 'gitlab_project', rich.mrs.merged.sha, rich.mrs.merged.merge_commit_sha],
      [3, 'gitlab_project', rich.mrs.closed.sha, null],
    ],
  );
  const issue = await db.selectFrom('issues').selectAll().where('project_id', '=', target.id).executeTakeFirstOrThrow();
  const v1 = await db.selectFrom('milestones').selectAll().where('project_id', '=', target.id).where('title', '=', 'v1.0').executeTakeFirstOrThrow();
  assert.deepEqual(
    { ...issue, id: 0 },
    {
      ...rich.issue,
      id: 0,
      project_id: target.id,
      milestone_id: v1.id,
      imported_from: 'gitlab_project',
    },
  );
  const issueNotes = await db.selectFrom('notes').selectAll().where('noteable_type', '=', 'Issue').where('noteable_id', '=', issue.id).execute();
  const srcIssueNote = rich.notes.find((n) => n.noteable_type === 'Issue')!;
  assert.deepEqual(
    issueNotes.map((n) => ({ ...n, id: 0 })),
    [{ ...srcIssueNote, id: 0, project_id: target.id, noteable_id: issue.id }],
  );
  // the board and its lists, the label list by the label's title in the new project
  const boards = await db.selectFrom('boards').select(['id', 'name']).where('project_id', '=', target.id).execute();
  assert.deepEqual(
    boards.map((x) => x.name),
    ['Development'],
  );
  const lists = await db
    .selectFrom('board_lists')
    .leftJoin('labels', 'labels.id', 'board_lists.label_id')
    .select(['board_lists.list_type', 'board_lists.position', 'labels.title', 'labels.project_id'])
    .where('board_id', '=', boards[0].id)
    .orderBy('board_lists.id')
    .execute();
  assert.deepEqual(lists, [
    { list_type: 'backlog', position: null, title: null, project_id: null },
    { list_type: 'closed', position: null, title: null, project_id: null },
    { list_type: 'label', position: 0, title: 'bug', project_id: target.id },
  ]);
  const issueAssignees = await db.selectFrom('issue_assignees').select('user_id').where('issue_id', '=', issue.id).execute();
  assert.deepEqual(issueAssignees, [{ user_id: rich.maintainer.id }]);
  const issueLabels = await db
    .selectFrom('issue_labels')
    .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
    .select(['labels.title', 'labels.project_id'])
    .where('issue_id', '=', issue.id)
    .execute();
  assert.deepEqual(issueLabels, [{ title: 'bug', project_id: target.id }]);
  const pipelines = await db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', target.id).execute();
  assert.deepEqual(
    pipelines.map((p) => ({ ...p, id: 0 })),
    [{ ...rich.pipeline, id: 0, project_id: target.id }],
  );
  const jobs = await db.selectFrom('ci_builds').selectAll().where('project_id', '=', target.id).orderBy('id').execute();
  assert.deepEqual(
    jobs.map((j) => ({ ...j, id: 0, token_digest: null })),
    // what a runner would execute (the script) is not imported
    rich.jobs.map((j) => ({ ...j, id: 0, project_id: target.id, pipeline_id: pipelines[0].id, token_digest: null, options: '{}' })),
  );

  // internal ids: the next merge request, milestone and pipeline get the next numbers
  const iids = await db.selectFrom('internal_ids').select(['usage', 'last_value']).where('scope_id', '=', target.id).orderBy('usage').execute();
  assert.deepEqual(iids, [
    { usage: 'ci_pipelines', last_value: 1 },
    { usage: 'issues', last_value: 1 },
    { usage: 'merge_requests', last_value: 3 },
    { usage: 'milestones', last_value: 2 },
  ]);
  const m = await ta.app.inject({ method: 'POST', url: `/api/v4/projects/${target.id}/milestones`, headers: ta.root, payload: { title: 'v3.0' } });
  assert.equal(m.statusCode, 201, m.body);
  assert.equal(m.json().iid, 3);
});

test('importTree by a non-administrator: no member is mapped, every author is the importer, notes keep their authors’ names', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  await protectRefs(ta, rich);
  const dir = treeDir(ta);
  await writeTree(deps(ta), rich.project, dir);
  const importer = await ta.seed.user({ username: 'importer', name: 'Ivy Importer' });
  const target = await freshProject(ta, importer);
  const result = await importTree(deps(ta), dir, { project: target, importer });
  assert.deepEqual(result.failed, []);
  assert.equal(result.counts.project_members, undefined);
  // protected refs: the owner keeps the roles; the user entry is dropped (no member is mapped)
  const levels = async (projectId: number) =>
    (await get(ta, `/projects/${projectId}/protected_branches`)).map((b: any) => [
      b.name,
      b.push_access_levels.map((x: any) => x.access_level),
      b.merge_access_levels.map((x: any) => x.access_level),
    ]);
  assert.deepEqual(await levels(target.id), [
    ['main', [40], [40]],
    ['release/*', [30], []],
  ]);
  const members = await get(ta, `/projects/${target.id}/members`);
  assert.deepEqual(
    members.map((m: any) => [m.username, m.access_level]),
    [['importer', 50]],
  );
  const db = ta.c.db.kysely;
  const mrs = await db
    .selectFrom('merge_requests')
    .select(['author_id', 'merge_user_id', 'closed_by_id', 'iid'])
    .where('project_id', '=', target.id)
    .orderBy('iid')
    .execute();
  assert.deepEqual(mrs, [
    { iid: 1, author_id: importer.id, merge_user_id: null, closed_by_id: null },
    { iid: 2, author_id: importer.id, merge_user_id: importer.id, closed_by_id: null },
    { iid: 3, author_id: importer.id, merge_user_id: null, closed_by_id: importer.id },
  ]);
  const notes = await db.selectFrom('notes').selectAll().where('project_id', '=', target.id).orderBy('id').execute();
  const byName: Record<number, string> = { [rich.developer.id]: 'Dee Developer', [rich.maintainer.id]: 'Mae Maintainer', 1: 'Administrator' };
  const srcNotes = [...rich.notes.filter((n) => n.noteable_type === 'Issue'), ...rich.notes.filter((n) => n.noteable_type === 'MergeRequest')];
  assert.deepEqual(
    notes.map((n) => [n.author_id, n.body, n.system, n.discussion_id]),
    srcNotes.map((n) => [
      importer.id,
      `${n.body}\n\n *By ${byName[n.author_id!]} on ${n.updated_at.split('.')[0]} (imported from GitLab)*`,
      n.system,
      n.discussion_id,
    ]),
  );
  // award emoji of two users on one merge request, and approvals, collapse onto the importer without failing
  const awards = await db.selectFrom('award_emoji').select(['awardable_type', 'user_id', 'name']).orderBy('id').execute();
  assert.deepEqual(
    awards.filter((a) => a.user_id === importer.id),
    [
      { awardable_type: 'Note', user_id: importer.id, name: 'heart' },
      { awardable_type: 'MergeRequest', user_id: importer.id, name: 'thumbsup' },
    ],
  );
  const approvals = await db
    .selectFrom('approvals')
    .innerJoin('merge_requests', 'merge_requests.id', 'approvals.merge_request_id')
    .select(['approvals.user_id'])
    .where('merge_requests.project_id', '=', target.id)
    .execute();
  assert.deepEqual(approvals, [{ user_id: importer.id }]);
  // a Maintainer importing into a group's project: every role but "No one" becomes Maintainers
  const { project: inGroup } = await ta.seed.repoProject({ path: 'copy-in-group' });
  await ta.seed.member({ project: inGroup }, importer, 40);
  assert.deepEqual((await importTree(deps(ta), dir, { project: inGroup, importer })).failed, []);
  assert.deepEqual(await levels(inGroup.id), [
    ['main', [40], [40]],
    ['release/*', [40], []],
  ]);
  assert.deepEqual(
    (await get(ta, `/projects/${inGroup.id}/protected_tags`)).map((x: any) => [x.name, x.create_access_levels.map((a: any) => a.access_level)]),
    [['v*', [0]]],
  );
});

test('importTree only + skipExisting: relation re-imports skip what is there; a missing relation file is a TreeError', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const dir = treeDir(ta);
  await writeTree(deps(ta), rich.project, dir);
  const root = await rootUser(ta);
  const target = await freshProject(ta);
  const db = ta.c.db.kysely;

  let r = await importTree(deps(ta), dir, { project: target, importer: root, only: ['milestones'] });
  assert.deepEqual(r, { counts: { milestones: 2 }, failed: [] });
  // only: no members were added, no other relation imported
  assert.deepEqual(await db.selectFrom('members').select('user_id').where('source_type', '=', 'Project').where('source_id', '=', target.id).execute(), []);
  assert.equal((await db.selectFrom('merge_requests').select('id').where('project_id', '=', target.id).execute()).length, 0);

  r = await importTree(deps(ta), dir, { project: target, importer: root, only: ['merge_requests'], skipExisting: true });
  assert.deepEqual(r, { counts: { merge_requests: 3 }, failed: [] });
  // authors are mapped (the exported members exist here) even though no member is added
  const authors = await db.selectFrom('merge_requests').select('author_id').where('project_id', '=', target.id).execute();
  assert.deepEqual(
    authors.map((a) => a.author_id),
    [rich.developer.id, rich.developer.id, rich.developer.id],
  );

  // again: everything is there already
  r = await importTree(deps(ta), dir, { project: target, importer: root, only: ['merge_requests', 'milestones'], skipExisting: true });
  assert.deepEqual(r, { counts: { milestones: 0, merge_requests: 0 }, failed: [] });
  assert.equal((await db.selectFrom('merge_requests').select('id').where('project_id', '=', target.id).execute()).length, 3);
  assert.equal((await db.selectFrom('milestones').select('id').where('project_id', '=', target.id).execute()).length, 2);

  // without skipExisting each duplicate iid is a failure of its own
  r = await importTree(deps(ta), dir, { project: target, importer: root, only: ['merge_requests'] });
  assert.deepEqual(r.counts, { merge_requests: 0 });
  assert.deepEqual(
    r.failed.map((f) => [f.relation_name, f.line_number, f.exception_class, f.source]),
    [
      ['merge_requests', 0, 'ActiveRecord::RecordNotUnique', 'process_relation_item!'],
      ['merge_requests', 1, 'ActiveRecord::RecordNotUnique', 'process_relation_item!'],
      ['merge_requests', 2, 'ActiveRecord::RecordNotUnique', 'process_relation_item!'],
    ],
  );
  assert.deepEqual(
    r.failed.map((f) => f.id),
    [1, 2, 3],
  );

  fs.rmSync(path.join(dir, 'tree/project/issues.ndjson'));
  await assert.rejects(
    importTree(deps(ta), dir, { project: target, importer: root, only: ['issues'] }),
    (e) => e instanceof TreeError && e.message === 'issues.ndjson file not found',
  );
  // a missing file of a relation not asked for is no error
  r = await importTree(deps(ta), dir, { project: target, importer: root, only: ['ci_pipelines'], skipExisting: true });
  assert.deepEqual(r, { counts: { ci_pipelines: 1 }, failed: [] });
});

test('importTree: a line that is not JSON and items the model refuses are failed relations; their neighbours are imported', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const dir = treeDir(ta);
  await writeTree(deps(ta), rich.project, dir);
  const file = path.join(dir, 'tree/project/merge_requests.ndjson');
  const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
  const noTitle = { ...JSON.parse(lines[2]), title: '' };
  const badState = { ...JSON.parse(lines[2]), iid: 7, state: 'exploded' };
  fs.writeFileSync(file, [lines[0], '{"title": "Broken', lines[1], JSON.stringify(noTitle), '[1]', JSON.stringify(badState), ''].join('\n'));
  fs.appendFileSync(path.join(dir, 'tree/project/milestones.ndjson'), '{"title":"v9","iid":"x"}\n');
  const target = await freshProject(ta);
  const r = await importTree(deps(ta), dir, { project: target, importer: await rootUser(ta) });
  assert.equal(r.counts.merge_requests, 2);
  assert.equal(r.counts.milestones, 2);
  const failed = r.failed.map(({ id, created_at, ...f }) => {
    assert.match(created_at, /^\d{4}-\d\d-\d\dT/);
    return f;
  });
  assert.deepEqual(failed, [
    {
      exception_class: 'ActiveRecord::RecordInvalid',
      exception_message: 'Validation failed: Iid must be a positive integer',
      source: 'process_relation_item!',
      relation_name: 'milestones',
      line_number: 2,
    },
    {
      exception_class: 'JSON::ParserError',
      exception_message: failed[1].exception_message,
      source: 'process_relation_item!',
      relation_name: 'merge_requests',
      line_number: 1,
    },
    {
      exception_class: 'ActiveRecord::RecordInvalid',
      exception_message: "Validation failed: Title can't be blank",
      source: 'process_relation_item!',
      relation_name: 'merge_requests',
      line_number: 3,
    },
    {
      exception_class: 'JSON::ParserError',
      exception_message: 'expected a JSON object',
      source: 'process_relation_item!',
      relation_name: 'merge_requests',
      line_number: 4,
    },
    {
      exception_class: 'ActiveRecord::RecordInvalid',
      exception_message: 'Validation failed: State is invalid: exploded',
      source: 'process_relation_item!',
      relation_name: 'merge_requests',
      line_number: 5,
    },
  ]);
  assert.match(failed[1].exception_message, /JSON/);
  const mrs = await ta.c.db.kysely.selectFrom('merge_requests').select(['iid', 'title']).where('project_id', '=', target.id).orderBy('iid').execute();
  assert.deepEqual(mrs, [
    { iid: 1, title: 'Add the feature' },
    { iid: 2, title: 'Topic' },
  ]);
  // the failed items left nothing behind (their notes were in the same transaction)
  const notes = await ta.c.db.kysely
    .selectFrom('notes')
    .innerJoin('merge_requests', 'merge_requests.id', 'notes.noteable_id')
    .select('merge_requests.iid')
    .where('notes.project_id', '=', target.id)
    .where('notes.noteable_type', '=', 'MergeRequest')
    .execute();
  assert.deepEqual([...new Set(notes.map((n) => n.iid))].sort(), [1, 2]);
});

test('clearTree removes everything importTree wrote, and only that', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const dir = treeDir(ta);
  await writeTree(deps(ta), rich.project, dir);
  const target = await freshProject(ta);
  const db = ta.c.db.kysely;
  await importTree(deps(ta), dir, { project: target, importer: await rootUser(ta) });
  const countAll = async (projectId: number) => {
    const mrIds = ids(await db.selectFrom('merge_requests').select('id').where('project_id', '=', projectId).execute());
    const noteIds = ids(await db.selectFrom('notes').select('id').where('project_id', '=', projectId).execute());
    const issueIds = ids(await db.selectFrom('issues').select('id').where('project_id', '=', projectId).execute());
    const n = async (q: Promise<unknown[]>) => (await q).length;
    const byMr = (table: 'approvals' | 'merge_request_labels' | 'merge_request_assignees' | 'merge_request_reviewers' | 'resource_label_events') =>
      mrIds.length ? n(db.selectFrom(table).select('merge_request_id').where('merge_request_id', 'in', mrIds).execute()) : Promise.resolve(0);
    return {
      merge_requests: mrIds.length,
      notes: noteIds.length,
      issues: issueIds.length,
      awards:
        (mrIds.length
          ? await n(db.selectFrom('award_emoji').select('id').where('awardable_type', '=', 'MergeRequest').where('awardable_id', 'in', mrIds).execute())
          : 0) +
        (noteIds.length
          ? await n(db.selectFrom('award_emoji').select('id').where('awardable_type', '=', 'Note').where('awardable_id', 'in', noteIds).execute())
          : 0),
      approvals: await byMr('approvals'),
      label_links: await byMr('merge_request_labels'),
      assignees: await byMr('merge_request_assignees'),
      reviewers: await byMr('merge_request_reviewers'),
      label_events: await byMr('resource_label_events'),
      labels: await n(db.selectFrom('labels').select('id').where('project_id', '=', projectId).execute()),
      milestones: await n(db.selectFrom('milestones').select('id').where('project_id', '=', projectId).execute()),
      pipelines: await n(db.selectFrom('ci_pipelines').select('id').where('project_id', '=', projectId).execute()),
      jobs: await n(db.selectFrom('ci_builds').select('id').where('project_id', '=', projectId).execute()),
      internal_ids: await n(db.selectFrom('internal_ids').select('usage').where('scope_type', '=', 'Project').where('scope_id', '=', projectId).execute()),
      members: (
        await db.selectFrom('members').select('user_id').where('source_type', '=', 'Project').where('source_id', '=', projectId).orderBy('user_id').execute()
      ).map((m) => m.user_id),
    };
  };
  const sourceBefore = await countAll(rich.project.id);
  const imported = await countAll(target.id);
  assert.deepEqual(imported, {
    merge_requests: 3,
    notes: 6,
    issues: 1,
    awards: 2,
    approvals: 1,
    label_links: 3,
    assignees: 1,
    reviewers: 1,
    label_events: imported.label_events,
    labels: 3,
    milestones: 2,
    pipelines: 1,
    jobs: 2,
    internal_ids: 4,
    members: [1, rich.owner.id, rich.developer.id, rich.maintainer.id],
  });
  await db.transaction().execute((trx) => clearTree(trx, target.id));
  assert.deepEqual(await countAll(target.id), {
    merge_requests: 0,
    notes: 0,
    issues: 0,
    awards: 0,
    approvals: 0,
    label_links: 0,
    assignees: 0,
    reviewers: 0,
    label_events: 0,
    labels: 0,
    milestones: 0,
    pipelines: 0,
    jobs: 0,
    internal_ids: 0,
    // the importer (Maintainer) was added by the import too; the project has no creator here
    members: [],
  });
  assert.deepEqual(await countAll(rich.project.id), sourceBefore);
  // a second import into the cleared project works (nothing half-left)
  const again = await importTree(deps(ta), dir, { project: target, importer: await rootUser(ta) });
  assert.deepEqual(again.failed, []);
  assert.equal((await countAll(target.id)).merge_requests, 3);
});

test('issues round-trip: links between the project’s issues, assignees, labels, time tracking, type, confidentiality and boards come back', async (t) => {
  const ta = await buildTestApp(t);
  const { app, c, seed } = ta;
  const owner = await seed.user({ username: 'owner' });
  const dev = await seed.user({ username: 'dev' });
  const source = await seed.project({ path: 'src', owner });
  await seed.member({ project: source }, dev, 30);
  const H = (await seed.token(owner)).headers;
  const url = `/api/v4/projects/${source.id}/issues`;
  await app.inject({ method: 'POST', url: `/api/v4/projects/${source.id}/labels`, headers: H, payload: { name: 'ui', color: '#123456' } });
  const a = (
    await app.inject({ method: 'POST', url, headers: H, payload: { title: 'A', labels: 'ui', assignee_ids: [dev.id], issue_type: 'incident' } })
  ).json();
  const b = (await app.inject({ method: 'POST', url, headers: H, payload: { title: 'B', confidential: true } })).json();
  await app.inject({
    method: 'POST',
    url: `${url}/${a.iid}/links`,
    headers: H,
    payload: { target_project_id: source.id, target_issue_iid: b.iid, link_type: 'blocks' },
  });
  await app.inject({ method: 'POST', url: `${url}/${a.iid}/time_estimate`, headers: H, payload: { duration: '3h' } });
  const board = (await app.inject({ method: 'GET', url: `/api/v4/projects/${source.id}/boards`, headers: H })).json()[0];
  await app.inject({ method: 'PUT', url: `/api/v4/projects/${source.id}/boards/${board.id}`, headers: H, payload: { name: 'Flow', hide_closed_list: true } });
  await app.inject({ method: 'POST', url: `/api/v4/projects/${source.id}/boards/${board.id}/lists`, headers: H, payload: { assignee_id: dev.id } });

  const dir = treeDir(ta);
  await writeTree(deps(ta), source, dir);
  const target = await seed.project({ path: 'copy', owner });
  // an administrator's import maps users (a member's assignments stay theirs)
  const result = await importTree(deps(ta), dir, { project: target, importer: await rootUser(ta) });
  assert.deepEqual(result.failed, []);
  const got = async (iid: number) => (await app.inject({ method: 'GET', url: `/api/v4/projects/${target.id}/issues/${iid}`, headers: H })).json();
  const [a2, b2] = [await got(a.iid), await got(b.iid)];
  assert.deepEqual(
    [a2.title, a2.labels, a2.assignees.map((u: { username: string }) => u.username), a2.issue_type, a2.time_stats.time_estimate, a2.confidential],
    ['A', ['ui'], ['dev'], 'incident', 10800, false],
  );
  assert.deepEqual([b2.title, b2.confidential], ['B', true]);
  const links = (await app.inject({ method: 'GET', url: `/api/v4/projects/${target.id}/issues/${a.iid}/links`, headers: H })).json();
  assert.deepEqual(
    links.map((l: { iid: number; link_type: string; project_id: number }) => [l.iid, l.link_type, l.project_id]),
    [[b.iid, 'blocks', target.id]],
  );
  const boards = (await app.inject({ method: 'GET', url: `/api/v4/projects/${target.id}/boards`, headers: H })).json();
  assert.deepEqual(
    boards.map((x: { name: string; hide_closed_list: boolean; lists: { list_type: string; assignee: { username: string } }[] }) => [
      x.name,
      x.hide_closed_list,
      x.lists.map((l) => [l.list_type, l.assignee.username]),
    ]),
    [['Flow', true, [['assignee', 'dev']]]],
  );
});
