import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../src/formats/registry.ts';

const csv = getFormat('csv')!;

test('a short record is extended up to the cells written; the fuzzy column follows the state', () => {
  const src = 'source,target,fuzzy\nHello\nWorld,Svět,True\n';
  const out = csv.write(Buffer.from(src), [
    { id: 'Hello', target: ['Ahoj'], state: 10 },
    { id: 'World', target: ['Svět!'], state: 20 },
  ]);
  assert.equal(out.toString(), 'source,target,fuzzy\nHello,"Ahoj","True"\nWorld,"Svět!","False"\n');
});

test('the delimiter is found from the header; a template makes a two-column file context,target', () => {
  const src = Buffer.from('context;target\nk;v\n');
  assert.deepEqual(
    csv.parse(src).units.map((u) => [u.id, u.source[0], u.target[0]]),
    [['k', 'v', 'v']],
  );
  assert.equal(csv.write(src, [{ id: 'k', target: ['a; b'], state: 20 }]).toString(), 'context;target\nk;"a; b"\n');
  const headerless = Buffer.from('k,v\n');
  assert.deepEqual(
    csv.parse(headerless).units.map((u) => [u.id, u.source[0]]),
    [['k', 'k']],
  );
  assert.deepEqual(
    csv.parse(headerless, { template: headerless }).units.map((u) => [u.id, u.source[0]]),
    [['k', 'v']],
  );
});

test('a file without a header must have two or three columns', () => {
  assert.throws(() => csv.parse(Buffer.from('a,b,c,d\n')), /2 or 3 columns/);
});
