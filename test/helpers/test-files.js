// The test files for `npm test`, in the order node:test should start them, grouped into processes.
// - Order: node:test starts files a few at a time, so a long file started last would run alone at the end while
//   the other slots sit idle. The files below led the per-file times that `npm test` prints (durations-reporter.js)
//   on a quiet 2-core machine: they start first, two to a process, in this order. A file that grows long belongs
//   here (the order only changes when files start, never what runs). node:test sorts the paths it is given, so
//   every group is started through an entry module whose name carries its place (001-…, 002-…).
// - Shards: each entry node:test starts is a process that loads tsx and the whole app before its first test
//   (about 5 s of CPU: with a process per file, a third of the suite's CPU). The other files are grouped, at most
//   SHARD_SIZE to a process, into shards of about equal weight (lines of test code), heaviest first; one process
//   runs the tests of its files one after another, as it runs the tests of one file. Every test still builds its
//   own app on its own database; the reporters still name each test's own file. A file with top-level hooks
//   (`before`, `after` … outside any test or suite: they belong to the process's root test and would run around
//   every file of a shard) keeps a process of its own; a shared fixture goes in a `describe` with its hooks.
//   HEARTH_TEST_SHARD_SIZE=1 gives every file its own process again (to rule sharing out when a test misbehaves).
// - HEARTH_TEST_DATABASE_ONLY=1 (the PostgreSQL pass of .ci/run): only the files whose tests can reach the test
//   database — those that name DATABASE_URL_TEST or import, through the test helpers, a module that does (build-app.ts).
//   The others (formats, the command line and the compiled build, which start their servers on SQLite whatever the
//   pass) would run the same code a second time; the SQLite pass runs every file.
// Plain JavaScript: the test script runs it with node before tsx is involved; the entry modules are written to a
// fresh directory under the system's temporary directory on each run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const LONGEST_FIRST = [
  'test/api/fuzz.test.ts',
  'test/api/platform/repository/changelog.test.ts',
  'test/api/platform/project-import.test.ts',
  'test/cli/cli.test.ts',
  'test/api/platform/relation-imports.test.ts',
  'test/api/platform/merge-requests-merge.test.ts',
  'test/web/repository.test.ts',
  'test/api/platform/repository/archive.test.ts',
  'test/api/platform/merge-requests.test.ts',
  'test/api/platform/repository/files.test.ts',
  'test/api/platform/import-export-tree.test.ts',
  'test/web/translation-pages.test.ts',
  'test/backup/restore-lock.test.ts',
  'test/web/settings.test.ts',
  'test/git/object-checks.test.ts',
  'test/cli/ci-config-limits.test.ts',
  'test/git/smart-http.test.ts',
  'test/api/platform/repository/branches.test.ts',
  'test/cli/runner-cancel.test.ts',
  'test/hooks/burst.test.ts',
  'test/web/merge-requests.test.ts',
  'test/api/platform/repository/commit-actions.test.ts',
  'test/cli/shutdown.test.ts',
  'test/backup/backup.test.ts',
  'test/api/translation/repository-ops.test.ts',
  'test/api/platform/repository/compare.test.ts',
  'test/api/translation/units-regex-limit.test.ts',
  'test/api/platform/forks.test.ts',
  'test/api/translation/follow.test.ts',
  'test/api/platform/repository/tree.test.ts',
  'test/ssh/git-ssh.test.ts',
  'test/api/client-mistakes.test.ts',
  'test/web/dashboard.test.ts',
  'test/hooks/web-hook-deliveries.test.ts',
];

/** @param {string} dir @returns {string[]} */
function find(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.posix.join(dir, e.name);
    if (e.isDirectory()) return find(p);
    return e.isFile() && e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const SHARD_SIZE = Math.max(1, Number(process.env.HEARTH_TEST_SHARD_SIZE ?? 12) || 12);
const TOP_LEVEL_HOOK = /^(before|after|beforeEach|afterEach)\(/m;

const DATABASE_ONLY = process.env.HEARTH_TEST_DATABASE_ONLY === '1';
const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * Whether a test module can reach the test database: it names DATABASE_URL_TEST, or imports (relatively, outside
 * src/, which never reads that variable) a module that does.
 * @param {string} file @param {Map<string, boolean>} seen @returns {boolean}
 */
function reachesTestDatabase(file, seen = new Map()) {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false); // an import cycle adds nothing
  const text = fs.readFileSync(file, 'utf8');
  let found = text.includes('DATABASE_URL_TEST');
  for (const m of found ? [] : text.matchAll(IMPORT)) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]));
    if (target.startsWith('src/') || !fs.existsSync(target)) continue;
    if (reachesTestDatabase(target, seen)) {
      found = true;
      break;
    }
  }
  seen.set(file, found);
  return found;
}

const all = find('test')
  .sort()
  .filter((f) => !DATABASE_ONLY || reachesTestDatabase(f));
const present = new Set(all);
const first = LONGEST_FIRST.filter((f) => present.has(f));
const rest = all.filter((f) => !first.includes(f));
const alone = rest.filter((f) => SHARD_SIZE === 1 || TOP_LEVEL_HOOK.test(fs.readFileSync(f, 'utf8')));
const grouped = rest.filter((f) => !alone.includes(f));
// the longest files two to a process, in their order; the others in shards of about equal weight, heaviest first
const groups = [...chunks(first, Math.min(2, SHARD_SIZE)), ...balanced(grouped, SHARD_SIZE), ...alone.map((f) => [f])];
process.stdout.write(entries(groups).join('\n') + '\n');

/** @param {string[]} files @param {number} size @returns {string[][]} */
function chunks(files, size) {
  const out = [];
  for (let i = 0; i < files.length; i += size) out.push(files.slice(i, i + size));
  return out;
}

/**
 * Files in shards of at most `size`, their weights (lines: the tests' code) spread evenly: each file,
 * heaviest first, joins the lightest shard with room. The shards come heaviest first, so that none of the
 * heavy ones starts last; each shard keeps its files in path order.
 * @param {string[]} files @param {number} size @returns {string[][]}
 */
function balanced(files, size) {
  const weight = (f) => fs.readFileSync(f, 'utf8').split('\n').length;
  const shards = Array.from({ length: Math.ceil(files.length / size) }, () => ({ files: [], weight: 0 }));
  for (const f of [...files].map((f) => ({ f, w: weight(f) })).sort((a, b) => b.w - a.w || a.f.localeCompare(b.f))) {
    const shard = shards.filter((s) => s.files.length < size).reduce((a, b) => (b.weight < a.weight ? b : a));
    shard.files.push(f.f);
    shard.weight += f.w;
  }
  return shards.sort((a, b) => b.weight - a.weight).map((s) => s.files.sort());
}

/**
 * One entry module per group, importing test-runner-hook.mjs and then the group's files in order. node:test sorts the files it is given
 * before it starts them, so the entries' names carry the order: 001-…, 002-…
 * @param {string[][]} groups @returns {string[]}
 */
function entries(groups) {
  sweepOldEntries();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-test-entries-'));
  return groups.map((files, i) => {
    const name = files.length === 1 ? path.basename(files[0], '.test.ts') : `shard-of-${files.length}`;
    const file = path.join(dir, `${String(i + 1).padStart(3, '0')}-${name}.test.mjs`);
    // dynamic imports, one after another: a static `import 'node:test'` in a test file would load node:test while the
    // modules are linked, before the hook module's code has run
    const imports = ['test/helpers/test-runner-hook.mjs', ...files].map((f) => `await import(${JSON.stringify(pathToFileURL(path.resolve(f)).href)});\n`);
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
