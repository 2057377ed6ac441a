// The references found in text (GitLab's patterns): each kind's syntax, the project before the sigil,
// what is not a reference, and Banzai's order when candidates overlap.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scanReferences } from '../../../src/domain/markdown/reference-scan.ts';

const scan = (text: string, projectContext = true) =>
  scanReferences(text, { projectContext }).map((r) => [r.kind, r.text, r.project, r.number ?? r.name] as const);

test('each syntax', () => {
  assert.deepEqual(scan('#12 grp/proj#3 proj#4 !5 other!6 ~bug ~"two words" ~7 ~2fa ~scoped::value %v1.0 %"Big one" %8 @alice @grp/sub'), [
    ['issue', '#12', null, 12],
    ['issue', 'grp/proj#3', 'grp/proj', 3],
    ['issue', 'proj#4', 'proj', 4],
    ['merge_request', '!5', null, 5],
    ['merge_request', 'other!6', 'other', 6],
    ['label', '~bug', null, 'bug'],
    ['label', '~"two words"', null, 'two words'],
    ['label', '~7', null, 7],
    ['label', '~2fa', null, '2fa'],
    ['label', '~scoped::value', null, 'scoped::value'],
    ['milestone', '%v1.0', null, 'v1.0'],
    ['milestone', '%"Big one"', null, 'Big one'],
    ['milestone', '%8', null, 8],
    ['user', '@alice', null, 'alice'],
    ['user', '@grp/sub', null, 'grp/sub'],
  ]);
});

test('commits: 7 to 40 hex digits as a whole word, a project before `@`', () => {
  assert.deepEqual(scan('a1b2c3d grp/proj@A1B2C3D4E5 proj@1234567 abc123 a1b2c3dx 1234567-'), [
    ['commit', 'a1b2c3d', null, 'a1b2c3d'],
    ['commit', 'grp/proj@A1B2C3D4E5', 'grp/proj', 'a1b2c3d4e5'],
    ['commit', 'proj@1234567', 'proj', '1234567'],
    ['commit', '1234567', null, '1234567'],
  ]);
  // an issue's number is the issue's; `@` with a hex name is a mention first
  assert.deepEqual(scan('#12345678 @abcdef12'), [
    ['issue', '#12345678', null, 12345678],
    ['user', '@abcdef12', null, 'abcdef12'],
  ]);
  assert.equal(scan(Array.from({ length: 1500 }, (_, i) => (0xa000000 + i).toString(16)).join(' ')).length, 1000);
});

test('what is not a reference', () => {
  // an address is not a mention; a path ending in .git is not a project; a label does not end in . or ?
  assert.deepEqual(scan('mail me@example.com'), []);
  assert.deepEqual(scan('foo.git#1'), [['issue', '#1', null, 1]]);
  assert.deepEqual(scan('~bug. ~why?'), [
    ['label', '~bug', null, 'bug'],
    ['label', '~why', null, 'why'],
  ]);
  assert.deepEqual(scan('#1x #0 !0'), []);
  // an iid past the id range is no issue (the digits may still name a commit, as in GitLab)
  assert.deepEqual(scan('#99999999999 !99999999999'), [
    ['commit', '99999999999', null, '99999999999'],
    ['commit', '99999999999', null, '99999999999'],
  ]);
  // without a project context only users and groups
  assert.deepEqual(scan('#1 !2 ~a %b @c', false), [['user', '@c', null, 'c']]);
});

test('Banzai’s order: a user mention first, then issues, merge requests, labels and milestones', () => {
  // the mention claims `@grp/proj`; the issue after it is the context project's
  assert.deepEqual(scan('@grp/proj#1'), [
    ['user', '@grp/proj', null, 'grp/proj'],
    ['issue', '#1', null, 1],
  ]);
  // the issue inside the quotes is linked before the milestone filter runs
  assert.deepEqual(scan('%"a #1 b"'), [['issue', '#1', null, 1]]);
});

test('a long run of path characters costs no more than its length', () => {
  const text = `${'a-'.repeat(50_000)}#1 `.repeat(4);
  const started = process.hrtime.bigint();
  assert.equal(scan(text).length, 4);
  assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 2000);
});
