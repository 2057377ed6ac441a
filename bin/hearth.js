#!/usr/bin/env node
// Entry point. Runs the compiled server (dist/, made by `npm ci` or `npm run build`) with plain node when
// dist/ is current — built after the last change under src/ (dist/build.json) —; otherwise, and always
// with HEARTH_DEV=1, runs the TypeScript sources through tsx's loader. One process either way (no child),
// so the signals `npm start` or a supervisor sends reach the server itself.
import { fileURLToPath } from 'node:url';
import { currentBuild } from './source-state.js';

function compiledIsCurrent() {
  if (process.env.HEARTH_DEV === '1') return false;
  return currentBuild(fileURLToPath(new URL('..', import.meta.url))) !== null;
}

if (compiledIsCurrent()) {
  await import('../dist/main.js');
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write('hearth: dist/ is missing or older than src/, and tsx is not installed: run `npm run build`\n');
    process.exit(1);
  }
  register();
  await import('../src/main.ts');
}
