// Conversions of a translation's units into another file format (Weblate's weblate/formats/exporters.py,
// `?format=` of a file download): gettext PO and MO, XLIFF (with gettext plural groups, and plain 1.1),
// TBX, TMX, CSV, and for monolingual translations JSON (flat and nested), Android resources and iOS
// strings. Each builds a whole new file from the units (it does not patch one), as Weblate's do.
import { escapeAndroid } from './aresource.format.ts';
import { escapePo, renderField } from './support/po.ts';
import { pluralCategories, splitFlags } from './support/units.ts';
import { escapeAttr, escapeText, isXmlFragment } from './support/xml.ts';

export interface ExportUnit {
  /** plural forms */
  source: string[];
  target: string[];
  context: string;
  note: string;
  /** 'a.c:1, b.c:2' */
  location: string;
  flags: string;
  explanation: string;
  state: number;
  /** Weblate's checksum of the unit (an id where a format needs one and the unit has no context) */
  checksum: string;
}

export interface ExportMeta {
  project: { name: string; slug: string };
  component: { slug: string; fileFormat: string; monolingual: boolean };
  language: { code: string; name: string };
  sourceLanguage: string;
  plural: { number: number; formula: string };
  /** the translation's page (PO Language-Team) */
  url: string;
  now: Date;
}

export interface Exporter {
  name: string;
  extension: string;
  contentType: string;
  /** Weblate's `supports(translation)` */
  supports(meta: ExportMeta): boolean;
  serialize(meta: ExportMeta, units: ExportUnit[]): Buffer;
}

const always = () => true;
const monolingualOnly = (m: ExportMeta) => m.component.monolingual;
const FUZZY = (u: ExportUnit) => u.state >= 10 && u.state < 20;
const TRANSLATED = (u: ExportUnit) => u.state >= 20;
/** control characters other than tab and newlines cannot be written in XML (Weblate's _CHARMAP) */
const xmlSafe = (s: string) => s.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]/g, '');

function poDate(d: Date): string {
  return `${d.toISOString().slice(0, 16).replace('T', ' ')}+0000`;
}

// ---- gettext ------------------------------------------------------------------------------------

function poHeader(m: ExportMeta): [string, string][] {
  const now = poDate(m.now);
  return [
    ['Project-Id-Version', `${m.language.name} (${m.project.name})`],
    ['Report-Msgid-Bugs-To', ''],
    ['POT-Creation-Date', now],
    ['PO-Revision-Date', now],
    ['Last-Translator', 'Automatically generated'],
    ['Language-Team', `${m.language.name} <${m.url}>`],
    ['Language', m.language.code],
    ['MIME-Version', '1.0'],
    ['Content-Type', 'text/plain; charset=UTF-8'],
    ['Content-Transfer-Encoding', '8bit'],
    ['Plural-Forms', `nplurals=${m.plural.number}; plural=${m.plural.formula};`],
    ['X-Generator', 'Hearth'],
  ];
}

const po: Exporter = {
  name: 'po',
  extension: 'po',
  contentType: 'text/x-po',
  supports: always,
  serialize(m, units) {
    const nl = '\n';
    const blocks = [['msgid ""', 'msgstr ""', ...poHeader(m).map(([k, v]) => `"${escapePo(`${k}: ${v}\n`)}"`)].join(nl)];
    for (const u of units) {
      const lines: string[] = [];
      for (const note of [u.note, u.explanation].filter(Boolean)) for (const l of note.split('\n')) lines.push(`#. ${l}`.trimEnd());
      const locations = u.location.split(/,\s*|\s+/).filter(Boolean);
      if (locations.length) lines.push(`#: ${locations.join(' ')}`);
      const flags = [...(FUZZY(u) ? ['fuzzy'] : []), ...splitFlags(u.flags).filter((f) => f !== 'fuzzy')];
      if (flags.length) lines.push(`#, ${flags.join(', ')}`);
      if (u.context) lines.push(renderField('msgctxt', u.context, nl));
      lines.push(renderField('msgid', u.source[0] ?? '', nl));
      if (u.source.length > 1) {
        lines.push(renderField('msgid_plural', u.source[1], nl));
        const forms = u.target.length >= m.plural.number ? u.target : [...u.target, ...Array(m.plural.number - u.target.length).fill('')];
        for (const [i, t] of forms.entries()) lines.push(renderField(`msgstr[${i}]`, t, nl));
      } else lines.push(renderField('msgstr', u.target.join(''), nl));
      blocks.push(lines.join(nl));
    }
    return Buffer.from(blocks.join(nl + nl) + nl, 'utf8');
  },
};

