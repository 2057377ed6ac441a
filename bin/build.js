#!/usr/bin/env node
// `npm run build`, and `prepare` (run by `npm ci`, `npm install` and npx): compiles src/ to dist/ with tsc
// (tsconfig.build.json), copies what is not TypeScript (web assets, the language data, the highlighting
// worker) and writes dist/build.json, which bin/hearth.js compares with src/ to know dist/ is current.
// `--if-stale` (prepare) builds nothing when dist/ is current already: a reinstall, or npx, does not spend a
// minute rebuilding — nor remove dist/ under a server running from it.
// Without TypeScript (`npm ci --omit=dev`) it builds nothing and says so: bin/hearth.js then runs the
// sources through tsx, a dependency.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentBuild, sourceState } from './source-state.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
const DIST = path.join(ROOT, 'dist');

if (process.argv.includes('--if-stale')) {
  const built = currentBuild(ROOT);
  if (built) {
    process.stderr.write(`hearth build: dist/ is current (built ${built.builtAt ?? 'earlier'} from ${built.files} files under src/): nothing to do\n`);
    process.exit(0);
  }
}

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  process.stderr.write('hearth build: TypeScript is not installed (npm ci --omit=dev?): no dist/, `npm start` runs the sources through tsx\n');
  process.exit(0);
}

// the state of src/ before compiling: a file changed while tsc runs makes dist/ stale, never wrongly current
const state = sourceState(SRC);
const started = Date.now();
fs.rmSync(DIST, { recursive: true, force: true });
const code = await new Promise((resolve) => {
  const child = spawn(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit', cwd: ROOT });
  child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
});
if (code !== 0) {
  fs.rmSync(DIST, { recursive: true, force: true });
  process.stderr.write('hearth build: tsc failed, no dist/\n');
  process.exit(code);
}

/** Every file under src/ that tsc does not emit, copied to the same place under dist/. */
function copyOthers(rel) {
  for (const e of fs.readdirSync(path.join(SRC, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) copyOthers(r);
    else if (!/\.tsx?$/.test(e.name)) {
      fs.mkdirSync(path.join(DIST, rel), { recursive: true });
      fs.copyFileSync(path.join(SRC, r), path.join(DIST, r));
    }
  }
}
copyOthers('');
fs.writeFileSync(path.join(DIST, 'build.json'), `${JSON.stringify({ ...state, builtAt: new Date().toISOString() })}\n`);
process.stderr.write(`hearth build: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
