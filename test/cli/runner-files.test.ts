// The runner's file work without a server: artifact globs (paths, exclude, `**`), the zip it writes,
// and the extraction of a dependency's zip that refuses every way out of the directory (`..`,
// absolute names, links pointing out, writing through a link).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { collectArtifacts, entryTarget, extractZip, globToRegExp, UnsafeArchive, writeZip } from '../../src/runner/files.ts';
import { stepScript } from '../../src/runner/job.ts';
import { makeZip } from '../helpers/zip.ts';

function tmp(t: { after(fn: () => unknown): void }): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-runner-files-'));
  t.after(() => fs.rmSync(d, { recursive: true, force: true }));
  return fs.realpathSync(d);
}

test('artifact globs: doublestar syntax on relative paths', () => {
  const cases: [string, string, boolean][] = [
    ['out/', 'out', true],
    ['out', 'out', true],
    ['out/*.txt', 'out/a.txt', true],
    ['out/*.txt', 'out/sub/a.txt', false],
    ['out/**/*.txt', 'out/a.txt', true],
    ['out/**/*.txt', 'out/x/y/a.txt', true],
    ['**/*.log', 'a/b/c.log', true],
    ['**/*.log', 'c.log', true],
    ['./dist/app-?.js', 'dist/app-1.js', true],
    ['dist/app-[0-9].js', 'dist/app-x.js', false],
    ['dist/app-[!0-9].js', 'dist/app-x.js', true],
    ['a.b', 'aXb', false],
  ];
  for (const [pattern, p, expected] of cases) assert.equal(globToRegExp(pattern).test(p), expected, `${pattern} ~ ${p}`);
});

test('collect: a matched directory brings its content; exclude; paths out of the project are refused with a warning', (t) => {
  const root = tmp(t);
  for (const f of ['out/a.txt', 'out/sub/b.txt', 'out/sub/c.tmp', 'other/d.txt', 'e.log', '.git/config']) {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.writeFileSync(path.join(root, f), f);
  }
  const r = collectArtifacts(root, ['out/', '*.log', '../etc/passwd', '/etc/passwd', 'missing/'], ['out/**/*.tmp']);
  assert.deepEqual(r.files, ['e.log', 'out', 'out/a.txt', 'out/sub', 'out/sub/b.txt']);
  assert.deepEqual(r.warnings, [
    '../etc/passwd: artifact path is not a subpath of project directory',
    '/etc/passwd: artifact path is not a subpath of project directory',
    'missing/: no matching files. Ensure that the artifact path is relative to the working directory',
  ]);
  // a whole excluded directory
  assert.deepEqual(collectArtifacts(root, ['out'], ['out/sub']).files, ['out', 'out/a.txt']);
  // .git is never taken
  assert.deepEqual(collectArtifacts(root, ['**/config'], []).files, []);
});

test('zip round trip: files, directories, modes and symbolic links', async (t) => {
  const src = tmp(t);
  fs.mkdirSync(path.join(src, 'out/sub'), { recursive: true });
  fs.writeFileSync(path.join(src, 'out/a.txt'), 'A');
  fs.writeFileSync(path.join(src, 'out/run.sh'), '#!/bin/sh\n', { mode: 0o755 });
  fs.symlinkSync('a.txt', path.join(src, 'out/link'));
  const zipFile = path.join(tmp(t), 'a.zip');
  await writeZip(src, ['out', 'out/a.txt', 'out/link', 'out/run.sh', 'out/sub'], zipFile);
  const dest = tmp(t);
  assert.equal(await extractZip(zipFile, dest), 5);
  assert.equal(fs.readFileSync(path.join(dest, 'out/a.txt'), 'utf8'), 'A');
  assert.equal(fs.readlinkSync(path.join(dest, 'out/link')), 'a.txt');
  assert.equal(fs.statSync(path.join(dest, 'out/run.sh')).mode & 0o111, 0o111);
  assert.ok(fs.statSync(path.join(dest, 'out/sub')).isDirectory());
  // again over the same files: overwritten
  assert.equal(await extractZip(zipFile, dest), 5);
});

test('extraction refuses path traversal, absolute names, links out of the directory and writes through a link', async (t) => {
  const base = tmp(t);
  const outside = path.join(base, 'outside');
  fs.mkdirSync(outside);
  const cases: [string, { name: string; data?: string; mode?: number }[], RegExp][] = [
    ['dotdot', [{ name: '../outside/evil.txt', data: 'x' }], /would be outside/],
    ['nested dotdot', [{ name: 'a/../../outside/evil.txt', data: 'x' }], /would be outside/],
    ['absolute', [{ name: '/tmp/evil.txt', data: 'x' }], /would be outside/],
    ['backslash', [{ name: '..\\outside\\evil.txt', data: 'x' }], /would be outside/],
    ['absolute link', [{ name: 'l', data: '/etc', mode: 0o120777 }], /points outside/],
    ['relative link out', [{ name: 'l', data: '../outside', mode: 0o120777 }], /points outside/],
    [
      'through a link',
      [
        { name: 'sub/', mode: 0o040755 },
        { name: 'sl', data: 'sub', mode: 0o120777 },
        { name: 'sl/x.txt', data: 'x' },
      ],
      /sl: not a directory/,
    ],
  ];
  for (const [what, entries, message] of cases) {
    const dir = path.join(base, `dest-${what.replace(/ /g, '-')}`);
    fs.mkdirSync(dir);
    const zipFile = path.join(base, `${what.replace(/ /g, '-')}.zip`);
    fs.writeFileSync(zipFile, makeZip(entries));
    await assert.rejects(extractZip(zipFile, dir), (e: unknown) => e instanceof UnsafeArchive && message.test((e as Error).message), what);
  }
  assert.deepEqual(fs.readdirSync(outside), [], 'nothing landed outside');
  assert.equal(entryTarget('/r', 'a/./b'), '/r/a/b');
  assert.equal(entryTarget('/r', './'), null);
});

test('a step script echoes each command in green, then runs it; the first failure ends it', () => {
  assert.equal(
    stepScript(["echo 'hi'", 'ls\\n']),
    "set -eo pipefail\nset +o noclobber\necho $'\\x1b[32;1m$ echo \\'hi\\'\\x1b[0;m'\necho 'hi'\necho $'\\x1b[32;1m$ ls\\\\n\\x1b[0;m'\nls\\n\n".replace(
      /\\x1b/g,
      '\x1b',
    ),
  );
});
