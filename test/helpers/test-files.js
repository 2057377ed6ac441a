// The test files for `npm test`, in the order node:test should start them, most of them grouped into shards.
// - Order: node:test starts files a few at a time, so a long file started last would run alone at the end while
//   the other slots sit idle. The files below led the per-file times that `npm test` prints (durations-reporter.js)
//   on the CI machine: they start first. A file that grows long belongs here (the order only changes when files
//   start, never what runs). node:test sorts the paths it is given, so every group is started through an entry
//   module whose name carries its place (001-…, 002-…).
// - Shards: each file that node:test starts is a process that loads tsx and the whole app before its first test
//   (about 5 s of CPU, most of the suite's CPU when every file had its own). The other files are grouped,
//   SHARD_SIZE at a time in path order, into shard modules that import them: one process runs the tests of
//   several files one after another, as it runs the tests of one file. Every test still builds its own app on
//   its own database; the reporters still name each test's own file. A file with top-level hooks (`before`,
//   `after` … outside any test: they belong to the process's root test) keeps a process of its own.
//   HEARTH_TEST_SHARD_SIZE=1 gives every file its own process again (to rule sharing out when a test misbehaves).
// Plain JavaScript: the test script runs it with node before tsx is involved; the entry modules are written to a
// fresh directory under the system's temporary directory on each run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const LONGEST_FIRST = [
  'test/cli/cli.test.ts',
  'test/cli/compiled.test.ts',
  'test/backup/restore-lock.test.ts',
  'test/api/fuzz.test.ts',
  'test/cli/shutdown.test.ts',
  'test/cli/ci-config-limits.test.ts',
  'test/git/smart-http.test.ts',
  'test/backup/backup.test.ts',
  'test/cli/runner-cancel.test.ts',
  'test/api/platform/repository/files.test.ts',
  'test/api/translation/repository-ops.test.ts',
  'test/hooks/crash.test.ts',
  'test/api/platform/project-import.test.ts',
  'test/hooks/burst.test.ts',
  'test/api/platform/repository/tree.test.ts',
  'test/api/platform/repository/commits.test.ts',
  'test/hooks/merge-crash.test.ts',
  'test/api/translation/files-upload-big.test.ts',
  'test/hooks/push-crash.test.ts',
  'test/api/platform/repository/compare.test.ts',
  'test/web/merge-requests.test.ts',
  'test/api/platform/repository/archive.test.ts',
  'test/api/platform/merge-requests-merge.test.ts',
  'test/api/platform/repository/changelog.test.ts',
  'test/api/platform/relation-imports.test.ts',
  'test/web/repository.test.ts',
  'test/api/platform/repository/branches.test.ts',
  'test/api/platform/import-export-tree.test.ts',
  'test/api/platform/repository/commit-actions.test.ts',
  'test/api/platform/merge-requests.test.ts',
  'test/web/settings.test.ts',
  'test/ssh/git-ssh.test.ts',
  'test/web/translation-pages.test.ts',
  'test/git/object-checks.test.ts',
];

/** @param {string} dir @returns {string[]} */
function find(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.posix.join(dir, e.name);
    if (e.isDirectory()) return find(p);
    return e.isFile() && e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const SHARD_SIZE = Math.max(1, Number(process.env.HEARTH_TEST_SHARD_SIZE ?? 8) || 8);
const TOP_LEVEL_HOOK = /^(before|after|beforeEach|afterEach)\(/m;

const all = find('test').sort();
const present = new Set(all);
const first = LONGEST_FIRST.filter((f) => present.has(f));
const rest = all.filter((f) => !first.includes(f));
const alone = rest.filter((f) => SHARD_SIZE === 1 || TOP_LEVEL_HOOK.test(fs.readFileSync(f, 'utf8')));
const grouped = rest.filter((f) => !alone.includes(f));
const groups = [...first.map((f) => [f]), ...chunks(grouped, SHARD_SIZE), ...alone.map((f) => [f])];
process.stdout.write(entries(groups).join('\n') + '\n');

/** @param {string[]} files @param {number} size @returns {string[][]} */
function chunks(files, size) {
  const out = [];
  for (let i = 0; i < files.length; i += size) out.push(files.slice(i, i + size));
  return out;
}

/**
 * One entry module per group, importing the group's files in order. node:test sorts the files it is given
 * before it starts them, so the entries' names carry the order: 001-…, 002-…
 * @param {string[][]} groups @returns {string[]}
 */
function entries(groups) {
  sweepOldEntries();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-test-entries-'));
  return groups.map((files, i) => {
    const name = files.length === 1 ? path.basename(files[0], '.test.ts') : `shard-of-${files.length}`;
    const file = path.join(dir, `${String(i + 1).padStart(3, '0')}-${name}.test.mjs`);
    const imports = files.map((f) => `import ${JSON.stringify(pathToFileURL(path.resolve(f)).href)};\n`);
    fs.writeFileSync(file, `// ${files.join(', ')}\n${imports.join('')}`);
    return file;
  });
}

/** Entry directories of runs that started more than a day ago. */
function sweepOldEntries() {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of fs.readdirSync(os.tmpdir())) {
    if (!name.startsWith('hearth-test-entries-')) continue;
    const dir = path.join(os.tmpdir(), name);
    try {
      if (fs.statSync(dir).mtimeMs < dayAgo) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run swept it
    }
  }
}
