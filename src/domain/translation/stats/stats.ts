// Statistics (reference §8): counters kept on each translation row, recomputed from its units when
// they change (scan, edits); aggregates (component, project, language) sum the rows and recompute
// percentages from the sums. Reading statistics never touches units.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import { CONTENT_ACTIONS } from '../changes/actions.ts';

export const COUNTERS = [
  'total',
  'total_words',
  'total_chars',
  'translated',
  'translated_words',
  'translated_chars',
  'fuzzy',
  'fuzzy_words',
  'fuzzy_chars',
  'approved',
  'approved_words',
  'approved_chars',
  'readonly',
  'readonly_words',
  'readonly_chars',
  'failing',
  'failing_words',
  'failing_chars',
  'suggestions',
  'comments',
  'recent_changes',
] as const;
export type Counter = (typeof COUNTERS)[number];
export type Counts = Record<Counter, number> & { last_change: string | null; last_author_id: number | null };

/** Weblate's translation_percent: truncated to one decimal, never 0.0 for some, never 100.0 for not all. */
export function percent(part: number, total: number, zeroComplete = false): number {
  if (total === 0) return zeroComplete ? 100.0 : 0.0;
  const promile = Math.floor((1000 * part) / total);
  if (promile === 0 && part !== 0) return 0.1;
  if (promile === 1000 && part < total) return 99.9;
  return promile / 10;
}

/** Datetimes placed in a statistics dict go through DRF's JSONEncoder: truncated to milliseconds, `Z`. */
export function statsTime(iso: string | null): string | null {
  return iso ? iso.replace(/\.(\d{3})\d*Z$/, '.$1Z') : null;
}

/** The statistics dict, keys in Weblate's order (reference §3.9), without the object's name/code/url. */
export function statisticsBody(c: Counts) {
  const pct = (k: string, zeroComplete = false) => percent(c[k as Counter], c.total, zeroComplete);
  const pw = (k: string) => percent(c[`${k}_words` as Counter], c.total_words);
  const pc = (k: string) => percent(c[`${k}_chars` as Counter], c.total_chars);
  return {
    total: c.total,
    total_words: c.total_words,
    total_chars: c.total_chars,
    last_change: statsTime(c.last_change),
    recent_changes: c.recent_changes,
    translated: c.translated,
    translated_words: c.translated_words,
    translated_percent: pct('translated', true),
    translated_words_percent: c.total_words === 0 ? 100.0 : pw('translated'),
    translated_chars: c.translated_chars,
    translated_chars_percent: c.total_chars === 0 ? 100.0 : pc('translated'),
    fuzzy: c.fuzzy,
    fuzzy_percent: pct('fuzzy'),
    fuzzy_words: c.fuzzy_words,
    fuzzy_words_percent: pw('fuzzy'),
    fuzzy_chars: c.fuzzy_chars,
    fuzzy_chars_percent: pc('fuzzy'),
    failing: c.failing,
    failing_percent: pct('failing'),
    approved: c.approved,
    approved_percent: pct('approved'),
    approved_words: c.approved_words,
    approved_words_percent: pw('approved'),
    approved_chars: c.approved_chars,
    approved_chars_percent: pc('approved'),
    readonly: c.readonly,
    readonly_percent: pct('readonly'),
    readonly_words: c.readonly_words,
    readonly_words_percent: pw('readonly'),
    readonly_chars: c.readonly_chars,
    readonly_chars_percent: pc('readonly'),
    suggestions: c.suggestions,
    comments: c.comments,
  };
}

/** Sum of translation rows (aggregates: component, project, language, project-language). */
export function sumCounts(
  rows: (Partial<Record<Counter, number | string | null>> & { last_change?: string | null; last_author_id?: number | null })[],
): Counts {
  const c = { ...Object.fromEntries(COUNTERS.map((k) => [k, 0])), last_change: null, last_author_id: null } as unknown as Counts;
  for (const r of rows) {
    for (const k of COUNTERS) c[k] += Number(r[k] ?? 0);
    if (r.last_change && (!c.last_change || r.last_change > c.last_change)) {
      c.last_change = r.last_change;
      c.last_author_id = r.last_author_id ?? null;
    }
  }
  return c;
}

/** SQL select list summing every counter, for aggregates computed in the database. */
export function sumSelect() {
  return [
    ...COUNTERS.map((k) => sql<number>`coalesce(sum(${sql.ref(`translations.${k}`)}), 0)`.as(k)),
    sql<string | null>`max(translations.last_change)`.as('last_change'),
  ];
}

