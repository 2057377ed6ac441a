import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getFormat } from '../../src/formats/registry.ts';

const xliff = getFormat('xliff')!;
const doc = (unit: string) => `<xliff version="1.2"><file original="f"><body>${unit}</body></file></xliff>`;
const state = (unit: string) => xliff.parse(Buffer.from(doc(unit))).units[0].state;

test("states follow Weblate's XLIFF mapping", () => {
  const cases: [string, number][] = [
    ['<trans-unit id="1"><source>a</source></trans-unit>', 0],
    ['<trans-unit id="1"><source>a</source><target state="translated"></target></trans-unit>', 0],
    ['<trans-unit id="1"><source>a</source><target>b</target></trans-unit>', 20],
    ['<trans-unit id="1"><source>a</source><target state="new">b</target></trans-unit>', 10],
    ['<trans-unit id="1"><source>a</source><target state="needs-translation">b</target></trans-unit>', 10],
    ['<trans-unit id="1"><source>a</source><target state="needs-adaptation">b</target></trans-unit>', 10],
    ['<trans-unit id="1"><source>a</source><target state="needs-l10n">b</target></trans-unit>', 10],
    ['<trans-unit id="1"><source>a</source><target state="needs-review-translation">b</target></trans-unit>', 20],
    ['<trans-unit id="1"><source>a</source><target state="signed-off">b</target></trans-unit>', 20],
    ['<trans-unit id="1"><source>a</source><target state="final">b</target></trans-unit>', 30],
    ['<trans-unit id="1" approved="yes"><source>a</source><target>b</target></trans-unit>', 30],
    ['<trans-unit id="1" approved="yes"><source>a</source><target state="needs-translation">b</target></trans-unit>', 10],
    ['<trans-unit id="1" translate="no"><source>a</source><target>b</target></trans-unit>', 100],
  ];
  for (const [unit, expected] of cases) assert.equal(state(unit), expected, unit);
});

test('writing a state sets target state and approved as Weblate does; an emptied target is removed', () => {
  const src = doc('\n  <trans-unit id="1" approved="yes">\n    <source>a</source>\n    <target state="final">b</target>\n  </trans-unit>\n');
  const write = (target: string, s: 0 | 10 | 20 | 30) => xliff.write(Buffer.from(src), [{ id: 'f\u00041', target: [target], state: s }]).toString();
  assert.equal(write('c', 10), src.replace('approved="yes"', 'approved="no"').replace('state="final">b', 'state="needs-translation">c'));
  assert.equal(write('c', 30), src.replace('>b<', '>c<'));
  assert.equal(write('', 0), src.replace('approved="yes"', 'approved="no"').replace('\n    <target state="final">b</target>', ''));
  // a target the file lacks is added after the source, indented like it
  const bare = doc('\n  <trans-unit id="1">\n    <source>a</source>\n  </trans-unit>\n');
  assert.equal(
    xliff.write(Buffer.from(bare), [{ id: 'f\u00041', target: ['a &lt; <g id="1">b</g>'], state: 20 }]).toString(),
    bare.replace('</source>', '</source>\n    <target state="translated">a &lt; <g id="1">b</g></target>'),
  );
});

test('units without source are skipped; whitespace collapses unless xml:space="preserve"', () => {
  const units = xliff.parse(
    Buffer.from(
      doc(
        '<trans-unit id="e"><source/></trans-unit><trans-unit id="w"><source>  a\n  b </source></trans-unit><trans-unit id="p" xml:space="preserve"><source> a\n b</source></trans-unit>',
      ),
    ),
  ).units;
  assert.deepEqual(
    units.map((u) => [u.id, u.source[0]]),
    [
      ['f\u0004w', 'a b'],
      ['f\u0004p', ' a\n b'],
    ],
  );
});
