// The push journal: pushes over smart HTTP leave no journal row behind, deletions of packed refs and
// atomic pushes report their updates, and a replay writes the events of the journaled updates that are
// visible — once — for rows whose process is gone or whose lease ended, never for a running push; it
// removes the quarantine folders killed pushes left. (test/hooks/push-crash.test.ts kills real servers.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, cloneUrl } from '../helpers/server.ts';
import { bareGit, WorkTree, pushEvents, runGit as git, tmpDir as tmp } from '../helpers/git.ts';
import { ZERO_SHA } from '../../src/git/refs.ts';
import type { TestApp } from '../helpers/build-app.ts';

async function pushable(t: Parameters<typeof startTestServer>[0]) {
  const s = await startTestServer(t);
  const owner = await s.seed.user({ password: 'secret-pass-9' });
  const ns = await s.seed.namespaceOf(owner);
  const { project, dir: bare } = await s.seed.repoProject({ owner, namespace: ns });
  await s.seed.member({ project }, owner, 50);
  const work = tmp(t);
  execFileSync('git', ['init', '-q', '-b', 'main', work]);
  const w = new WorkTree(work);
  const url = cloneUrl(s.base, `${ns.full_path}/${project.path}`, owner.username, 'secret-pass-9');
  return { ...s, owner, project, bare, w, url };
}

const pending = (c: TestApp['c']) => c.db.kysely.selectFrom('pending_pushes').selectAll().execute();

/** A pid that belonged to a process of this host that has exited. */
function deadPid(): number {
  return spawnSync('true').pid;
}

test('a push leaves no journal row; deleting a packed branch and an atomic push report the right updates', async (t) => {
  const { c, bare, w, url } = await pushable(t);
  const a = w.write('a', '1').commit('one');
  w.checkout('feature', true);
  const f = w.write('f', '1').commit('feature');
  await git(w.dir, ['push', '-q', url, 'main', 'feature', 'refs/heads/feature:refs/tags/v1']);
  assert.deepEqual(await pending(c), []);
  // packed refs: git 2.39 reports the nested packed-refs transaction too (without the old value)
  bareGit(bare, ['pack-refs', '--all']);
  await git(w.dir, ['push', '-q', url, '--delete', 'feature']);
  let evs = await pushEvents(c);
  const deletion = evs.filter((e) => e.event_name === 'push').at(-1);
  assert.equal(deletion.ref, 'refs/heads/feature');
  assert.equal(deletion.before, f);
  assert.equal(deletion.after, ZERO_SHA);
  assert.deepEqual(evs.at(-1).changes, [{ before: f, after: ZERO_SHA, ref: 'refs/heads/feature' }]);
  // one transaction for both refs
  w.checkout('main');
  const b = w.write('a', '2').commit('two');
  await git(w.dir, ['push', '-q', '--atomic', url, 'main', 'main:refs/heads/copy']);
  evs = await pushEvents(c);
  assert.deepEqual(evs.at(-1).changes, [
    { before: a, after: b, ref: 'refs/heads/main' },
    { before: ZERO_SHA, after: b, ref: 'refs/heads/copy' },
  ]);
  assert.deepEqual(await pending(c), []);
  // a tag deleted
  await git(w.dir, ['push', '-q', url, ':refs/tags/v1']);
  evs = await pushEvents(c);
  assert.equal(evs.at(-2).event_name, 'tag_push');
  assert.equal(evs.at(-2).after, ZERO_SHA);
  assert.deepEqual(await pending(c), []);
});

