// `prepare` (npm ci, npm install, npx) builds dist/ only when it is not current: a package whose dist/ was
// built after the last change under src/ is left alone (dist/build.json not rewritten), one changed since is
// built again. A small package of its own (bin/ of this one, one source file, TypeScript linked in), so the
// build takes a second and the real dist/ is never touched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT, tempDataDir } from '../helpers/process.ts';

const run = promisify(execFile);

test('prepare skips the build when dist/ is current, and builds when src/ changed', { timeout: 120_000 }, async (t) => {
  const dir = tempDataDir(t, 'hearth-prepare-');
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.build.json'),
    JSON.stringify({ compilerOptions: { outDir: 'dist', rootDir: 'src', module: 'nodenext', target: 'es2022', noCheck: true, types: [] }, include: ['src'] }),
  );
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'main.ts'), 'export const answer: number = 42;\n');
  const prepare = () => run('sh', ['-c', pkg.scripts.prepare], { cwd: dir });
  const buildJson = path.join(dir, 'dist', 'build.json');

  // no dist/: built
  const first = await prepare();
  assert.match(first.stderr, /^hearth build: dist\/ in \d+\.\d s\n$/);
  assert.equal(fs.readFileSync(path.join(dir, 'dist', 'main.js'), 'utf8').trim(), 'export const answer = 42;');
  const built = JSON.parse(fs.readFileSync(buildJson, 'utf8'));
  const mtime = fs.statSync(buildJson).mtimeMs;

  // current: nothing is done, dist/build.json is the same file, unchanged
  const again = await prepare();
  assert.equal(again.stderr, `hearth build: dist/ is current (built ${built.builtAt} from 1 files under src/): nothing to do\n`);
  assert.equal(fs.statSync(buildJson).mtimeMs, mtime);
  assert.deepEqual(JSON.parse(fs.readFileSync(buildJson, 'utf8')), built);

  // a source changed since: built again
  const later = new Date(Date.now() + 5000);
  fs.writeFileSync(path.join(dir, 'src', 'main.ts'), 'export const answer: number = 43;\n');
  fs.utimesSync(path.join(dir, 'src', 'main.ts'), later, later);
  const rebuilt = await prepare();
  assert.match(rebuilt.stderr, /^hearth build: dist\/ in \d+\.\d s\n$/);
  assert.equal(fs.readFileSync(path.join(dir, 'dist', 'main.js'), 'utf8').trim(), 'export const answer = 43;');
  assert.notEqual(fs.statSync(buildJson).mtimeMs, mtime);
});
