// MarkdownReferences.closingIssues: the issues a text closes in a project, as ClosingIssueExtractor finds
// them — existing ones only, each once, across projects, never the project it was forked from, none when
// the project's autoclose_referenced_issues is off. No access checks: the caller decides.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProjectRow } from '../../../src/db/schema.ts';
import { nowIso } from '../../../src/lib/time.ts';
import { buildTestApp, EXTERNAL_URL } from '../../helpers/build-app.ts';

test('the issues a text closes: existing, each once, across projects, not upstream, not when autoclose is off', async (t) => {
  const { c, seed } = await buildTestApp(t);
  const group = await seed.group({ path: 'grp' });
  const upstream = await seed.project({ namespace: group, path: 'upstream', visibility: 'public' });
  const fork = await seed.project({ namespace: group, path: 'fork', visibility: 'private' });
  const other = await seed.project({ namespace: group, path: 'other', visibility: 'private' });
  await c.db.kysely
    .insertInto('project_forks')
    .values({ project_id: fork.id, forked_from_project_id: upstream.id, root_project_id: upstream.id, created_at: nowIso() })
    .execute();
  const issue = async (p: ProjectRow, iid: number) => {
    const now = nowIso();
    return c.db.kysely
      .insertInto('issues')
      .values({ project_id: p.id, iid, title: `Issue ${iid}`, state: 'opened', author_id: null, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  };
  const f1 = await issue(fork, 1);
  const f2 = await issue(fork, 2);
  const o5 = await issue(other, 5);
  await issue(upstream, 1);

  const ids = async (text: string) => (await c.references.closingIssues(fork, 'grp/fork', text)).map((i) => i.id);
  assert.deepEqual(await ids('Fixes #2, #1 and #99; closes other#5 and fixes #2 again'), [f2.id, f1.id, o5.id]);
  assert.deepEqual(await ids(`Closes ${EXTERNAL_URL}/grp/other/-/issues/5 and grp/upstream#1`), [o5.id]);
  assert.deepEqual(await ids('Related to #1'), []);
  await c.db.kysely
    .updateTable('projects')
    .set({ settings: JSON.stringify({ autoclose_referenced_issues: false }) })
    .where('id', '=', fork.id)
    .execute();
  const off = (await c.db.kysely.selectFrom('projects').selectAll().where('id', '=', fork.id).executeTakeFirstOrThrow()) as ProjectRow;
  assert.deepEqual(await c.references.closingIssues(off, 'grp/fork', 'Fixes #1'), []);
});