type Db = Kysely<Database> | Transaction<Database>;

/** Recompute one translation's counters from its units and its changes (at write time). */
export async function refreshTranslationStats(db: Db, translationId: number): Promise<void> {
  const s = (cond: string, what: 'n' | 'w' | 'c') => {
    const v = what === 'n' ? sql`1` : what === 'w' ? sql`num_words` : sql`source_chars`;
    return sql<number>`coalesce(sum(case when ${sql.raw(cond)} then ${v} else 0 end), 0)`;
  };
  const conds: Record<string, string> = {
    total: '1=1',
    translated: 'state >= 20',
    fuzzy: 'state in (10, 11, 12)',
    approved: 'state = 30',
    readonly: 'state = 100',
    failing: 'has_failing_check = 1',
  };
  const cols = Object.entries(conds).flatMap(([k, cond]) => [s(cond, 'n').as(k), s(cond, 'w').as(`${k}_words`), s(cond, 'c').as(`${k}_chars`)]);
  const row = await db
    .selectFrom('units')
    .select([...cols, sql<number>`coalesce(sum(has_suggestion), 0)`.as('suggestions'), sql<number>`coalesce(sum(has_comment), 0)`.as('comments')])
    .where('translation_id', '=', translationId)
    .executeTakeFirstOrThrow();
  const last = await db
    .selectFrom('translation_changes')
    .select(['timestamp', 'author_id'])
    .where('translation_id', '=', translationId)
    .where('action', 'in', [...CONTENT_ACTIONS])
    .orderBy('timestamp', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  let recent = 0;
  if (last) {
    const since = new Date(Date.parse(last.timestamp) - 6 * 3600_000).toISOString();
    const r = await db
      .selectFrom('translation_changes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('translation_id', '=', translationId)
      .where('action', 'in', [...CONTENT_ACTIONS])
      .where('timestamp', '>', since)
      .executeTakeFirstOrThrow();
    recent = Number(r.n);
  }
  const counts = Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])) as Record<Exclude<Counter, 'recent_changes'>, number>;
  await db
    .updateTable('translations')
    .set({ ...counts, recent_changes: recent, last_change: last?.timestamp ?? null, last_author_id: last?.author_id ?? null })
    .where('id', '=', translationId)
    .execute();
}

const SIX_HOURS_MS = 6 * 3600_000;
const hoursBefore = (iso: string) => new Date(Date.parse(iso) - SIX_HOURS_MS).toISOString();

/**
 * What `count` content changes at `at` by `authorId` set on their translation, exactly and without a
 * recount: `last_change` and `last_author_id` (the newest change's), and `recent_changes` — the
 * content changes of the 6 hours before the newest (Weblate's count_changes): the previous count plus
 * the new ones, minus those the moved window left behind (one range count on the index
 * translation_changes_translation, usually over nothing). Call it in the transaction that inserted the
 * change records, before updating the row with what it answers.
 */
export async function contentChangesSet(
  db: Db,
  translationId: number,
  ch: { count: number; at: string; authorId: number | null },
): Promise<{ last_change: string; last_author_id: number | null; recent_changes: number }> {
  const row = await db
    .selectFrom('translations')
    .select(['last_change', 'last_author_id', 'recent_changes'])
    .where('id', '=', translationId)
    .executeTakeFirst();
  const oldLast = row?.last_change ?? null;
  const newest = !oldLast || ch.at >= oldLast;
  const last = newest ? ch.at : oldLast;
  const since = hoursBefore(last);
  const inWindow = ch.at > since ? ch.count : 0;
  if (!oldLast || oldLast <= since) return { last_change: last, last_author_id: ch.authorId, recent_changes: inWindow };
  let left = 0;
  const oldSince = hoursBefore(oldLast);
  if (since > oldSince) {
    const r = await db
      .selectFrom('translation_changes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('translation_id', '=', translationId)
      .where('action', 'in', [...CONTENT_ACTIONS])
      .where('timestamp', '>', oldSince)
      .where('timestamp', '<=', since)
      .executeTakeFirstOrThrow();
    left = Number(r.n);
  }
  return {
    last_change: last,
    last_author_id: newest ? ch.authorId : (row?.last_author_id ?? null),
    recent_changes: Math.max(0, Number(row?.recent_changes ?? 0) - left) + inWindow,
  };
}
