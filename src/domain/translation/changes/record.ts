// The change log's one writer: every row of translation_changes is written here, inside the caller's
// transaction (or on the connection, where the caller writes outside one).
import type { Insertable, Kysely } from 'kysely';
import type { Database, TranslationChangesTable } from '../../../db/schema.ts';
import { nowIso } from '../../../lib/time.ts';

/**
 * One change record. A field left out is a column left out of the insert (the table's default), so
 * `unitId: null` and no `unitId` write the same row; `details` is stored as JSON text.
 */
export interface Change {
  /** a code of ACTION (changes/actions.ts) */
  action: number;
  projectId?: number | null;
  componentId?: number | null;
  translationId?: number | null;
  unitId?: number | null;
  languageId?: number | null;
  /** who did it */
  userId?: number | null;
  /** whom the change is credited to (the commit author) */
  authorId?: number | null;
  target?: string;
  old?: string;
  details?: Record<string, unknown>;
  /** default: the time of the call */
  timestamp?: string;
}

type ChangeRow = Insertable<TranslationChangesTable>;

/** Rows per INSERT: twelve columns each stay well under the databases' limits on bound parameters. */
const BATCH = 500;

/** Writes one change, or several in their order (a multi-row INSERT per 500). */
export async function recordChange(trx: Kysely<Database>, change: Change | readonly Change[]): Promise<void> {
  const now = nowIso();
  const rows = (Array.isArray(change) ? change : [change as Change]).map((c) => toRow(c, now));
  for (let i = 0; i < rows.length; i += BATCH)
    await trx
      .insertInto('translation_changes')
      .values(rows.slice(i, i + BATCH))
      .execute();
}

function toRow(c: Change, now: string): ChangeRow {
  const row: ChangeRow = { action: c.action, timestamp: c.timestamp ?? now };
  if (c.projectId !== undefined) row.project_id = c.projectId;
  if (c.componentId !== undefined) row.component_id = c.componentId;
  if (c.translationId !== undefined) row.translation_id = c.translationId;
  if (c.unitId !== undefined) row.unit_id = c.unitId;
  if (c.languageId !== undefined) row.language_id = c.languageId;
  if (c.userId !== undefined) row.user_id = c.userId;
  if (c.authorId !== undefined) row.author_id = c.authorId;
  if (c.target !== undefined) row.target = c.target;
  if (c.old !== undefined) row.old = c.old;
  if (c.details !== undefined) row.details = JSON.stringify(c.details);
  return row;
}
