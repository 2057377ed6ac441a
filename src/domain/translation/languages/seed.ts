// The bundled language data (WeblateOrg/language-data, MIT, ./data) → languages, their plurals
// (default from languages.csv, gettext and CLDR variants where they differ) and aliases, once, on
// the first start.
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../../../db/connect.ts';
import { nowIso } from '../../../lib/time.ts';
import { pluralType } from './plural.ts';

const DATA = path.join(import.meta.dirname, 'data');
export const PLURAL_SOURCE = { default: 0, gettext: 1, manual: 2, cldrZero: 3, cldr: 4, android: 5, qt: 6 } as const;

/** Rows of a CSV file with a header (quoted fields may hold commas and doubled quotes). */
const csvCache = new Map<string, Record<string, string>[]>();

export function readCsv(file: string): Record<string, string>[] {
  let rows = csvCache.get(file);
  if (!rows) csvCache.set(file, (rows = parseCsv(file)));
  return rows;
}

function parseCsv(file: string): Record<string, string>[] {
  const lines = fs
    .readFileSync(path.join(DATA, file), 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const split = (line: string): string[] => {
    const out: string[] = [];
    let cur = '';
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const ch = line[i];
      if (quoted) {
        if (ch === '"' && line[i + 1] === '"') (cur += '"'), i++;
        else if (ch === '"') quoted = false;
        else cur += ch;
      } else if (ch === '"') quoted = true;
      else if (ch === ',') out.push(cur), (cur = '');
      else cur += ch;
    }
    out.push(cur);
    return out;
  };
  const [header, ...rows] = lines.map(split);
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''])));
}

export async function seedLanguages(db: Db): Promise<boolean> {
  const any = await db.kysely.selectFrom('languages').select('id').limit(1).executeTakeFirst();
  if (any) return false;
  const rtl = new Set(readCsv('rtl.csv').map((r) => r.code));
  const population = new Map(readCsv('population.csv').map((r) => [r.code, Number(r.population) || 0]));
  const variants = new Map<string, { source: number; number: number; formula: string }[]>();
  for (const [file, source] of [
    ['gettext.csv', PLURAL_SOURCE.gettext],
    ['cldr.csv', PLURAL_SOURCE.cldr],
  ] as const) {
    for (const r of readCsv(file)) variants.set(r.code, [...(variants.get(r.code) ?? []), { source, number: Number(r.nplurals), formula: r.formula }]);
  }
  const now = nowIso();
  await db.kysely.transaction().execute(async (trx) => {
    const languages = readCsv('languages.csv');
    for (let i = 0; i < languages.length; i += 200) {
      const batch = languages.slice(i, i + 200);
      const rows = await trx
        .insertInto('languages')
        .values(
          batch.map((l) => ({
            code: l.code,
            name: l.name,
            direction: rtl.has(l.code) ? 'rtl' : 'ltr',
            population: population.get(l.code) ?? 0,
            created_at: now,
          })),
        )
        .returning(['id', 'code'])
        .execute();
      const plurals = [];
      for (const row of rows) {
        const l = batch.find((b) => b.code === row.code)!;
        const number = Number(l.nplurals);
        plurals.push({ language_id: row.id, source: PLURAL_SOURCE.default, number, formula: l.formula, type: pluralType(l.formula, number, l.code) });
        for (const v of variants.get(l.code) ?? []) {
          if (v.number === number && v.formula.replace(/\s/g, '') === l.formula.replace(/\s/g, '')) continue;
          plurals.push({ language_id: row.id, source: v.source, number: v.number, formula: v.formula, type: pluralType(v.formula, v.number, l.code) });
        }
      }
      await trx.insertInto('language_plurals').values(plurals).execute();
    }
    const known = new Set(languages.map((l) => l.code));
    const aliases = readCsv('aliases.csv').filter((a) => known.has(a.target) && a.source && !known.has(a.source));
    const seen = new Set<string>();
    const unique = aliases.filter((a) => !seen.has(a.source) && seen.add(a.source));
    for (let i = 0; i < unique.length; i += 200) {
      await trx
        .insertInto('language_aliases')
        .values(unique.slice(i, i + 200).map((a) => ({ alias: a.source, code: a.target })))
        .execute();
    }
  });
  return true;
}
