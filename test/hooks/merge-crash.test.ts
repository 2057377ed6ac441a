// Crash safety of merges: a server killed (SIGKILL) after the target branch moved to the merge and
// before the merge request was marked merged finishes the merge after a restart (merged, its state
// event, one `merge` hook event and one activity event, no lock left); a server killed while the merge
// waited to move the branch leaves the branch where it was and the merge request open and mergeable.
// Real processes (`node bin/hearth.js serve`, as the README starts it), a real port, SQLite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startSink, type Sink } from '../helpers/sink.ts';
import { freePort, kill9, startHearth, tempDataDir, TOKEN, until } from '../helpers/process.ts';
import { RepositoryStore } from '../../src/git/storage.ts';

const mergeHooks = (sink: Sink, iid: number) =>
  sink.received.filter((r) => r.json?.object_kind === 'merge_request' && r.json.object_attributes?.action === 'merge' && r.json.object_attributes.iid === iid);

test('a merge killed after the target branch moved is finished after a restart; one killed before it moved is open again', { timeout: 600_000 }, async (t) => {
  const dataDir = tempDataDir(t, 'hearth-merge-crash-');
  const sink = await startSink(t);
  const port = await freePort();
  /** a life of the server on this DATA_DIR and port, with a fault's pause (or none) */
  const startServer = (fault?: string) =>
    startHearth(t, { dataDir, port, env: { HEARTH_IN_PROCESS_WORKER: 'true', HEARTH_WORKER_POLL_MS: '20', ...(fault ? { HEARTH_TEST_FAULT: fault } : {}) } });
  const api = (method: string, url: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${port}/api/v4${url}`, {
      method,
      headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const ok = async (method: string, url: string, body?: unknown, status = 201) => {
    const res = await api(method, url, body);
    const text = await res.text();
    assert.equal(res.status, status, text);
    return JSON.parse(text);
  };
  /** the server's database, read beside it (WAL) */
  const rows = <T>(query: string, ...params: unknown[]): T[] => {
    const db = new Database(path.join(dataDir, 'hearth.sqlite3'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(query).all(...params) as T[];
    } finally {
      db.close();
    }
  };

  // first life: the merge stops after the target branch moved, before the merge request is marked merged
  const first = await startServer('pause-after-merge-ref-update');
  await ok('POST', '/hooks', { url: `${sink.url}/system`, merge_requests_events: true, push_events: true });
  const project = await ok('POST', '/projects', { name: 'Merges', path: 'merges', initialize_with_readme: true });
  const bare = path.join(dataDir, 'repositories/default', RepositoryStore.diskPath(project.id));
  const head = (ref: string) => execFileSync('git', ['--git-dir', bare, 'rev-parse', '--verify', '-q', ref]).toString().trim();
  const branchWithCommit = async (name: string) => {
    await ok('POST', `/projects/${project.id}/repository/branches`, { branch: name, ref: 'main' });
    const c = await ok('POST', `/projects/${project.id}/repository/commits`, {
      branch: name,
      commit_message: `Add ${name}`,
      actions: [{ action: 'create', file_path: `${name}.txt`, content: `${name}\n` }],
    });
    return c.id as string;
  };
  const featureSha = await branchWithCommit('feature');
  const secondSha = await branchWithCommit('second');
  const mr1 = await ok('POST', `/projects/${project.id}/merge_requests`, { source_branch: 'feature', target_branch: 'main', title: 'Feature' });
  const mr2 = await ok('POST', `/projects/${project.id}/merge_requests`, { source_branch: 'second', target_branch: 'main', title: 'Second' });
  const mainBefore = head('refs/heads/main');

  const merging = api('PUT', `/projects/${project.id}/merge_requests/${mr1.iid}/merge`).catch((e: Error) => e);
  await first.waitForLine((l) => l.msg === 'hearth test fault: pause-after-merge-ref-update: paused');
  await kill9(first);
  assert.ok((await merging) instanceof Error);
  // main has the merge commit; the merge request is still locked, without its merge events
  const mergeCommit = head('refs/heads/main');
  assert.notEqual(mergeCommit, mainBefore);
  assert.equal(head(`${mergeCommit}^1`), mainBefore);
  assert.equal(head(`${mergeCommit}^2`), featureSha);
  assert.deepEqual(rows('select state from merge_requests where id = ?', mr1.id), [{ state: 'locked' }]);
  assert.equal(mergeHooks(sink, mr1.iid).length, 0);

  // second life: the journal's replay at start finishes the merge
  const second = await startServer('pause-before-merge-ref-update');
  const merged = await ok('GET', `/projects/${project.id}/merge_requests/${mr1.iid}`, undefined, 200);
  assert.equal(merged.state, 'merged');
  assert.equal(merged.merge_commit_sha, mergeCommit);
  assert.equal(merged.squash_commit_sha, null);
  assert.equal(merged.merge_user.username, 'root');
  assert.equal(merged.merged_by.username, 'root');
  assert.match(merged.merged_at, /^\d{4}-\d\d-\d\dT/);
  assert.equal(merged.merge_error, null);
  // written once: the state event, the merge hook event in the outbox, the activity event, the push events
  assert.deepEqual(rows('select state from resource_state_events where merge_request_id = ?', mr1.id), [{ state: 'merged' }]);
  const outbox = rows<{ payload: string }>("select payload from jobs where kind = 'system_event'").map((j) => JSON.parse(j.payload));
  const mergeEvents = outbox.filter((p) => p.object_kind === 'merge_request' && p.object_attributes.action === 'merge');
  assert.equal(mergeEvents.length, 1);
  assert.equal(mergeEvents[0].object_attributes.iid, mr1.iid);
  assert.equal(mergeEvents[0].object_attributes.state, 'merged');
  assert.equal(mergeEvents[0].object_attributes.merge_commit_sha, mergeCommit);
  assert.deepEqual(mergeEvents[0].changes.state_id, { previous: 4, current: 3 });
  assert.equal(mergeEvents[0].user.username, 'root');
  assert.deepEqual(
    outbox.filter((p) => p.event_name === 'push' && p.after === mergeCommit).map((p) => [p.ref, p.before]),
    [['refs/heads/main', mainBefore]],
  );
  const activity = await ok('GET', `/projects/${project.id}/events?action=merged`, undefined, 200);
  assert.deepEqual(
    activity.map((e: Record<string, unknown>) => [e.action_name, e.target_type, e.target_iid, e.target_title]),
    [['accepted', 'MergeRequest', mr1.iid, 'Feature']],
  );
  assert.deepEqual(rows('select id from pending_pushes'), []);
  assert.deepEqual(rows("select id from merge_requests where state = 'locked'"), []);
  await until('the merge hook delivered', () => mergeHooks(sink, mr1.iid).length >= 1);

  // killed while the merge waits to move main (journaled, not yet moved): main stays
  const merging2 = api('PUT', `/projects/${project.id}/merge_requests/${mr2.iid}/merge`).catch((e: Error) => e);
  await second.waitForLine((l) => l.msg === 'hearth test fault: pause-before-merge-ref-update: paused');
  await kill9(second);
  assert.ok((await merging2) instanceof Error);
  await until('git to let go of main', () => !fs.existsSync(path.join(bare, 'refs/heads/main.lock')), 10_000);
  assert.equal(head('refs/heads/main'), mergeCommit);
  assert.deepEqual(rows('select state from merge_requests where id = ?', mr2.id), [{ state: 'locked' }]);

  // third life: open again, and mergeable
  const third = await startServer();
  const reopened = await ok('GET', `/projects/${project.id}/merge_requests/${mr2.iid}`, undefined, 200);
  assert.equal(reopened.state, 'opened');
  assert.equal(reopened.merged_at, null);
  assert.equal(reopened.merge_commit_sha, null);
  assert.equal(reopened.merge_user, null);
  assert.deepEqual(rows('select id from pending_pushes'), []);
  assert.deepEqual(rows('select state from resource_state_events where merge_request_id = ?', mr2.id), []);
  const merged2 = await ok('PUT', `/projects/${project.id}/merge_requests/${mr2.iid}/merge`, undefined, 200);
  assert.equal(merged2.state, 'merged');
  assert.equal(head('refs/heads/main'), merged2.merge_commit_sha);
  assert.equal(head(`${merged2.merge_commit_sha}^2`), secondSha);
  await until('the second merge hook', () => mergeHooks(sink, mr2.iid).length >= 1);
  const outbox2 = rows<{ payload: string }>("select payload from jobs where kind = 'system_event'").map((j) => JSON.parse(j.payload));
  assert.deepEqual(
    outbox2.filter((p) => p.object_kind === 'merge_request' && p.object_attributes.action === 'merge').map((p) => p.object_attributes.iid),
    [mr1.iid, mr2.iid],
  );
  assert.equal(mergeHooks(sink, mr1.iid).length, 1);
  await kill9(third);
});
