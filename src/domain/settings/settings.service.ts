// Application settings: one row, stored values over code defaults, cached per process ≤ 60 s.
import type { Db } from '../../db/connect.ts';
import { nowIso } from '../../lib/time.ts';
import { defaults, type Settings } from './definitions.ts';

export interface SettingsRecord {
  id: number;
  created_at: string;
  updated_at: string;
  values: Settings;
}

export class SettingsService {
  private cache: { at: number; record: SettingsRecord } | null = null;
  constructor(private readonly db: Db, private readonly ttlMs = 60_000) {}

  /** Creates the row on first start. */
  async ensure(): Promise<void> {
    const now = nowIso();
    await this.db.kysely
      .insertInto('application_settings')
      .values({ id: 1, settings: '{}', created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }

  async record(): Promise<SettingsRecord> {
    if (this.cache && Date.now() - this.cache.at < this.ttlMs) return this.cache.record;
    const row = await this.db.kysely.selectFrom('application_settings').selectAll().where('id', '=', 1).executeTakeFirst();
    const stored = row ? (JSON.parse(row.settings) as Record<string, unknown>) : {};
    const now = nowIso();
    const record: SettingsRecord = {
      id: 1,
      created_at: row?.created_at ?? now,
      updated_at: row?.updated_at ?? now,
      values: { ...defaults(), ...stored } as Settings,
    };
    this.cache = { at: Date.now(), record };
    return record;
  }

  async get(): Promise<Settings> {
    return (await this.record()).values;
  }

  /** Writes already-validated values (merged over what is stored); visible at once in this process. */
  async save(changes: Record<string, unknown>): Promise<SettingsRecord> {
    await this.ensure();
    const now = nowIso();
    await this.db.kysely.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('application_settings').select('settings').where('id', '=', 1).executeTakeFirstOrThrow();
      const merged = { ...JSON.parse(row.settings), ...changes };
      await trx.updateTable('application_settings').set({ settings: JSON.stringify(merged), updated_at: now }).where('id', '=', 1).execute();
    });
    this.cache = null;
    return this.record();
  }

  invalidate(): void {
    this.cache = null;
  }
}
