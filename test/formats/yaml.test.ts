import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../src/formats/registry.ts';

const yaml = getFormat('yaml')!;
const template = Buffer.from('app:\n    title: Title\n    help: Help\nbye: Bye\n');
const add = (src: string) =>
  yaml
    .write(
      Buffer.from(src),
      [
        { id: 'app.title', target: ['Titulek'], state: 20 },
        { id: 'bye', target: ['Na shledanou: brzy'], state: 20 },
      ],
      { template },
    )
    .toString();

test("new keys replace Weblate's {} or fill an empty file", () => {
  assert.equal(add('{}\n'), 'app:\n  title: Titulek\nbye: "Na shledanou: brzy"\n');
  assert.equal(add(''), 'app:\n  title: Titulek\nbye: "Na shledanou: brzy"\n');
});

test('new keys go into the deepest existing mapping, indented like its keys', () => {
  assert.equal(add('app:\n    help: Pomoc # comment\n'), 'app:\n    help: Pomoc # comment\n    title: Titulek\nbye: "Na shledanou: brzy"\n');
  assert.throws(() => add('app: {help: x}\n'), /flow mapping/);
});

test('scalars keep their quoting style when they can', () => {
  const src = 'a: plain\nb: \'single\'\nc: "double"\nd: |\n  block\ne:\n';
  const set = (id: string, value: string) => yaml.write(Buffer.from(src), [{ id, target: [value], state: 20 }]).toString();
  assert.equal(set('a', 'new'), src.replace('plain', 'new'));
  assert.equal(set('a', 'yes: no'), src.replace('plain', '"yes: no"'));
  assert.equal(set('a', 'true'), src.replace('plain', '"true"'));
  assert.equal(set('b', "it's"), src.replace("'single'", "'it''s'"));
  assert.equal(set('c', 'x'), src.replace('"double"', '"x"'));
  assert.equal(set('d', 'two\nlines'), src.replace('|\n  block\n', '"two\\nlines"\n'));
  assert.equal(set('e', 'filled'), src.replace('e:\n', 'e: filled\n'));
});

test('duplicate keys and several documents are FormatErrors', () => {
  assert.throws(() => yaml.parse(Buffer.from('a: 1\na: 2\n')), /invalid YAML/);
  assert.throws(() => yaml.parse(Buffer.from('a: x\n---\nb: y\n')), /invalid YAML/);
});
