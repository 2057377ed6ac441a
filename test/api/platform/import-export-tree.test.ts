// The project's tree in an archive (src/domain/import-export/tree): written from the database, read back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-app.ts';
import { seedRichProject } from '../../helpers/import-export.ts';

test('seedRichProject builds a project with every relation', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  assert.equal(rich.mrs.merged.state, 'merged');
  assert.equal(rich.mrs.closed.state, 'closed');
  assert.equal(rich.mrs.opened.state, 'opened');
  console.log(rich.notes.map((n) => [n.noteable_type, n.type, n.system, n.body]));
});
