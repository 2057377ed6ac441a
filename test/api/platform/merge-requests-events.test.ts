// merge_request system-hook events (GitLab's IssuableBuilder + MergeRequestBuilder payloads): open,
// update with `changes`, close, reopen, delivered to the hooks with merge_requests_events only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';
import { workTree } from '../../helpers/git.ts';
import { startSink } from '../../helpers/sink.ts';

const T0 = 1_700_000_000;

test('merge_request events reach the hooks that want them, with GitLab payloads', async (t) => {
  const { app, c, seed, root } = await buildTestApp(t);
  const wanted = await startSink(t);
  const unwanted = await startSink(t);
  for (const [url, on] of [
    [wanted.url, true],
    [unwanted.url, false],
  ] as const) {
    const res = await app.inject({
      method: 'POST',
      url: '/api/v4/hooks',
      headers: root,
      payload: { url, merge_requests_events: on, repository_update_events: false },
    });
    assert.equal(res.statusCode, 201, res.body);
  }
  const dev = await seed.user({ name: 'Dee Developer' });
  const reviewer = await seed.user({ name: 'Rae Reviewer' });
  const group = await seed.group({ path: `hooks-${Math.random().toString(36).slice(2, 7)}`, visibility: 'internal' });
  const { project, dir } = await seed.repoProject({ namespace: group, visibility: 'internal', path: 'svc' });
  await seed.member({ project }, dev, 40);
  await seed.member({ project }, reviewer, 30);
  const { headers } = await seed.token(dev);
  const wt = workTree(t, dir);
  wt.write('README.md', '# svc\n').commit('Initial', { time: T0 });
  wt.checkout('topic', true);
  const head = wt.write('t.txt', 't\n').commit('Topic work', { time: T0 + 60 });
  wt.checkout('main');
  wt.push();
  await c.worker.drain();
  wanted.received.length = unwanted.received.length = 0;

  const base = `/api/v4/projects/${project.id}/merge_requests`;
  let res = await app.inject({
    method: 'POST',
    url: base,
    headers,
    payload: { title: 'Topic', source_branch: 'topic', target_branch: 'main', labels: 'backend', description: 'd' },
  });
  assert.equal(res.statusCode, 201, res.body);
  const mr = res.json();
  await c.merges.idle();
  res = await app.inject({ method: 'PUT', url: `${base}/1`, headers, payload: { title: 'Draft: Topic', reviewer_ids: [reviewer.id], milestone_id: 0 } });
  assert.equal(res.statusCode, 200, res.body);
  res = await app.inject({ method: 'PUT', url: `${base}/1`, headers, payload: { state_event: 'close' } });
  assert.equal(res.statusCode, 200, res.body);
  res = await app.inject({ method: 'PUT', url: `${base}/1`, headers, payload: { state_event: 'reopen' } });
  assert.equal(res.statusCode, 200, res.body);
  await c.merges.idle();
  await c.worker.drain();

  // each delivery is sent on its own: they may arrive in any order
  const received = wanted.received.filter((r) => r.json.object_kind === 'merge_request');
  assert.deepEqual(received.map((r) => r.json.object_attributes.action).sort(), ['close', 'open', 'reopen', 'update']);
  const got = ['open', 'update', 'close', 'reopen'].map((a) => received.find((r) => r.json.object_attributes.action === a)!);
  assert.deepEqual(
    unwanted.received.filter((r) => r.json.object_kind === 'merge_request'),
    [],
  );
  assert.equal(got[0].headers['content-type'], 'application/json');

  const webUrl = `${EXTERNAL_URL}/${group.full_path}/svc`;
  const host = new URL(EXTERNAL_URL).hostname;
  const projectAttrs = {
    id: project.id,
    name: 'svc',
    description: null,
    web_url: webUrl,
    avatar_url: null,
    git_ssh_url: `ssh://git@${host}:2222/${group.full_path}/svc.git`,
    git_http_url: `${webUrl}.git`,
    namespace: group.name,
    visibility_level: 10,
    path_with_namespace: `${group.full_path}/svc`,
    default_branch: 'main',
    ci_config_path: null,
    homepage: webUrl,
    url: `ssh://git@${host}:2222/${group.full_path}/svc.git`,
    ssh_url: `ssh://git@${host}:2222/${group.full_path}/svc.git`,
    http_url: `${webUrl}.git`,
  };
  const open = got[0].json;
  const label = open.labels[0];
  assert.deepEqual(label, {
    id: label.id,
    title: 'backend',
    color: '#6699cc',
    project_id: project.id,
    created_at: label.created_at,
    updated_at: label.updated_at,
    template: false,
    description: null,
    type: 'ProjectLabel',
    group_id: null,
  });
  assert.deepEqual(open, {
    object_kind: 'merge_request',
    event_type: 'merge_request',
    user: { id: dev.id, name: 'Dee Developer', username: dev.username, avatar_url: null, email: '[REDACTED]' },
    project: projectAttrs,
    object_attributes: {
      assignee_id: null,
      author_id: dev.id,
      created_at: mr.created_at,
      description: 'd',
      draft: false,
      head_pipeline_id: null,
      id: mr.id,
      iid: 1,
      last_edited_at: null,
      last_edited_by_id: null,
      merge_commit_sha: null,
      merge_error: null,
      merge_params: {},
      merge_status: 'unchecked',
      merge_user_id: null,
      merge_when_pipeline_succeeds: false,
      milestone_id: null,
      source_branch: 'topic',
      source_project_id: project.id,
      state_id: 1,
      target_branch: 'main',
      target_project_id: project.id,
      time_estimate: 0,
      title: 'Topic',
      updated_at: mr.updated_at,
      updated_by_id: null,
      prepared_at: mr.prepared_at,
      url: `${webUrl}/-/merge_requests/1`,
      source: projectAttrs,
      target: projectAttrs,
      last_commit: {
        id: head,
        message: 'Topic work\n',
        title: 'Topic work',
        timestamp: '2023-11-14T22:14:20+00:00',
        url: `${webUrl}/-/commit/${head}`,
        author: { name: 'Ada Lovelace', email: 'ada@example.com' },
      },
      work_in_progress: false,
      total_time_spent: 0,
      time_change: 0,
      human_total_time_spent: null,
      human_time_change: null,
      human_time_estimate: null,
      assignee_ids: [],
      reviewer_ids: [],
      labels: [label],
      state: 'opened',
      blocking_discussions_resolved: true,
      first_contribution: false,
      detailed_merge_status: 'unchecked',
      action: 'open',
    },
    labels: [label],
    changes: {},
    repository: { name: 'svc', url: projectAttrs.url, description: null, homepage: webUrl },
  });

  const update = got[1].json;
  assert.deepEqual(Object.keys(update.changes).sort(), ['draft', 'reviewers', 'title', 'updated_at']);
  assert.deepEqual(update.changes.title, { previous: 'Topic', current: 'Draft: Topic' });
  assert.deepEqual(update.changes.draft, { previous: false, current: true });
  const reviewerAttrs = { id: reviewer.id, name: 'Rae Reviewer', username: reviewer.username, avatar_url: null, email: '[REDACTED]' };
  assert.deepEqual(update.changes.reviewers, { previous: [], current: [reviewerAttrs] });
  assert.deepEqual(update.reviewers, [reviewerAttrs]);
  assert.equal(update.object_attributes.draft, true);
  assert.equal(update.object_attributes.work_in_progress, true);
  assert.deepEqual(update.object_attributes.reviewer_ids, [reviewer.id]);

  const close = got[2].json;
  assert.deepEqual(close.changes.state_id, { previous: 1, current: 2 });
  assert.equal(close.object_attributes.state, 'closed');
  assert.equal(close.object_attributes.state_id, 2);
  assert.equal(close.object_attributes.detailed_merge_status, 'not_open');
  const reopen = got[3].json;
  assert.deepEqual(reopen.changes.state_id, { previous: 2, current: 1 });
  assert.equal(reopen.object_attributes.state, 'opened');
});