/** GNU MO (little endian, no hash table): translated units only, sorted by their key. */
const mo: Exporter = {
  name: 'mo',
  extension: 'mo',
  contentType: 'application/x-gettext-catalog',
  supports: (m) => m.component.fileFormat === 'po' || m.component.fileFormat === 'po-mono',
  serialize(m, units) {
    const entries: [Buffer, Buffer][] = [
      [
        Buffer.alloc(0),
        Buffer.from(
          poHeader(m)
            .map(([k, v]) => `${k}: ${v}\n`)
            .join(''),
          'utf8',
        ),
      ],
    ];
    // a monolingual unit's key is its msgid (Weblate's MoExporter with use_context off)
    for (const u of units.filter(TRANSLATED)) {
      const source = m.component.monolingual ? [u.context] : u.source;
      const context = m.component.monolingual ? '' : u.context;
      const key = (context ? `${context}\u0004` : '') + source.join('\0');
      entries.push([Buffer.from(key, 'utf8'), Buffer.from(u.target.join('\0'), 'utf8')]);
    }
    entries.sort((a, b) => Buffer.compare(a[0], b[0]));
    const n = entries.length;
    const header = 28;
    let offset = header + 16 * n;
    const table = Buffer.alloc(16 * n);
    const data: Buffer[] = [];
    const place = (i: number, b: Buffer) => {
      table.writeUInt32LE(b.length, i * 8);
      table.writeUInt32LE(offset, i * 8 + 4);
      data.push(b, Buffer.alloc(1));
      offset += b.length + 1;
    };
    for (const [i, [k]] of entries.entries()) place(i, k);
    for (const [i, [, v]] of entries.entries()) place(n + i, v);
    const head = Buffer.alloc(header);
    head.writeUInt32LE(0x950412de, 0);
    head.writeUInt32LE(0, 4);
    head.writeUInt32LE(n, 8);
    head.writeUInt32LE(header, 12);
    head.writeUInt32LE(header + 8 * n, 16);
    head.writeUInt32LE(0, 20);
    head.writeUInt32LE(header + 16 * n, 24);
    return Buffer.concat([head, table, ...data]);
  },
};

// ---- XML formats ----------------------------------------------------------------------------------

const XML_DECL = '<?xml version="1.0" encoding="utf-8"?>\n';

/** A string as XLIFF content: a unit's XML markup is kept (Weblate's rich strings), anything else escaped. */
function xliffText(s: string): string {
  const v = xmlSafe(s);
  return v.includes('<') && isXmlFragment(v) ? v : escapeText(v);
}

function xliffExporter(name: 'xliff' | 'xliff11'): Exporter {
  return {
    name,
    extension: 'xlf',
    contentType: 'application/x-xliff+xml',
    supports: always,
    serialize(m, units) {
      const out: string[] = [
        XML_DECL,
        '<xliff xmlns="urn:oasis:names:tc:xliff:document:1.1" version="1.1">\n',
        `  <file original="${escapeAttr(`${m.project.slug}-${m.component.slug}-${m.language.code}`)}" source-language="${escapeAttr(m.sourceLanguage)}" target-language="${escapeAttr(m.language.code)}" datatype="${name === 'xliff' ? 'po' : 'plaintext'}">\n`,
        '    <body>\n',
      ];
      for (const u of units) {
        const id = u.context || u.checksum;
        const attrs = (extra: string) =>
          `${extra}${u.state === 30 ? ' approved="yes"' : ''}${splitFlags(u.flags).length ? ` weblate-flags="${escapeAttr(u.flags)}"` : ''}`;
        const state = FUZZY(u) ? 'needs-translation' : u.state === 30 ? 'final' : 'translated';
        const body = (source: string, target: string, indent: string) => {
          const lines = [`${indent}  <source>${xliffText(source)}</source>`];
          if (target !== '') lines.push(`${indent}  <target state="${state}">${xliffText(target)}</target>`);
          for (const note of [u.note, u.explanation].filter(Boolean)) lines.push(`${indent}  <note from="developer">${escapeText(xmlSafe(note))}</note>`);
          for (const loc of u.location.split(/,\s*/).filter(Boolean)) {
            const [file, line] = loc.split(/:(?=\d+$)/);
            lines.push(
              `${indent}  <context-group name="po-reference" purpose="location"><context context-type="sourcefile">${escapeText(file)}</context>${line ? `<context context-type="linenumber">${line}</context>` : ''}</context-group>`,
            );
          }
          return lines.join('\n');
        };
        if (u.source.length > 1) {
          // translate-toolkit's PoXliff plural group
          out.push(`      <group id="${escapeAttr(id)}" restype="x-gettext-plurals">\n`);
          const forms = Math.max(u.source.length, u.target.length);
          for (let i = 0; i < forms; i++) {
            out.push(`        <trans-unit id="${escapeAttr(`${id}[${i}]`)}"${attrs('')}>\n`);
            out.push(`${body(u.source[Math.min(i, u.source.length - 1)], u.target[i] ?? '', '        ')}\n`);
            out.push('        </trans-unit>\n');
          }
          out.push('      </group>\n');
        } else {
          out.push(`      <trans-unit id="${escapeAttr(id)}"${attrs(u.context ? ` resname="${escapeAttr(u.context)}"` : '')}>\n`);
          out.push(`${body(u.source[0] ?? '', u.target[0] ?? '', '      ')}\n`);
          out.push('      </trans-unit>\n');
        }
      }
      out.push('    </body>\n', '  </file>\n', '</xliff>\n');
      return Buffer.from(out.join(''), 'utf8');
    },
  };
}

