// Removing a string from a file: the entry's byte range (locate) cut out, with the separators next to it
// when the result still parses to every other unit unchanged.

import type { FileFormat, ParsedUnit, ParseOptions } from '../types.ts';

/**
 * The file without the entry `id` (its byte range from format.locate), or null when no cut gives a file
 * that parses to the same entries less that one. Separators next to the entry are tried too (a JSON
 * comma, a PO blank line).
 */
export function removeEntry(format: FileFormat, bytes: Buffer, id: string, opts: ParseOptions, before: ParsedUnit[]): Buffer | null {
  const range = format.locate?.(bytes, id, opts);
  if (!range) return null;
  const [s, e] = range;
  const b = bytes;
  const blank = (x: number) => x === 0x20 || x === 0x09;
  // the whole lines of the entry: back to its line's start, on over a trailing comma to its line's end
  let ls = s;
  while (ls > 0 && blank(b[ls - 1])) ls--;
  const lineStart = ls === 0 || b[ls - 1] === 0x0a ? ls : s;
  let le = e;
  while (le < b.length && (blank(b[le]) || b[le] === 0x2c || b[le] === 0x0d)) le++;
  const lineEnd = le < b.length && b[le] === 0x0a ? le + 1 : le === b.length ? le : e;
  // one blank line after (a PO separator)
  let after = lineEnd;
  while (after < b.length && (blank(b[after]) || b[after] === 0x0d)) after++;
  const withBlank = after < b.length && b[after] === 0x0a && after > lineEnd - 1 ? after + 1 : lineEnd;
  // a comma before the entry (the last member of a JSON object), with the blanks before it
  let pc = lineStart;
  while (pc > 0 && (blank(b[pc - 1]) || b[pc - 1] === 0x0a || b[pc - 1] === 0x0d)) pc--;
  const commaBefore = pc > 0 && b[pc - 1] === 0x2c ? pc - 1 : -1;
  const cuts: [number, number][] = [
    [lineStart, withBlank],
    [lineStart, lineEnd],
  ];
  if (commaBefore >= 0) cuts.push([commaBefore, lineEnd > e && b[lineEnd - 1] === 0x0a ? lineEnd - 1 : e], [commaBefore, e]);
  cuts.push([s, e]);
  const want = before.filter((u) => u.id !== id).map((u) => JSON.stringify([u.id, u.source, u.target, u.state]));
  for (const [from, to] of cuts) {
    if (from > s || to < e) continue;
    const out = Buffer.concat([b.subarray(0, from), b.subarray(to)]);
    try {
      const got = format.parse(out, opts).units.map((u) => JSON.stringify([u.id, u.source, u.target, u.state]));
      if (got.length === want.length && got.every((g, i) => g === want[i])) return out;
    } catch {
      // this cut does not give a valid file; try the next
    }
  }
  return null;
}
