// Custom attributes of users, projects and groups (GitLab's CustomAttributesEndpoints and
// CustomAttributes::UpsertService / DestroyService): one key → one value per owner, administrators
// only. The three owners differ only in their table and owner column.
import { sql } from 'kysely';
import type { Db } from '../../db/connect.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';

export type AttributeOwnerKind = 'user' | 'project' | 'group';

export interface CustomAttribute {
  key: string;
  value: string;
}

const TABLES = {
  user: { table: 'user_custom_attributes', column: 'user_id' },
  project: { table: 'project_custom_attributes', column: 'project_id' },
  group: { table: 'group_custom_attributes', column: 'group_id' },
} as const;

export class CustomAttributesService {
  constructor(private readonly db: Db) {}

  /** The attributes of one owner, oldest first. */
  async list(kind: AttributeOwnerKind, ownerId: number): Promise<CustomAttribute[]> {
    const { table, column } = TABLES[kind];
    return this.db.kysely.selectFrom(table).select(['key', 'value']).where(sql.ref(column), '=', ownerId).orderBy('id').execute() as Promise<CustomAttribute[]>;
  }

  /** The attributes of several owners, one query. */
  async listMany(kind: AttributeOwnerKind, ownerIds: readonly number[]): Promise<Map<number, CustomAttribute[]>> {
    const out = new Map<number, CustomAttribute[]>();
    if (!ownerIds.length) return out;
    const { table, column } = TABLES[kind];
    const rows = (await this.db.kysely
      .selectFrom(table)
      .select([sql<number>`${sql.ref(column)}`.as('owner_id'), 'key', 'value'])
      .where(sql.ref(column), 'in', [...ownerIds])
      .orderBy('id')
      .execute()) as { owner_id: number; key: string; value: string }[];
    for (const r of rows) {
      const list = out.get(r.owner_id) ?? [];
      list.push({ key: r.key, value: r.value });
      out.set(r.owner_id, list);
    }
    return out;
  }

  /** A missing key is ActiveRecord's RecordNotFound: 404 "404 Not found". */
  async get(kind: AttributeOwnerKind, ownerId: number, key: string): Promise<CustomAttribute> {
    const { table, column } = TABLES[kind];
    const row = await this.db.kysely.selectFrom(table).select(['key', 'value']).where(sql.ref(column), '=', ownerId).where('key', '=', key).executeTakeFirst();
    if (!row) throw Errors.recordNotFound();
    return row as CustomAttribute;
  }

  /** Creates or updates (CustomAttributes::UpsertService); a blank value is the model's error. */
  async set(kind: AttributeOwnerKind, ownerId: number, key: string, value: string): Promise<CustomAttribute> {
    if (!value.trim()) throw Errors.refused("Value can't be blank");
    const { table, column } = TABLES[kind];
    const now = nowIso();
    const values = { [column]: ownerId, key, value, created_at: now, updated_at: now } as never;
    return (await this.db.kysely
      .insertInto(table)
      .values(values)
      .onConflict((oc) => oc.columns([column, 'key'] as never).doUpdateSet({ value, updated_at: now }))
      .returning(['key', 'value'])
      .executeTakeFirstOrThrow()) as CustomAttribute;
  }

  /** A missing key → 404 "Custom attribute Not Found" (CustomAttributes::DestroyService's error). */
  async remove(kind: AttributeOwnerKind, ownerId: number, key: string): Promise<void> {
    const { table, column } = TABLES[kind];
    const res = await this.db.kysely.deleteFrom(table).where(sql.ref(column), '=', ownerId).where('key', '=', key).executeTakeFirst();
    if (!Number(res.numDeletedRows)) throw Errors.notFound('Custom attribute');
  }
}
