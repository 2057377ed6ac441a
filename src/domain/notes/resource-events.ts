// The resource events of a merge request or an issue (lib/api/resource_label_events.rb,
// resource_milestone_events.rb, resource_state_events.rb): who added or removed a label, set or removed a
// milestone, changed the state — each with its user, read in one query per relation.
import type { Kysely } from 'kysely';
import type { Database, LabelRow, MilestoneRow } from '../../db/schema.ts';
import { basicByIds } from '../core/user-columns.ts';
import type { FoundNoteable } from './noteable.ts';

const unique = <T>(xs: Iterable<T>): T[] => [...new Set(xs)];
const ownerColumn = (f: FoundNoteable) => (f.type === 'Issue' ? 'issue_id' : 'merge_request_id') as 'issue_id' | 'merge_request_id';

export class ResourceEvents {
  constructor(private readonly db: Kysely<Database>) {}

  async labels(f: FoundNoteable) {
    const rows = await this.db
      .selectFrom('resource_label_events')
      .leftJoin('labels', 'labels.id', 'resource_label_events.label_id')
      .select([
        'resource_label_events.id',
        'resource_label_events.user_id',
        'resource_label_events.action',
        'resource_label_events.created_at',
        'labels.id as label_id',
        'labels.title',
        'labels.color',
        'labels.description',
        'labels.project_id as label_project_id',
        'labels.group_id',
        'labels.priority',
        'labels.created_at as label_created_at',
        'labels.updated_at as label_updated_at',
      ])
      .where(`resource_label_events.${ownerColumn(f)}`, '=', f.target.id)
      .orderBy('resource_label_events.id')
      .execute();
    const users = await basicByIds(
      this.db,
      rows.map((r) => r.user_id),
    );
    return rows.map((r) => ({
      id: r.id,
      user: r.user_id === null ? null : (users.get(r.user_id) ?? null),
      created_at: r.created_at,
      action: r.action,
      label:
        r.label_id === null
          ? null
          : ({
              id: r.label_id,
              title: r.title!,
              color: r.color!,
              description: r.description,
              project_id: r.label_project_id,
              group_id: r.group_id,
              priority: r.priority,
              created_at: r.label_created_at!,
              updated_at: r.label_updated_at!,
            } satisfies LabelRow),
    }));
  }

  async milestones(f: FoundNoteable) {
    const rows = await this.db.selectFrom('resource_milestone_events').selectAll().where(ownerColumn(f), '=', f.target.id).orderBy('id').execute();
    const milestoneIds = unique(rows.map((r) => r.milestone_id).filter((x): x is number => x !== null));
    const [users, milestones] = await Promise.all([
      basicByIds(
        this.db,
        rows.map((r) => r.user_id),
      ),
      milestoneIds.length ? this.db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).execute() : Promise.resolve([] as MilestoneRow[]),
    ]);
    return rows.map((r) => ({
      row: r,
      user: r.user_id === null ? null : (users.get(r.user_id) ?? null),
      milestone: milestones.find((m) => m.id === r.milestone_id) ?? null,
    }));
  }

  async states(f: FoundNoteable) {
    const rows = await this.db.selectFrom('resource_state_events').selectAll().where(ownerColumn(f), '=', f.target.id).orderBy('id').execute();
    const users = await basicByIds(
      this.db,
      rows.map((r) => r.user_id),
    );
    return rows.map((r) => ({ row: r, user: r.user_id === null ? null : (users.get(r.user_id) ?? null) }));
  }
}
