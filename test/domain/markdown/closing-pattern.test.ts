// The issue closing pattern (Gitlab::ClosingIssueExtractor) with GitLab's own examples
// (spec/lib/gitlab/closing_issue_extractor_spec.rb): every keyword with and without a colon, lists with
// commas and "and", several lines, cross-project references and links to issues of this instance.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closingIssueReferences, compileClosingPattern, DEFAULT_ISSUE_CLOSING_PATTERN } from '../../../src/domain/markdown/closing-pattern.ts';

const URL = 'http://hearth.test';
const opts = { pattern: compileClosingPattern(DEFAULT_ISSUE_CLOSING_PATTERN), externalUrl: URL };
const closes = (text: string, project = 'grp/proj') => closingIssueReferences(text, project, opts);
const ref = (iid: number, project = 'grp/proj') => ({ project, iid });

test('every keyword closes, with or without a colon, in any case GitLab allows', () => {
  const words = ['Closes', 'closes', 'Closed', 'closed', 'Closing', 'closing', 'Close', 'close'];
  words.push('Fixes', 'fixes', 'Fixed', 'fixed', 'Fixing', 'fixing', 'Fix', 'fix');
  words.push('Resolves', 'resolves', 'Resolved', 'resolved', 'Resolving', 'resolving', 'Resolve', 'resolve');
  words.push('Implement', 'Implements', 'Implemented', 'Implementing', 'implement', 'implements', 'implemented', 'implementing');
  for (const w of words) {
    assert.deepEqual(closes(`Awesome commit (${w} #1)`), [ref(1)], w);
    assert.deepEqual(closes(`${w}: #1`), [ref(1)], `${w}:`);
  }
  for (const text of ['suffix #1', 'prefix #1', 'Related to #1', 'CLOSES #1', 'Closes', 'Closes #', 'Closes #0']) assert.deepEqual(closes(text), [], text);
});

test('several references: commas, "and", Oxford commas, spaces, several lines', () => {
  assert.deepEqual(closes('Closes #1 and fix #2'), [ref(1), ref(2)]);
  assert.deepEqual(closes('Closes #1, closes #2'), [ref(1), ref(2)]);
  assert.deepEqual(closes('Closes #1, #2 and #3'), [ref(1), ref(2), ref(3)]);
  assert.deepEqual(closes('Closes #1, #2, and #3'), [ref(1), ref(2), ref(3)]);
  assert.deepEqual(closes('Closes #1 , #2 , and #3'), [ref(1), ref(2), ref(3)]);
  assert.deepEqual(closes('Closes #1 #2 #3'), [ref(1), ref(2), ref(3)]);
  assert.deepEqual(closes('Closes #1, #2 #3'), [ref(1), ref(2), ref(3)]);
  assert.deepEqual(closes('Awesome commit (closes #1)\nAlso fixes #2'), [ref(1), ref(2)]);
  assert.deepEqual(closes('Awesome commit (closes #1)\nAlso fixing issues #2, #3 and #4'), [ref(1), ref(2), ref(3), ref(4)]);
  // only what follows a keyword: #17 is mentioned, not closed; each issue once
  assert.deepEqual(closes('Fix #20, Fixes #21 and Closes #22. Related to #17 and fixes #18, #19 and #21.'), [ref(20), ref(21), ref(22), ref(18), ref(19)]);
});

test('cross-project references and links to issues of this instance', () => {
  assert.deepEqual(closes('Closes #1 and grp/other#2'), [ref(1), ref(2, 'grp/other')]);
  assert.deepEqual(closes('Closes other#2'), [ref(2, 'grp/other')]);
  assert.deepEqual(closes('Closes far/away/lib#9'), [ref(9, 'far/away/lib')]);
  assert.deepEqual(closes(`Closes ${URL}/grp/other/-/issues/2`), [ref(2, 'grp/other')]);
  assert.deepEqual(closes(`Closes ${URL}/grp/other/-/issues/2, #1 and ${URL}/grp/proj/-/issues/3`), [ref(2, 'grp/other'), ref(1), ref(3)]);
  assert.deepEqual(closes(`Closes ${URL}/grp/other/issues/2.`), [ref(2, 'grp/other')]);
  // another host's link is not an issue of ours
  assert.deepEqual(closes('Closes https://google.com/grp/other/-/issues/2 and #1'), [ref(1)]);
  // an external tracker's key matches the pattern but names no issue here
  assert.deepEqual(closes('Resolve JIRA-12'), []);
});

test('an instance pattern: Ruby forms rewritten, %{issue_ref} filled in, a bad pattern refused', () => {
  const own = { pattern: compileClosingPattern('\\A(?:[Dd]one) %{issue_ref}'), externalUrl: URL };
  assert.deepEqual(closingIssueReferences('Done #4', 'g/p', own), [ref(4, 'g/p')]);
  assert.deepEqual(closingIssueReferences('x\nDone #4', 'g/p', own), []);
  assert.throws(() => compileClosingPattern('(unclosed'));
});
