// Namespace subtrees as ranges of the traversal index (db/sql.ts inSubtree, inSubtreeOf): exactly the paths that
// start with the prefix, on both databases (PostgreSQL compares the column byte by byte, whatever the database's
// collation), and the outermost paths of a membership set (policy.ts outermost).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp } from '../helpers/build-app.ts';
import { groupRow, insertAll } from '../helpers/rows.ts';
import { inSubtree, inSubtreeOf } from '../../src/db/sql.ts';
import { outermost } from '../../src/domain/access/policy.ts';

test('a subtree is the paths under the prefix, and no sibling whose id shares its digits', async (t) => {
  const { c } = await buildTestApp(t);
  const k = c.db.kysely;
  const paths = ['/1/', '/1/5/', '/1/50/', '/1/5/7/', '/10/', '/10/1/', '/100/', '/2/', '/11/', '/1-/', '/0/'];
  await insertAll(
    k,
    'namespaces',
    paths.map((p, i) => groupRow(`g${i}`, null, { traversal_ids: p })),
  );
  const under = async (prefix: string) =>
    (
      await k
        .selectFrom('namespaces')
        .select('traversal_ids')
        .where(inSubtree('traversal_ids', prefix))
        .where('type', '=', 'Group')
        .orderBy('traversal_ids')
        .execute()
    ).map((r) => r.traversal_ids);
  assert.deepEqual(await under('/1/'), ['/1/', '/1/5/', '/1/5/7/', '/1/50/']);
  assert.deepEqual(await under('/1/5/'), ['/1/5/', '/1/5/7/']);
  assert.deepEqual(await under('/10/'), ['/10/', '/10/1/']);
  assert.deepEqual(await under('/3/'), []);
  // the same with the prefix from a column: every namespace under g0 ('/1/')
  const joined = await k
    .selectFrom('namespaces as n')
    .innerJoin('namespaces as g', (j) => j.on('g.path', '=', 'g0'))
    .select('n.traversal_ids')
    .where(inSubtreeOf('n.traversal_ids', 'g.traversal_ids'))
    .where('n.type', '=', 'Group')
    .orderBy('n.traversal_ids')
    .execute();
  assert.deepEqual(
    joined.map((r) => r.traversal_ids),
    ['/1/', '/1/5/', '/1/5/7/', '/1/50/'],
  );
  if (c.db.dialect === 'postgres') {
    const { rows } = await sql<{ collation: string }>`select collation_name as collation from information_schema.columns
      where table_schema = current_schema() and table_name = 'namespaces' and column_name = 'traversal_ids'`.execute(k);
    assert.deepEqual(rows, [{ collation: 'C' }]);
  }
});

test('outermost: each path once, none inside another', () => {
  assert.deepEqual(outermost(['/1/5/', '/1/', '/2/', '/1/5/7/', '/10/', '/2/']), ['/1/', '/10/', '/2/']);
  assert.deepEqual(outermost([]), []);
});
