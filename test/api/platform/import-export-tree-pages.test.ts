// The tree across its pages and batches: 1,200 merge requests with 4,800 notes (and labels, award emoji,
// approvals) — more than two pages of 500 and twelve import batches — are written and imported with nothing
// lost. The speed at full size (5,000 merge requests, 20,000 notes) is measured by npm run bench:import-export.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp } from '../../helpers/build-app.ts';
import { importTree, writeTree } from '../../../src/domain/import-export/tree/index.ts';

const MRS = 1_200;
const NOTES_PER_MR = 4;

test('writeTree and importTree: 1,200 merge requests with 4,800 notes across pages and batches, nothing lost', async (t) => {
  const ta = await buildTestApp(t);
  const { c, seed } = ta;
  const db = c.db.kysely;
  const author = await seed.user({ username: 'bulk-author' });
  const source = await seed.project({ path: 'big' });
  await seed.member({ project: source }, author, 30);
  const at = '2026-01-01T00:00:00.000Z';
  const label = await db
    .insertInto('labels')
    .values({ project_id: source.id, group_id: null, title: 'bulk', color: '#ff0000', description: null, priority: null, created_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
  for (let from = 1; from <= MRS; from += 500) {
    const rows = [];
    for (let iid = from; iid < Math.min(from + 500, MRS + 1); iid++) {
      rows.push({
        iid,
        project_id: source.id,
        source_project_id: source.id,
        source_branch: `b${iid}`,
        target_branch: 'main',
        title: `Merge request ${iid}`,
        description: 'x'.repeat(200),
        state: iid % 3 === 0 ? 'merged' : 'opened',
        author_id: author.id,
        milestone_id: null,
        merge_user_id: null,
        closed_by_id: null,
        sha: 'a'.repeat(40),
        diff_base_sha: null,
        merge_commit_sha: null,
        squash_commit_sha: null,
        merge_error: null,
        discussion_locked: null,
        merged_at: null,
        closed_at: null,
        prepared_at: at,
        created_at: at,
        updated_at: at,
      });
    }
    const mrs = await db.insertInto('merge_requests').values(rows).returning(['id']).execute();
    const notes = mrs.flatMap((m) =>
      Array.from({ length: NOTES_PER_MR }, (_, k) => ({
        project_id: source.id,
        noteable_type: 'MergeRequest',
        noteable_id: m.id,
        discussion_id: `${m.id}`.padStart(8, '0') + `${k}`.padStart(32, '0'),
        type: null,
        author_id: author.id,
        body: `Note ${k} ${'y'.repeat(100)}`,
        position: null,
        resolved_at: null,
        resolved_by_id: null,
        created_at: at,
        updated_at: at,
      })),
    );
    for (let i = 0; i < notes.length; i += 500)
      await db
        .insertInto('notes')
        .values(notes.slice(i, i + 500))
        .execute();
    await db
      .insertInto('merge_request_labels')
      .values(mrs.map((m) => ({ merge_request_id: m.id, label_id: label.id, created_at: at })))
      .execute();
    await db
      .insertInto('award_emoji')
      .values(mrs.map((m) => ({ awardable_type: 'MergeRequest', awardable_id: m.id, user_id: author.id, name: 'thumbsup', created_at: at, updated_at: at })))
      .execute();
  }
  const dir = fs.mkdtempSync(path.join(ta.dataDir, 'tree-'));
  const deps = c.notes.deps;
  const counts = await writeTree(deps, source, dir);
  assert.equal(counts.merge_requests, MRS);
  const size = fs.statSync(path.join(dir, 'tree/project/merge_requests.ndjson')).size;

  const target = await seed.project({ path: 'big-copy' });
  const result = await importTree(deps, dir, { project: target, importer: (await c.users.byId(1))! });
  assert.deepEqual(result.failed, []);
  assert.equal(result.counts.merge_requests, MRS);
  const count = async (table: 'merge_requests' | 'notes') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', target.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  assert.equal(await count('merge_requests'), MRS);
  assert.equal(await count('notes'), MRS * NOTES_PER_MR);
  const last = await db.selectFrom('merge_requests').selectAll().where('project_id', '=', target.id).where('iid', '=', MRS).executeTakeFirstOrThrow();
  assert.equal(last.title, `Merge request ${MRS}`);
  assert.equal(last.user_notes_count, NOTES_PER_MR);
  assert.equal(last.upvotes, 1);
  t.diagnostic(`${(size / 1e6).toFixed(1)} MB of merge_requests.ndjson`);
});
