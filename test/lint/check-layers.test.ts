// bin/check-layers.js (run by `npm run lint`): on small fixture trees with one break each it fails and names the
// file, line and rule; on a tree that keeps the layers it passes; and the project's own src/ passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const CHECK = path.resolve('bin/check-layers.js');

/** Writes a tree of modules under <tmp>/src and runs the check on it, as `npm run lint` does. */
function check(files: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-layers-'));
  try {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, 'src', name)), { recursive: true });
      fs.writeFileSync(path.join(root, 'src', name), text);
    }
    const run = spawnSync(process.execPath, [CHECK, '--root', root], { encoding: 'utf8' });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** A tree that keeps every rule: http → domain → db, a view, a type-only cycle (allowed), a registrar. */
const CLEAN: Record<string, string> = {
  'app.ts': "import { projectRoutes } from './http/projects.routes.ts';\nexport const routes = [projectRoutes];\n",
  'http/projects.routes.ts':
    "import { listProjects } from '../domain/projects.ts';\nimport { page } from '../web/page.tsx';\nexport const projectRoutes = () => page(listProjects());\n",
  'domain/projects.ts':
    "import { db } from '../db/db.ts';\nimport type { Deps } from './deps.ts';\nexport const listProjects = (d?: Deps) => db.selectFrom('projects');\n",
  'domain/deps.ts': "import type { listProjects } from './projects.ts';\nexport type Deps = { list: typeof listProjects };\n",
  'db/db.ts': 'export const db: any = {};\n',
  'web/page.tsx': "import type { Row } from '../db/types.ts';\nexport const page = (rows: Row[]) => String(rows);\n",
  'db/types.ts': 'export type Row = { id: number };\n',
};

test('a tree that keeps the layers passes', () => {
  const run = check(CLEAN);
  assert.equal(run.stderr, '');
  assert.equal(run.stdout, 'check-layers: 7 modules, layers kept, no runtime cycles, no wire bodies built in src/domain\n');
  assert.equal(run.status, 0);
});

test('a back-arrow fails, type-only imports included: the domain importing HTTP, a view importing a route', () => {
  const run = check({
    ...CLEAN,
    'domain/projects.ts':
      "import { db } from '../db/db.ts';\nimport type { Ctx } from '../http/ctx.ts';\nexport const listProjects = (c?: Ctx) => db.selectFrom('projects');\n",
    'http/ctx.ts': 'export type Ctx = { user: string };\n',
    'web/page.tsx': "import { projectRoutes } from '../http/projects.routes.ts';\nexport const page = (rows: unknown) => String(rows) + projectRoutes;\n",
  });
  assert.equal(
    run.stderr,
    [
      'src/domain/projects.ts:2: domain imports http (../http/ctx.ts): the domain knows no HTTP, pages or wiring',
      'src/web/page.tsx:1: web imports http (../http/projects.routes.ts): views get what they show from the routes, never import them',
      // the view's runtime import also closes a loop: http → web → http
      'src/: the top-level folders http, web import each other at runtime (a cycle)',
      'src/: a runtime import cycle between src/http/projects.routes.ts, src/web/page.tsx',
      'check-layers: 4 problem(s) in 8 modules',
      '',
    ].join('\n'),
  );
  assert.equal(run.status, 1);
});

test('plumbing importing the domain, a migration taking live defaults, and a job runner that knows its jobs fail', () => {
  const run = check({
    ...CLEAN,
    'db/migrations/001.ts': "import { DEFAULT } from '../../domain/messages.ts';\nexport const up = () => DEFAULT;\n",
    'domain/messages.ts': "export const DEFAULT = 'Translated using Hearth';\n",
    'jobs/worker.ts': "import type { Deliveries } from '../domain/deliveries.ts';\nexport const run = (d: Deliveries) => d;\n",
    'domain/deliveries.ts': 'export type Deliveries = { next(): void };\n',
  });
  assert.equal(
    run.stderr,
    [
      'src/db/migrations/001.ts:1: db imports domain (../../domain/messages.ts): plumbing sits below the domain',
      'src/jobs/worker.ts:1: jobs imports domain (../domain/deliveries.ts): the job runner is plumbing: the domain registers its jobs with it',
      'src/: the top-level folders db, domain import each other at runtime (a cycle)',
      'check-layers: 3 problem(s) in 11 modules',
      '',
    ].join('\n'),
  );
  assert.equal(run.status, 1);
});

test('SQL under http/ or web/ fails: a Kysely statement, an sql`` template; the same in the domain passes', () => {
  const run = check({
    ...CLEAN,
    'http/stars.routes.ts': "import { db } from '../db/db.ts';\nexport const stars = () =>\n  db.selectFrom('stars').where('id', '=', 1);\n",
    'web/count.tsx': "import { sql } from '../db/db.ts';\nexport const count = () => sql`select 1`;\n",
  });
  assert.equal(
    run.stderr,
    [
      'src/http/stars.routes.ts:3: SQL under src/http (selectFrom(): put it in a domain finder or service',
      'src/web/count.tsx:2: SQL under src/web (sql``): put it in a domain finder or service',
      'check-layers: 2 problem(s) in 9 modules',
      '',
    ].join('\n'),
  );
  assert.equal(run.status, 1);
});

