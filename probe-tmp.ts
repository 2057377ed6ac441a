import { getFormat } from './src/formats/registry.ts';
const w = (id: string, content: string | Buffer, updates: any[], opts: any = {}) => {
  try {
    const out = getFormat(id)!.write(Buffer.isBuffer(content) ? content : Buffer.from(content), updates, opts);
    console.log(`--- ${id}\n${out.toString()}`);
    return out;
  } catch (e) { console.log(`--- ${id} ERR ${(e as Error).message}`); }
};
const tplJson = Buffer.from('{"a": {"b": "B", "c": "C"}, "d": "D"}');
w('json-nested', '{}\n', [{ id: 'a.b', target: ['x'], state: 20 }, { id: 'd', target: ['y'], state: 20 }], { template: tplJson });
w('json-nested', '', [{ id: 'a.b', target: ['x'], state: 20 }], { template: tplJson });
w('json-nested', '{"d": "old"}', [{ id: 'a.b', target: ['x'], state: 20 }, { id: 'a.c', target: ['z'], state: 20 }], { template: tplJson });
w('json', '{"x": {}}', [{ id: 'd', target: ['y'], state: 20 }], { template: tplJson });
const v3 = Buffer.from('{\n  "m": "one",\n  "m_plural": "many"\n}\n');
w('i18next', '{\n  "other": "x"\n}\n', [{ id: 'm', target: ['a', 'b', 'c'], state: 20 }], { template: v3, language: 'cs' });
w('i18next', v3, [{ id: 'm', target: ['a', 'b', 'c'], state: 20 }], { language: 'cs' });
const tplA = Buffer.from('<resources>\n    <string name="a">A</string>\n    <plurals name="p"><item quantity="one">1</item><item quantity="other">n</item></plurals>\n</resources>\n');
w('aresource', '<?xml version="1.0" encoding="utf-8"?>\n<resources></resources>', [{ id: 'a', target: ['x'], state: 20 }, { id: 'p', target: ['1', '2', '3', '4'], state: 20 }], { template: tplA, language: 'cs' });
w('aresource', '<resources/>\n', [{ id: 'a', target: ["it's"], state: 20 }], { template: tplA });
w('aresource', tplA, [{ id: 'p', target: ['x'], state: 20 }], { language: 'ja' });
w('yaml', '{}\n', [{ id: 'a.b', target: ['x'], state: 20 }, { id: 'd', target: ['y: z'], state: 20 }], { template: Buffer.from('a:\n    b: B\nd: D\n') });
w('yaml', '', [{ id: 'a.b', target: ['x'], state: 20 }], { template: Buffer.from('a:\n    b: B\nd: D\n') });
w('yaml', 'a: {c: 1}\n', [{ id: 'a.b', target: ['x'], state: 20 }], { template: Buffer.from('a:\n    b: B\nd: D\n') });
w('yaml', 'a:\n  b: "x"\n  c: |\n    multi\n    line\n', [{ id: 'a.c', target: ['new'], state: 20 }]);
w('csv', 'source,target,fuzzy\nHello\nWorld,Svět\n', [{ id: 'Hello', target: ['Ahoj'], state: 10 }, { id: 'World', target: ['Svět'], state: 10 }]);
w('csv', 'context;target\nk;v\n', [{ id: 'k', target: ['new; value'], state: 20 }]);
const latin = Buffer.from('key=Caf\xe9\nother=x\n', 'latin1');
const out = w('properties', latin, [{ id: 'other', target: ['ü'], state: 20 }]);
console.log(out!.subarray(0, 9).equals(latin.subarray(0, 9)), getFormat('properties')!.parse(latin).units[0].target);
try { getFormat('json')!.parse(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])); } catch (e) { console.log('utf8 err', (e as Error).message); }
w('strings', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('"a" = "b";\n', 'utf16le').swap16()]), [{ id: 'a', target: ['ž'], state: 20 }]);
w('po', 'msgid "a"\nmsgstr "b"\n', [{ id: 'a', target: ['x', 'y'], state: 20 }]);
w('xliff', '<xliff><file><body><trans-unit id="1"><source>a</source><target/></trans-unit></body></file></xliff>', [{ id: '1', target: ['b'], state: 30 }]);
