// Application settings: one row, stored values over code defaults, cached per process ≤ 60 s.
// A save in this process is visible at once; other nodes see it when their cache expires.
import type { Kysely } from 'kysely';
import type { Db } from '../../db/connect.ts';
import type { Database } from '../../db/schema.ts';
import { nowIso } from '../../lib/time.ts';
import { SETTINGS, withDefaults, type Settings } from '../core/settings-definitions.ts';
import { GROUP_PATH_PARAMS, prepareSettingsUpdate, type UpdateOptions } from './settings-update.ts';

export interface SettingsRecord {
  id: number;
  created_at: string;
  updated_at: string;
  values: Settings;
}

export class SettingsService {
  private cache: { at: number; record: SettingsRecord } | null = null;
  /** bumped by every save, so a read that started before it cannot cache stale values */
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 60_000,
  ) {}

  /** Creates the row on first start. */
  async ensure(): Promise<void> {
    const now = nowIso();
    await this.db.kysely
      .insertInto('application_settings')
      .values({ id: 1, settings: '{}', created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }

  /** The cached record (at most ttlMs old). */
  async record(): Promise<SettingsRecord> {
    if (this.cache && Date.now() - this.cache.at < this.ttlMs) return this.cache.record;
    return this.fresh();
  }

  /** Read from the database, bypassing (and refreshing) the cache. */
  async fresh(): Promise<SettingsRecord> {
    const generation = this.generation;
    const record = await this.read(this.db.kysely);
    if (generation === this.generation) this.cache = { at: Date.now(), record };
    return record;
  }

  /** The cached values when fresh, without waiting (hot paths); null when a read is due. */
  cached(): Settings | null {
    return this.cache && Date.now() - this.cache.at < this.ttlMs ? this.cache.record.values : null;
  }

  async get(): Promise<Settings> {
    return (await this.record()).values;
  }

  /** Writes already-valid values (merged over what is stored). Unknown names are dropped. */
  async save(changes: Record<string, unknown>): Promise<SettingsRecord> {
    return this.write(async () => changes);
  }

  /**
   * PUT /application/settings: coerces and validates raw parameters against the current row
   * (throws a DomainError, nothing written), then saves everything in one write.
   */
  async update(params: Record<string, unknown>, opts: UpdateOptions = {}): Promise<SettingsRecord> {
    // Group paths are looked up before the transaction: on SQLite a query on another handle would
    // wait for the connection the transaction holds.
    const resolve = opts.resolveGroupPath;
    const groups = new Map<string, number | null>();
    if (resolve) {
      for (const name of GROUP_PATH_PARAMS) {
        const path = typeof params[name] === 'string' ? params[name].trim() : '';
        if (path && !groups.has(path)) groups.set(path, await resolve(path));
      }
    }
    const resolveGroupPath = async (path: string) => groups.get(path) ?? null;
    return this.write((current) => prepareSettingsUpdate(params, current, { ...opts, resolveGroupPath }));
  }

  invalidate(): void {
    this.generation++;
    this.cache = null;
  }

  private async write(change: (current: Settings) => Promise<Record<string, unknown>>): Promise<SettingsRecord> {
    await this.ensure();
    const record = await this.db.kysely.transaction().execute(async (trx) => {
      let q = trx.selectFrom('application_settings').selectAll().where('id', '=', 1);
      if (this.db.dialect === 'postgres') q = q.forUpdate();
      const row = await q.executeTakeFirstOrThrow();
      const stored = JSON.parse(row.settings) as Record<string, unknown>;
      const changes = await change(withDefaults(stored));
      const merged: Record<string, unknown> = {};
      for (const [k, v] of Object.entries({ ...stored, ...changes })) if (Object.hasOwn(SETTINGS, k)) merged[k] = v;
      await trx
        .updateTable('application_settings')
        .set({ settings: JSON.stringify(merged), updated_at: nowIso() })
        .where('id', '=', 1)
        .execute();
      return this.read(trx);
    });
    this.invalidate();
    this.cache = { at: Date.now(), record };
    return record;
  }

  private async read(db: Kysely<Database>): Promise<SettingsRecord> {
    const row = await db.selectFrom('application_settings').selectAll().where('id', '=', 1).executeTakeFirst();
    const now = nowIso();
    return {
      id: 1,
      created_at: row?.created_at ?? now,
      updated_at: row?.updated_at ?? now,
      values: withDefaults(row ? (JSON.parse(row.settings) as Record<string, unknown>) : {}),
    };
  }
}
