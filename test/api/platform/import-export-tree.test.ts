// The project's tree in an archive (src/domain/import-export/tree): written from the database, read back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp } from '../../helpers/build-app.ts';
import { readNdjson, seedRichProject } from '../../helpers/import-export.ts';
import { writeTree } from '../../../src/domain/import-export/tree/index.ts';

test('writeTree: project.json and every relation', async (t) => {
  const ta = await buildTestApp(t);
  const rich = await seedRichProject(ta);
  const dir = fs.mkdtempSync(path.join(ta.dataDir, 'tree-'));
  const counts = await writeTree(ta.c.notes.deps, rich.project, dir, { description: 'Exported' });
  console.log(counts);
  const rel = (n: string) => readNdjson(path.join(dir, 'tree/project', `${n}.ndjson`));
  console.log(JSON.parse(fs.readFileSync(path.join(dir, 'tree/project.json'), 'utf8')));
  for (const n of ['project_members', 'labels', 'milestones', 'issues', 'ci_pipelines', 'environments']) console.log(n, JSON.stringify(rel(n), null, 1));
  console.log(JSON.stringify(rel('merge_requests')[0], null, 1));
});