test('a route module importing another fails; a runtime cycle between top-level folders fails though no rule names them', () => {
  const run = check({
    ...CLEAN,
    'http/groups.routes.ts': "import { projectRoutes } from './projects.routes.ts';\nexport const groupRoutes = projectRoutes;\n",
    'git/refs.ts': "import { parse } from '../formats/po.ts';\nexport const refs = () => parse;\n",
    'formats/po.ts': "import { refs } from '../git/refs.ts';\nexport const parse = () => refs;\n",
  });
  assert.equal(
    run.stderr,
    [
      'src/http/groups.routes.ts:1: a route module imports another (./projects.routes.ts): move what they share into a module of its own',
      'src/: the top-level folders formats, git import each other at runtime (a cycle)',
      'src/: a runtime import cycle between src/formats/po.ts, src/git/refs.ts',
      'check-layers: 3 problem(s) in 10 modules',
      '',
    ].join('\n'),
  );
  assert.equal(run.status, 1);
});

test('a runtime cycle between folders of the domain fails, core included; a type-only import back into core passes', () => {
  const run = check({
    ...CLEAN,
    'domain/core/settings.ts': "import type { Group } from '../groups/groups.ts';\nexport const DEFAULTS: Partial<Group> = {};\n",
    'domain/core/activity.ts': "import { ACTIONS } from '../events/actions.ts';\nexport const record = () => ACTIONS;\n",
    'domain/events/actions.ts': 'export const ACTIONS = [];\n',
    'domain/events/events.ts': "import { record } from '../core/activity.ts';\nexport const events = () => record();\n",
    'domain/groups/groups.ts':
      "import { DEFAULTS } from '../core/settings.ts';\nimport { destroyProjects } from '../projects/destroy.ts';\nexport type Group = { id: number };\nexport const deleteGroup = () => destroyProjects(DEFAULTS);\n",
    'domain/groups/rules.ts': 'export const groupRules = {};\n',
    'domain/projects/destroy.ts': 'export const destroyProjects = (d: unknown) => d;\n',
    'domain/projects/projects.ts': "import { groupRules } from '../groups/rules.ts';\nexport const createProject = () => groupRules;\n",
  });
  assert.equal(
    run.stderr,
    [
      'src/domain/: the folders core, events import each other at runtime (core/activity.ts → events, events/events.ts → core): move what they share into domain/core, or one below the other',
      'src/domain/: the folders groups, projects import each other at runtime (groups/groups.ts → projects, projects/projects.ts → groups): move what they share into domain/core, or one below the other',
      'check-layers: 2 problem(s) in 15 modules',
      '',
    ].join('\n'),
  );
  assert.equal(run.status, 1);
});

test('an Errors.raw call in the domain fails, named by its line', () => {
  const raw = "import { Errors } from '../lib/errors.ts';\nexport const f = () => [\n  Errors.raw(400, {}),\n  Errors.refused('no'),\n];\n";
  const run = check({ ...CLEAN, 'domain/wire.ts': raw, 'lib/errors.ts': 'export const Errors: any = {};\n' });
  assert.equal(
    run.stderr,
    [
      'src/domain/wire.ts:3: Errors.raw( in the domain: raise a typed error (Errors.refused, invalid, rejected, locked …), each API renders it',
      'check-layers: 1 problem(s) in 9 modules',
      '',
    ].join('\n'),
  );
  assert.equal(run.status, 1);
});

test('a comment naming an issue or a helper fails, in a module or a stylesheet; a GitLab issue reference passes', () => {
  const run = check({
    ...CLEAN,
    'domain/stars.ts': '// Project stars (issue 18, helper E).\n// GitLab drops the extension (gitlab-org/gitlab#458236).\nexport const stars = 1;\n',
    'web/assets/10-app.css': '/* The settings pages */\n/* Helper D: the sign-in box */\n.box {}\n',
  });
  assert.equal(
    run.stderr,
    [
      'src/domain/stars.ts:1: a comment names how the code was built (issue/helper numbers): say what the product does',
      'src/web/assets/10-app.css:2: a comment names how the code was built (issue/helper numbers): say what the product does',
      'check-layers: 2 problem(s) in 8 modules',
      '',
    ].join('\n'),
  );
  assert.equal(run.status, 1);
});

test("the project's own src/ keeps the layers", () => {
  const run = spawnSync(process.execPath, [CHECK], { encoding: 'utf8' });
  assert.equal(run.stderr, '');
  assert.match(run.stdout, /^check-layers: \d+ modules, layers kept, no runtime cycles, no wire bodies built in src\/domain\n$/);
  assert.equal(run.status, 0);
});
