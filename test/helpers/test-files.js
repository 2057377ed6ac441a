// The test files for `npm test`, the longest first: node:test starts files in the order given, a few at a time, so a
// long file started last would run alone at the end while the other slots sit idle. The files below led the
// per-file times that `npm test` prints (durations-reporter.js) on the CI machine; the rest follow in path order.
// A file that grows long belongs here (the order only changes when files start, never what runs).
// Plain JavaScript: the test script runs it with node before tsx is involved.
import fs from 'node:fs';
import path from 'node:path';

const LONGEST_FIRST = [
  'test/api/fuzz.test.ts',
  'test/backup/backup.test.ts',
  'test/ssh/git-ssh.test.ts',
  'test/api/platform/import-export-tree.test.ts',
  'test/cli/cli.test.ts',
  'test/backup/restore-lock.test.ts',
  'test/cli/shutdown.test.ts',
  'test/cli/ci-config-limits.test.ts',
  'test/api/platform/merge-requests-merge.test.ts',
  'test/api/platform/repository/files.test.ts',
  'test/api/platform/repository/tree.test.ts',
  'test/api/platform/members-write.test.ts',
  'test/api/platform/merge-requests.test.ts',
  'test/web/repository.test.ts',
  'test/api/platform/project-export.test.ts',
  'test/api/platform/merge-requests-list-filters.test.ts',
  'test/api/platform/repository/commits.test.ts',
  'test/api/platform/project-import.test.ts',
  'test/api/platform/repository/archive.test.ts',
  'test/api/translation/repository-ops.test.ts',
  'test/api/platform/merge-requests-list.test.ts',
  'test/web/settings.test.ts',
  'test/cli/runner-cancel.test.ts',
  'test/cli/compiled.test.ts',
  'test/clients/prometheus.test.ts',
  'test/web/translation-pages.test.ts',
  'test/git/smart-http.test.ts',
  'test/hooks/push-crash.test.ts',
  'test/api/platform/repository/changelog.test.ts',
  'test/api/platform/repository/compare.test.ts',
  'test/api/platform/relation-imports.test.ts',
  'test/hooks/crash.test.ts',
  'test/api/translation/files-upload-big.test.ts',
  'test/hooks/merge-crash.test.ts',
  'test/api/platform/markdown-process.test.ts',
  'test/hooks/burst.test.ts',
];

/** @param {string} dir @returns {string[]} */
function find(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.posix.join(dir, e.name);
    if (e.isDirectory()) return find(p);
    return e.isFile() && e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const all = find('test').sort();
const present = new Set(all);
const first = LONGEST_FIRST.filter((f) => present.has(f));
const rest = all.filter((f) => !first.includes(f));
process.stdout.write([...first, ...rest].join('\n') + '\n');