test('replay: the visible updates of a dead process get their events once; running pushes and pending ref locks wait', async (t) => {
  const { c, owner, project, bare, w, url } = await pushable(t);
  const one = w.write('a', '1').commit('one');
  await git(w.dir, ['push', '-q', url, 'main']);
  const before = (await pushEvents(c)).length;
  const two = w.write('a', '2').commit('two');
  // what a killed push leaves: main moved (visible; pushed straight to the directory, no server), "ghost"
  // journaled but never moved
  await git(w.dir, ['push', '-q', bare, 'main']);
  const now = new Date().toISOString();
  const later = new Date(Date.now() + 600_000).toISOString();
  const row = (
    ownerName: string,
    lease = later,
    changes = [
      { before: one, after: two, ref: 'refs/heads/main' },
      { before: ZERO_SHA, after: two, ref: 'refs/heads/ghost' },
    ],
  ) => ({
    project_id: project.id,
    user_id: owner.id,
    owner: ownerName,
    lease_until: lease,
    changes: changes.map((x) => `${x.before} ${x.after} ${x.ref}\n`).join(''),
    created_at: now,
  });
  // a running push elsewhere (lease valid): left alone
  await c.db.kysely.insertInto('pending_pushes').values(row('elsewhere:4242:abcdef:p1')).execute();
  let r = await c.pushes.recover();
  assert.equal(r.replayed, 0);
  assert.equal((await pushEvents(c)).length, before);

  // the same row with its lease ended: replayed, main only
  await c.db.kysely.updateTable('pending_pushes').set({ lease_until: now }).execute();
  r = await c.pushes.recover();
  assert.deepEqual([r.replayed, r.recorded, r.deferred], [1, 1, 0]);
  const evs = (await pushEvents(c)).slice(before);
  assert.deepEqual(
    evs.map((e) => [e.event_name, e.ref ?? null]),
    [
      ['push', 'refs/heads/main'],
      ['repository_update', null],
    ],
  );
  assert.equal(evs[0].before, one);
  assert.equal(evs[0].after, two);
  assert.equal(evs[0].user_username, owner.username);
  assert.equal(evs[0].total_commits_count, 1);
  assert.deepEqual(await pending(c), []);
  // once
  r = await c.pushes.recover();
  assert.equal(r.replayed, 0);
  assert.equal((await pushEvents(c)).length, before + 2);

  // a process of this host that is gone: replayed at once, lease or not; nothing visible → no event
  await c.db.kysely
    .insertInto('pending_pushes')
    .values(row(`${os.hostname()}:${deadPid()}:0123456789ab:p7`, later, [{ before: ZERO_SHA, after: two, ref: 'refs/heads/ghost' }]))
    .execute();
  await c.db.kysely
    .insertInto('pending_pushes')
    .values(row(`${os.hostname()}:${process.pid}:0123456789ab:p8`, later, [{ before: two, after: one, ref: 'refs/heads/main' }]))
    .execute();
  r = await c.pushes.recover();
  assert.deepEqual([r.replayed, r.recorded], [2, 0]);
  assert.equal((await pushEvents(c)).length, before + 2);
  assert.deepEqual(await pending(c), []);

  // a ref lock that git may still hold: deferred (the row stays), replayed after the lock is gone
  const three = w.write('a', '3').commit('three');
  await git(w.dir, ['push', '-q', bare, 'main']);
  await c.db.kysely
    .insertInto('pending_pushes')
    .values(row('elsewhere:1:abcdef:p2', now, [{ before: two, after: three, ref: 'refs/heads/main' }]))
    .execute();
  fs.writeFileSync(path.join(bare, 'refs/heads/main.lock'), three + '\n');
  r = await c.pushes.recover();
  assert.deepEqual([r.replayed, r.deferred, r.recorded], [1, 1, 0]);
  assert.equal((await pending(c)).length, 1);
  fs.rmSync(path.join(bare, 'refs/heads/main.lock'));
  await c.db.kysely.updateTable('pending_pushes').set({ lease_until: now }).execute();
  r = await c.pushes.recover();
  assert.deepEqual([r.replayed, r.recorded], [1, 1]);
  assert.equal((await pushEvents(c)).at(-2).after, three);
  assert.deepEqual(await pending(c), []);
});

test('a push whose journal row was taken over can neither move a ref nor write events', async (t) => {
  const { c, owner, project } = await pushable(t);
  const push = await c.pushes.begin(project, owner);
  await c.db.kysely
    .updateTable('pending_pushes')
    .set({ lease_until: new Date(0).toISOString() })
    .execute();
  const r = await c.pushes.recover();
  assert.equal(r.replayed, 1);
  assert.equal(await push.prepare([{ before: ZERO_SHA, after: 'a'.repeat(40), ref: 'refs/heads/x' }]), false);
  push.committedUpdates([{ before: ZERO_SHA, after: 'a'.repeat(40), ref: 'refs/heads/x' }]);
  const ns = await c.db.kysely.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  assert.equal((await push.complete({ namespace: ns, repo: c.repos.repository(project) })).recorded, false);
  assert.deepEqual(await pushEvents(c), []);
});

test('quarantine folders and old push logs left by killed pushes are removed at start, not those of running pushes', async (t) => {
  const { c, owner, project, bare, seed } = await pushable(t);
  const other = await seed.repoProject({ owner, namespace: await seed.namespaceOf(owner) });
  const leave = (dir: string) => {
    fs.mkdirSync(path.join(dir, 'objects/incoming-Ab12Cd/pack'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'objects/incoming-Ab12Cd/pack/tmp_pack_x'), 'PACK');
    fs.mkdirSync(path.join(dir, 'objects/tmp_objdir-incoming-Zz9'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'hearth-push-0123abcd'), `${ZERO_SHA} ${ZERO_SHA} refs/heads/x\n`);
  };
  leave(bare);
  leave(other.dir);
  // a push runs in the other repository
  await c.db.kysely
    .insertInto('pending_pushes')
    .values({
      project_id: other.project.id,
      user_id: owner.id,
      owner: 'elsewhere:9:abcdef:p1',
      lease_until: new Date(Date.now() + 600_000).toISOString(),
      changes: '',
      created_at: new Date().toISOString(),
    })
    .execute();
  await new Promise((r) => setTimeout(r, 5));
  const r = await c.pushes.recover({ scanAll: true });
  assert.equal(r.cleaned, 3);
  assert.deepEqual(
    fs.readdirSync(path.join(bare, 'objects')).filter((n) => n.includes('incoming')),
    [],
  );
  assert.equal(fs.existsSync(path.join(bare, 'hearth-push-0123abcd')), false);
  assert.deepEqual(
    fs
      .readdirSync(path.join(other.dir, 'objects'))
      .filter((n) => n.includes('incoming'))
      .sort(),
    ['incoming-Ab12Cd', 'tmp_objdir-incoming-Zz9'],
  );
  assert.equal(project.id !== other.project.id, true);
});
