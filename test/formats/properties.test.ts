import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../src/formats/registry.ts';

const props = getFormat('properties')!;

test('ISO-8859-1 bytes read as Java reads them and survive a write of another entry', () => {
  const src = Buffer.from('caf\xe9=Caf\xe9\nother=x\n', 'latin1');
  assert.deepEqual(
    props.parse(src).units.map((u) => [u.id, u.target[0]]),
    [
      ['café', 'Café'],
      ['other', 'x'],
    ],
  );
  const out = props.write(src, [{ id: 'other', target: ['ü €'], state: 20 }]);
  assert.ok(out.equals(Buffer.from('caf\xe9=Caf\xe9\nother=\\u00FC \\u20AC\n', 'latin1')));
});

test('a UTF-8 file is read as UTF-8', () => {
  assert.equal(props.parse(Buffer.from('k=Káva ☕\n')).units[0].target[0], 'Káva ☕');
});

test('separators, escapes and continuation lines', () => {
  const src = 'a=1\nb : 2\nc 3\nd\\:e\\=f = \\ lead\\\\\ncont = one \\\n   two\\\r\n   three\n';
  assert.deepEqual(
    props.parse(Buffer.from(src)).units.map((u) => [u.id, u.target[0]]),
    [
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
      ['d:e=f', ' lead\\'],
      ['cont', 'one twothree'],
    ],
  );
  // a continued value is replaced whole; the next line is untouched
  assert.equal(
    props.write(Buffer.from(src + 'z=9\n'), [{ id: 'cont', target: [' x\ty'], state: 20 }]).toString(),
    'a=1\nb : 2\nc 3\nd\\:e\\=f = \\ lead\\\\\ncont = \\ x\\ty\nz=9\n',
  );
});

test('new keys are appended with the separator of the template and escaped', () => {
  const template = Buffer.from('the\\ key : value\n');
  assert.equal(props.write(Buffer.from('a=b'), [{ id: 'the key', target: ['v=1'], state: 20 }], { template }).toString(), 'a=b\nthe\\ key : v=1\n');
});