const tmx: Exporter = {
  name: 'tmx',
  extension: 'tmx',
  contentType: 'application/x-tmx',
  supports: always,
  serialize(m, units) {
    const out = [
      XML_DECL,
      '<tmx version="1.4">\n',
      `  <header creationtool="Hearth" creationtoolversion="1" segtype="sentence" o-tmf="UTF-8" adminlang="en" srclang="${escapeAttr(m.sourceLanguage)}" datatype="PlainText"/>\n`,
      '  <body>\n',
    ];
    for (const u of units.filter(TRANSLATED)) {
      out.push('    <tu>\n');
      if (u.context) out.push(`      <prop type="x-context">${escapeText(xmlSafe(u.context))}</prop>\n`);
      if (u.note) out.push(`      <note>${escapeText(xmlSafe(u.note))}</note>\n`);
      out.push(`      <tuv xml:lang="${escapeAttr(m.sourceLanguage)}"><seg>${escapeText(xmlSafe(u.source[0] ?? ''))}</seg></tuv>\n`);
      out.push(`      <tuv xml:lang="${escapeAttr(m.language.code)}"><seg>${escapeText(xmlSafe(u.target[0] ?? ''))}</seg></tuv>\n`);
      out.push('    </tu>\n');
    }
    out.push('  </body>\n', '</tmx>\n');
    return Buffer.from(out.join(''), 'utf8');
  },
};

const tbx: Exporter = {
  name: 'tbx',
  extension: 'tbx',
  contentType: 'application/x-tbx',
  supports: always,
  serialize(m, units) {
    const out = [
      XML_DECL,
      '<!DOCTYPE martif PUBLIC "ISO 12200:1999A//DTD MARTIF core (DXFcdV04)//EN" "TBXcdv04.dtd">\n',
      `<martif type="TBX" xml:lang="${escapeAttr(m.sourceLanguage)}">\n`,
      '  <martifHeader><fileDesc><sourceDesc><p>Hearth</p></sourceDesc></fileDesc></martifHeader>\n',
      '  <text>\n',
      '    <body>\n',
    ];
    for (const u of units) {
      out.push(`      <termEntry${u.context ? ` id="${escapeAttr(u.context)}"` : ''}>\n`);
      if (u.note) out.push(`        <descrip type="definition">${escapeText(xmlSafe(u.note))}</descrip>\n`);
      out.push(`        <langSet xml:lang="${escapeAttr(m.sourceLanguage)}"><tig><term>${escapeText(xmlSafe(u.source[0] ?? ''))}</term></tig></langSet>\n`);
      if (u.target.some((t) => t !== ''))
        out.push(`        <langSet xml:lang="${escapeAttr(m.language.code)}"><tig><term>${escapeText(xmlSafe(u.target[0] ?? ''))}</term></tig></langSet>\n`);
      out.push('      </termEntry>\n');
    }
    out.push('    </body>\n', '  </text>\n', '</martif>\n');
    return Buffer.from(out.join(''), 'utf8');
  },
};

// ---- CSV --------------------------------------------------------------------------------------------

/** Weblate's CSVExporter.string_filter: a leading formula character is guarded as '…' (Excel). */
function excelSafe(s: string): string {
  return s && '=+-@|%'.includes(s[0]) ? `'${s.replace(/\|/g, '\\|')}'` : s;
}

