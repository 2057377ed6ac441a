import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countWords, countWordsIn, isUnusedString } from '../../../src/domain/translation/units/words.ts';

test('countWords: whitespace separated words, like Python str.split()', () => {
  assert.equal(countWords(''), 0);
  assert.equal(countWords('   '), 0);
  assert.equal(countWords('Hello'), 1);
  assert.equal(countWords('Hello, world!'), 2);
  assert.equal(countWords('  Orangutan has %d banana.\n'), 4);
  assert.equal(countWords('tab\tseparated\nlines\r\nand\u00a0nbsp'), 5);
  assert.equal(countWords('a\u3000b\u2009c'), 3); // ideographic and thin spaces are whitespace
  assert.equal(countWords('word\u200bword'), 1); // zero-width space is not
  assert.equal(countWordsIn('x\x1fy\x1cz'), 3); // Python treats U+001C..U+001F as whitespace
});

test('countWords counts every plural form, skipping "<unused singular" forms', () => {
  assert.equal(countWords('%d file\x1e%d files'), 4);
  assert.equal(countWords(['One apple', 'Many red apples']), 5);
  assert.equal(countWords('<unused singular (hash=abc)>\x1e%d files'), 2);
  assert.equal(isUnusedString('<unused singular'), true);
  assert.equal(isUnusedString('unused singular'), false);
});