const csv: Exporter = {
  name: 'csv',
  extension: 'csv',
  contentType: 'text/csv',
  supports: always,
  serialize(m, units) {
    const fields = ['location', 'source', 'target', 'id', 'fuzzy', 'context', 'translator_comments', 'developer_comments'];
    const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
    const rows = [fields.map(q).join(',')];
    for (const u of units) {
      const row: Record<string, string> = {
        location: u.location,
        source: excelSafe(u.source[0] ?? ''),
        target: excelSafe(u.target[0] ?? ''),
        id: m.component.monolingual ? excelSafe(u.context) : '',
        fuzzy: FUZZY(u) ? 'True' : 'False',
        context: excelSafe(u.context),
        translator_comments: '',
        developer_comments: excelSafe([u.note, u.explanation].filter(Boolean).join('\n')),
      };
      rows.push(fields.map((f) => q(row[f])).join(','));
    }
    return Buffer.from(rows.join('\r\n') + '\r\n', 'utf8');
  },
};

// ---- monolingual key/value formats ----------------------------------------------------------------

/** JSON values: a plural keeps its first form (translate-toolkit's str() of a multistring). */
function jsonExporter(name: 'json' | 'json-nested'): Exporter {
  return {
    name,
    extension: 'json',
    contentType: 'application/json',
    supports: monolingualOnly,
    serialize(_m, units) {
      const root: Record<string, unknown> = {};
      for (const u of units) {
        const value = u.target[0] ?? '';
        if (name === 'json') {
          root[u.context] = value;
          continue;
        }
        const path = u.context.split('.');
        let obj = root;
        for (const k of path.slice(0, -1)) {
          const next = obj[k];
          if (typeof next !== 'object' || next === null) obj[k] = {};
          obj = obj[k] as Record<string, unknown>;
        }
        obj[path[path.length - 1]] = value;
      }
      return Buffer.from(JSON.stringify(root, null, 4) + '\n', 'utf8');
    },
  };
}

const aresource: Exporter = {
  name: 'aresource',
  extension: 'xml',
  contentType: 'application/xml',
  supports: monolingualOnly,
  serialize(m, units) {
    const value = (s: string) => {
      const v = xmlSafe(s);
      if (v.includes('<') && isXmlFragment(v)) return v.replace(/([^<]+)|(<[^>]*>)/g, (all, run?: string) => (run ? escapeAndroid(run, false) : all));
      return escapeText(escapeAndroid(v, true));
    };
    const out = [XML_DECL, '<resources>\n'];
    const categories = pluralCategories(m.language.code);
    for (const u of units) {
      const name = escapeAttr(u.context);
      if (u.note) out.push(`    <!-- ${xmlSafe(u.note).replace(/--/g, '- -')} -->\n`);
      if (u.source.length > 1 && categories && categories.length === u.target.length) {
        out.push(`    <plurals name="${name}">\n`);
        for (const [i, t] of u.target.entries()) out.push(`        <item quantity="${categories[i]}">${value(t)}</item>\n`);
        out.push('    </plurals>\n');
      } else out.push(`    <string name="${name}">${value(u.target[0] ?? '')}</string>\n`);
    }
    out.push('</resources>\n');
    return Buffer.from(out.join(''), 'utf8');
  },
};

/** iOS strings, written in UTF-8 (the Content-Type says so). */
const strings: Exporter = {
  name: 'strings',
  extension: 'strings',
  contentType: 'text/plain',
  supports: monolingualOnly,
  serialize(_m, units) {
    const quote = (s: string) => `"${s.replace(/[\\"\n\t\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r' })[c]!)}"`;
    const out: string[] = [];
    for (const u of units) {
      if (u.note) out.push(`/* ${u.note.replace(/\*\//g, '* /')} */\n`);
      out.push(`${quote(u.context)} = ${quote(u.target[0] ?? '')};\n`);
    }
    return Buffer.from(out.join(''), 'utf8');
  },
};

export const EXPORTERS: ReadonlyMap<string, Exporter> = new Map(
  [po, mo, xliffExporter('xliff'), xliffExporter('xliff11'), tbx, tmx, csv, jsonExporter('json'), jsonExporter('json-nested'), aresource, strings].map((e) => [
    e.name,
    e,
  ]),
);

export function getExporter(name: string): Exporter | undefined {
  return EXPORTERS.get(name);
}
