// Reading tree/project/<relation>.ndjson into a project (GitLab's RelationTreeRestorer, RelationFactory,
// MembersMapper): line by line, top-level items in batches of one transaction each with their children
// inserted in bulk. A batch that fails is retried item by item so that one bad item (a constraint, a
// bad field) is skipped and recorded as GitLab's ImportFailure while its neighbours go in.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Insertable, Kysely } from 'kysely';
import type { Database, LabelsTable, ProjectRow, UserRow } from '../../../db/schema.ts';
import type { IidUsage } from '../../../db/internal-ids.ts';
import { nowIso } from '../../../lib/time.ts';
import type { FeatureDeps } from '../../deps.ts';
import { normaliseColor } from '../../labels/labels.service.ts';
import { type FailedRelation, RELATIONS_DIR } from '../archive/layout.ts';
import { TreeError } from './errors.ts';
import { type NdjsonLine, readNdjson } from './ndjson.ts';
import type { TreeCounts } from './write.ts';
import type { ImportTreeOptions, ImportTreeResult } from './index.ts';
import { importProtectedRefs, protectImportedDefaultBranch } from './protected-refs.ts';

type Json = Record<string, unknown>;
type Item = { lineNumber: number; value: Json };

const MAX_FAILURES = 100;
const INSERT_CHUNK = 200;
const MAINTAINER = 40;

/** An item GitLab's model would refuse (ActiveRecord::RecordInvalid). */
class RecordInvalid extends Error {
  override name = 'ActiveRecord::RecordInvalid';
  constructor(message: string) {
    super(`Validation failed: ${message}`);
  }
}

/** The class name GitLab would record for a database error. */
function exceptionClass(e: unknown): string {
  const err = e as { name?: string; code?: string; message?: string };
  const msg = err?.message ?? '';
  if (err?.code === '23505' || /UNIQUE constraint failed/.test(msg)) return 'ActiveRecord::RecordNotUnique';
  if (err?.code === '23503' || /FOREIGN KEY constraint failed/.test(msg)) return 'ActiveRecord::InvalidForeignKey';
  if (err?.code === '23502' || /NOT NULL constraint failed/.test(msg)) return 'ActiveRecord::NotNullViolation';
  if (err?.name && err.name !== 'Error') return err.name;
  return 'StandardError';
}

// ---- values of an untrusted archive ---------------------------------------------------------------

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const arr = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObj) : []);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const int = (v: unknown): number | null => {
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) ? n : null;
};
const flag = (v: unknown): number => (v === true || v === 1 || v === 't' || v === 'true' ? 1 : 0);
const flagOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : flag(v));
/** A timestamp as stored (ISO 8601, UTC); unparseable → null */
function time(v: unknown): string | null {
  if (typeof v !== 'string' || v === '') return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
function date(v: unknown): string | null {
  return typeof v === 'string' && /^\d{4}-\d\d-\d\d$/.test(v) ? v : null;
}
const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const sha = (v: unknown): string | null => (typeof v === 'string' && SHA.test(v) ? v : null);

function required(v: string | null, what: string): string {
  if (v === null || v.trim() === '') throw new RecordInvalid(`${what} can't be blank`);
  return v;
}

function iidOf(v: Json): number {
  const iid = int(v.iid);
  if (iid === null || iid < 1) throw new RecordInvalid('Iid must be a positive integer');
  return iid;
}

/** Bulk inserts in chunks (bind-parameter limits); the new ids in the rows' order. */
async function insertMany<T extends keyof Database & string>(
  trx: Kysely<Database>,
  table: T,
  rows: Insertable<Database[T]>[],
  returnIds = false,
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    const q = trx.insertInto(table).values(chunk as any);
    if (returnIds) {
      // Ids are handed out in the VALUES order (one statement, serial/rowid); RETURNING's order is not
      // promised, so sort them back.
      const got = (await (q as any).returning('id').execute()) as { id: number }[];
      ids.push(...got.map((r) => Number(r.id)).sort((a, b) => a - b));
    } else {
      await q.execute();
    }
  }
  return ids;
}

/** Rows that differ in `key` (the first kept): a composite key the table refuses twice. */
/**
 * GitLab's RelationFactory#transform_status: an imported pipeline or job that had not completed (created,
 * pending, running, manual, scheduled …) is canceled — an export never re-runs a live pipeline elsewhere.
 */
const COMPLETED = new Set(['success', 'failed', 'canceled', 'skipped']);
const importedStatus = (v: unknown, otherwise: string): string => {
  const s = str(v) ?? otherwise;
  return COMPLETED.has(s) ? s : 'canceled';
};

/**
 * What an imported job keeps of the archive's options: never what a runner would execute or act on
 * (script, before/after_script, image, services, cache, artifacts, a trigger) — a retried imported job must
 * not run commands from an archive — only the descriptive keys, each of the expected shape.
 */
function importedOptions(v: unknown): Record<string, unknown> {
  if (!isObj(v)) return {};
  const out: Record<string, unknown> = {};
  const strings = (x: unknown) => (Array.isArray(x) && x.every((e) => typeof e === 'string') ? x : undefined);
  if (Array.isArray(v.needs)) {
    const needs = arr(v.needs).filter((n) => typeof n.job === 'string');
    out.needs = needs.map((n) => ({ job: n.job, artifacts: n.artifacts !== false, ...(n.optional === true ? { optional: true } : {}) }));
  }
  if (strings(v.dependencies)) out.dependencies = v.dependencies;
  if (typeof v.coverage === 'string') out.coverage = v.coverage;
  if (Number.isInteger(v.timeout) && (v.timeout as number) > 0) out.timeout = v.timeout;
  if (isObj(v.environment) && typeof v.environment.name === 'string') {
    const e = v.environment;
    out.environment = { name: e.name, ...(typeof e.url === 'string' ? { url: e.url } : {}), ...(typeof e.action === 'string' ? { action: e.action } : {}) };
  }
  return out;
}

function uniqueBy<T>(rows: T[], key: (r: T) => string): T[] {
  const seen = new Set<string>();
  return rows.filter((r) => {
    const k = key(r);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

// ---- the import ------------------------------------------------------------------------------------

class TreeImport {
  readonly db: Kysely<Database>;
  readonly project: ProjectRow;
  readonly importer: UserRow;
  readonly admin: boolean;
  readonly counts: TreeCounts = {};
  readonly failed: FailedRelation[] = [];
  /** exported user id → user id here (GitLab's MembersMapper#map; a miss is the importer) */
  readonly users = new Map<number, number>();
  /** label title (lower case) → id: the project's labels, then its groups' */
  labels = new Map<string, number>();
  /** milestone title → id, and the project's milestone iids */
  milestones = new Map<string, number>();
  /** links between imported issues, made once every issue of the relation is in */
  issueLinks: { sourceIid: number; targetIid: number; type: 'relates_to' | 'blocks'; at: string }[] = [];
  milestoneIids = new Set<number>();
  /** what a batch added to the caches, kept only when its transaction commits */
  private staged: { labels: Map<string, number>; milestones: Map<string, number>; iids: Set<number> } | null = null;
  groupIds: number[] = [];
  failures = 0;

  constructor(
    deps: FeatureDeps,
    readonly dir: string,
    readonly opts: ImportTreeOptions,
  ) {
    this.db = deps.db.kysely;
    this.project = opts.project;
    this.importer = opts.importer;
    this.admin = opts.importer.is_admin === 1;
  }

  file(relation: string): string {
    return path.join(this.dir, RELATIONS_DIR, `${relation}.ndjson`);
  }

  user(old: unknown): number {
    const id = int(old);
    return (id !== null && this.users.get(id)) || this.importer.id;
  }

  userOrNull(old: unknown): number | null {
    return old === null || old === undefined ? null : this.user(old);
  }

  fail(relation: string, lineNumber: number, e: unknown): void {
    this.failures++;
    if (this.failed.length >= MAX_FAILURES) return;
    this.failed.push({
      id: this.failed.length + 1,
      created_at: nowIso(),
      exception_class: exceptionClass(e),
      exception_message: String((e as Error)?.message ?? e).slice(0, 1000),
      source: 'process_relation_item!',
      relation_name: relation,
      line_number: lineNumber,
    });
  }

  async loadCaches(): Promise<void> {
    const ns = await this.db.selectFrom('namespaces').select(['traversal_ids', 'type']).where('id', '=', this.project.namespace_id).executeTakeFirst();
    this.groupIds = ns && ns.type === 'Group' ? ns.traversal_ids.split('/').filter(Boolean).map(Number) : [];
    const labels = await this.db
      .selectFrom('labels')
      .select(['id', 'title', 'project_id'])
      .where((eb) => eb.or([eb('project_id', '=', this.project.id), ...(this.groupIds.length ? [eb('group_id', 'in', this.groupIds)] : [])]))
      .orderBy('id')
      .execute();
    for (const l of labels) {
      const k = l.title.toLowerCase();
      if (l.project_id !== null || !this.labels.has(k)) this.labels.set(k, l.id);
    }
    const milestones = await this.db.selectFrom('milestones').select(['id', 'title', 'iid']).where('project_id', '=', this.project.id).execute();
    for (const m of milestones) {
      this.milestones.set(m.title, m.id);
      this.milestoneIids.add(m.iid);
    }
  }

  /** The label of this title (the project's or a group's), created as a project label when missing. */
  async label(trx: Kysely<Database>, v: Json): Promise<number> {
    const title = required(str(v.title), 'Title').trim();
    const k = title.toLowerCase();
    const known = this.labels.get(k) ?? this.staged?.labels.get(k);
    if (known !== undefined) return known;
    const now = nowIso();
    const color = str(v.color);
    const priority = arr(v.priorities)
      .map((p) => int(p.priority))
      .find((p) => p !== null);
    const row: Insertable<LabelsTable> = {
      project_id: this.project.id,
      group_id: null,
      title,
      color: color && color.trim() !== '' ? normaliseColor(color) : '#6699cc',
      description: str(v.description),
      priority: priority ?? null,
      created_at: time(v.created_at) ?? now,
      updated_at: time(v.updated_at) ?? now,
    };
    const { id } = await trx.insertInto('labels').values(row).returning('id').executeTakeFirstOrThrow();
    this.staged?.labels.set(k, id);
    return id;
  }

  /** The project milestone of this title, created (with its iid when free) when missing. */
  async milestone(trx: Kysely<Database>, v: Json): Promise<number> {
    const title = required(str(v.title), 'Title');
    const known = this.milestones.get(title) ?? this.staged?.milestones.get(title);
    if (known !== undefined) return known;
    const wanted = int(v.iid);
    let iid = wanted !== null && wanted > 0 && !this.milestoneIids.has(wanted) && !this.staged?.iids.has(wanted) ? wanted : null;
    if (iid === null) {
      const max = await trx
        .selectFrom('milestones')
        .select((eb) => eb.fn.max('iid').as('m'))
        .where('project_id', '=', this.project.id)
        .executeTakeFirst();
      iid = Math.max(Number(max?.m ?? 0), ...this.milestoneIids, ...(this.staged?.iids ?? [])) + 1;
    }
    const now = nowIso();
    const { id } = await trx
      .insertInto('milestones')
      .values({
        iid,
        project_id: this.project.id,
        group_id: null,
        title,
        description: str(v.description),
        state: v.state === 'closed' ? 'closed' : 'active',
        due_date: date(v.due_date),
        start_date: date(v.start_date),
        created_at: time(v.created_at) ?? now,
        updated_at: time(v.updated_at) ?? now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    this.staged?.milestones.set(title, id);
    this.staged?.iids.add(iid);
    return id;
  }

  /**
   * Reads a relation file in batches; `handle` writes a batch in one transaction. A failing batch is
   * retried one item per transaction; an item that still fails is recorded and skipped.
   */
  async relation(name: string, batchSize: number, handle: (trx: Kysely<Database>, items: Item[]) => Promise<number>): Promise<void> {
    const file = this.file(name);
    if (!fs.existsSync(file)) return;
    this.counts[name] ??= 0;
    let batch: Item[] = [];
    const flush = async () => {
      if (!batch.length) return;
      const items = batch;
      batch = [];
      try {
        this.counts[name] += await this.inTransaction((trx) => handle(trx, items));
      } catch {
        for (const item of items) {
          try {
            this.counts[name] += await this.inTransaction((trx) => handle(trx, [item]));
          } catch (e) {
            this.fail(name, item.lineNumber, e);
          }
        }
      }
    };
    const from = this.failed.length;
    for await (const line of readNdjson(file) as AsyncGenerator<NdjsonLine>) {
      if ('error' in line) {
        this.fail(name, line.lineNumber, line.error);
        continue;
      }
      batch.push(line);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    // a batch's failures are known when it ends, a broken line's at once: in line order again
    const mine = this.failed.splice(from).sort((a, b) => a.line_number - b.line_number);
    mine.forEach((f, i) => {
      f.id = from + i + 1;
    });
    this.failed.push(...mine);
  }

  private async inTransaction<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    this.staged = { labels: new Map(), milestones: new Map(), iids: new Set() };
    try {
      const out = await this.db.transaction().execute(fn);
      for (const [k, v] of this.staged.labels) this.labels.set(k, v);
      for (const [k, v] of this.staged.milestones) this.milestones.set(k, v);
      for (const i of this.staged.iids) this.milestoneIids.add(i);
      return out;
    } finally {
      this.staged = null;
    }
  }

  /** iids of `items` already in the project's `table` (skipExisting) */
  async existingIids(trx: Kysely<Database>, table: 'merge_requests' | 'issues' | 'ci_pipelines', items: Item[]): Promise<Set<number>> {
    if (!this.opts.skipExisting) return new Set();
    const iids = items.map((i) => int(i.value.iid)).filter((x): x is number => x !== null);
    if (!iids.length) return new Set();
    const rows = await trx.selectFrom(table).select('iid').where('project_id', '=', this.project.id).where('iid', 'in', iids).execute();
    return new Set(rows.map((r) => r.iid));
  }

  // ---- members ---------------------------------------------------------------------------------

  /** MembersMapper: the importer stays a member; an administrator's import maps the exported members. */
  async members(addMembers: boolean): Promise<void> {
    if (addMembers) await this.ensureImporterMember();
    const file = this.file('project_members');
    if (!this.admin || !fs.existsSync(file)) return;
    if (addMembers) this.counts.project_members = 0;
    for await (const line of readNdjson(file) as AsyncGenerator<NdjsonLine>) {
      if ('error' in line) {
        this.fail('project_members', line.lineNumber, line.error);
        continue;
      }
      try {
        if ((await this.member(line.value, addMembers)) && addMembers) this.counts.project_members++;
      } catch (e) {
        this.fail('project_members', line.lineNumber, e);
      }
    }
  }

  private async ensureImporterMember(): Promise<void> {
    const db = this.db;
    const existing = await db
      .selectFrom('members')
      .select(['id', 'access_level'])
      .where('source_type', '=', 'Project')
      .where('source_id', '=', this.project.id)
      .where('user_id', '=', this.importer.id)
      .executeTakeFirst();
    if (existing && existing.access_level >= MAINTAINER) return;
    let level = MAINTAINER;
    if (!this.admin && this.groupIds.length) {
      const g = await db
        .selectFrom('members')
        .select((eb) => eb.fn.max('access_level').as('lvl'))
        .where('source_type', '=', 'Namespace')
        .where('source_id', 'in', this.groupIds)
        .where('user_id', '=', this.importer.id)
        .executeTakeFirst();
      if (g?.lvl) level = Math.min(Number(g.lvl), MAINTAINER);
    }
    const now = nowIso();
    if (existing) {
      if (existing.access_level < level) await db.updateTable('members').set({ access_level: level, updated_at: now }).where('id', '=', existing.id).execute();
      return;
    }
    await db
      .insertInto('members')
      .values({
        source_type: 'Project',
        source_id: this.project.id,
        user_id: this.importer.id,
        access_level: level,
        expires_at: null,
        member_role_id: null,
        created_by_id: this.importer.id,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }

  /** One exported member: mapped to the user of that email (public_email, then email), then of that username. */
  private async member(v: Json, add: boolean): Promise<boolean> {
    const user = isObj(v.user) ? v.user : null;
    if (!user) return false;
    const oldId = int(user.id);
    const email = str(user.public_email) || str(user.email);
    const username = str(user.username);
    let found: { id: number } | undefined;
    if (email)
      found = await this.db
        .selectFrom('users')
        .select('id')
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .executeTakeFirst();
    if (!found && username)
      found = await this.db
        .selectFrom('users')
        .select('id')
        .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
        .executeTakeFirst();
    if (!found) return false;
    if (oldId !== null) this.users.set(oldId, found.id);
    if (!add) return true;
    const existing = await this.db
      .selectFrom('members')
      .select('id')
      .where('source_type', '=', 'Project')
      .where('source_id', '=', this.project.id)
      .where('user_id', '=', found.id)
      .executeTakeFirst();
    if (existing) return true;
    const level = int(v.access_level);
    if (level === null || ![5, 10, 15, 20, 30, 40, 50].includes(level)) throw new RecordInvalid('Access level is not included in the list');
    const now = nowIso();
    await this.db
      .insertInto('members')
      .values({
        source_type: 'Project',
        source_id: this.project.id,
        user_id: found.id,
        access_level: Math.min(level, MAINTAINER),
        expires_at: date(v.expires_at),
        member_role_id: null,
        created_by_id: this.importer.id,
        created_at: time(v.created_at) ?? now,
        updated_at: time(v.updated_at) ?? now,
      })
      .execute();
    return true;
  }

  // ---- notes and award emoji shared by merge requests and issues -------------------------------

  /** Note rows of `v.notes` (GitLab's set_note_author: an unmapped author leaves the original's name in the body). */
  noteRows(v: Json, noteableType: string, noteableId: number) {
    return arr(v.notes).map((n) => {
      const now = nowIso();
      const updatedAt = time(n.updated_at) ?? time(n.created_at) ?? now;
      const oldAuthor = int(n.author_id);
      let body = str(n.note) ?? '';
      if (oldAuthor === null || !this.users.has(oldAuthor)) {
        const name = isObj(n.author) ? (str(n.author.name) ?? 'Ghost User') : 'Ghost User';
        const stamp = (str(n.updated_at) ?? updatedAt).split('.')[0];
        body = `${body.trim() === '' ? '*Blank note*' : body}\n\n *By ${name} on ${stamp} (imported from GitLab)*`;
      }
      const type = str(n.type);
      const position = isObj(n.position) ? JSON.stringify(n.position) : typeof n.position === 'string' ? n.position : null;
      return {
        row: {
          project_id: this.project.id,
          noteable_type: noteableType,
          noteable_id: noteableId,
          discussion_id:
            str(n.discussion_id) && /^[0-9a-f]{1,64}$/i.test(str(n.discussion_id)!) ? str(n.discussion_id)! : crypto.randomBytes(20).toString('hex'),
          type,
          author_id: this.user(oldAuthor),
          body,
          system: flag(n.system),
          internal: flag(n.internal) || flag(n.confidential),
          resolvable: n.resolvable === undefined ? (type === 'DiscussionNote' || type === 'DiffNote' ? 1 : 0) : flag(n.resolvable),
          resolved_at: time(n.resolved_at),
          resolved_by_id: time(n.resolved_at) ? this.userOrNull(n.resolved_by_id) : null,
          position,
          created_at: time(n.created_at) ?? updatedAt,
          updated_at: updatedAt,
        },
        awards: arr(n.award_emoji),
      };
    });
  }

  awardRows(list: Json[], awardableType: string, awardableId: number) {
    const now = nowIso();
    return list.flatMap((a) => {
      const name = str(a.name);
      if (!name) return [];
      return [
        {
          awardable_type: awardableType,
          awardable_id: awardableId,
          user_id: this.user(a.user_id),
          name,
          created_at: time(a.created_at) ?? now,
          updated_at: time(a.updated_at) ?? time(a.created_at) ?? now,
        },
      ];
    });
  }

  /** Inserts the notes of several noteables and the award emoji on them. */
  async insertNotes(trx: Kysely<Database>, notes: ReturnType<TreeImport['noteRows']>): Promise<void> {
    const ids = await insertMany(
      trx,
      'notes',
      notes.map((n) => n.row),
      true,
    );
    const awards = notes.flatMap((n, i) => this.awardRows(n.awards, 'Note', ids[i]));
    await insertMany(
      trx,
      'award_emoji',
      uniqueBy(awards, (a) => `${a.awardable_id}/${a.name}/${a.user_id}`),
    );
  }

  // ---- relations -------------------------------------------------------------------------------

  async importLabels(): Promise<void> {
    await this.relation('labels', 500, async (trx, items) => {
      let n = 0;
      for (const { value } of items) {
        const title = required(str(value.title), 'Title').trim();
        if (this.labels.has(title.toLowerCase()) || this.staged?.labels.has(title.toLowerCase())) continue;
        await this.label(trx, value);
        n++;
      }
      return n;
    });
  }

  async importMilestones(): Promise<void> {
    await this.relation('milestones', 500, async (trx, items) => {
      let n = 0;
      for (const { value } of items) {
        const title = required(str(value.title), 'Title');
        const iid = iidOf(value);
        if (this.opts.skipExisting && (this.milestoneIids.has(iid) || this.milestones.has(title))) continue;
        if (this.milestones.has(title) || this.staged?.milestones.has(title)) throw new RecordInvalid('Title has already been taken');
        if (this.milestoneIids.has(iid) || this.staged?.iids.has(iid)) throw new RecordInvalid('Iid has already been taken');
        await this.milestone(trx, value);
        n++;
      }
      return n;
    });
  }

  async importMergeRequests(): Promise<void> {
    await this.relation('merge_requests', 100, async (trx, items) => {
      const existing = await this.existingIids(trx, 'merge_requests', items);
      const todo = items.filter((i) => !existing.has(int(i.value.iid) ?? -1));
      if (!todo.length) return 0;
      const now = nowIso();
      const rows = [];
      for (const { value: v } of todo) {
        const diff = isObj(v.merge_request_diff) ? v.merge_request_diff : {};
        const metrics = isObj(v.metrics) ? v.metrics : {};
        const state = str(v.state) ?? 'opened';
        if (!['opened', 'closed', 'merged', 'locked'].includes(state)) throw new RecordInvalid(`State is invalid: ${state}`);
        const awards = arr(v.award_emoji);
        const title = required(str(v.title), 'Title');
        const mergedBy = v.merge_user_id ?? metrics.merged_by_id;
        rows.push({
          iid: iidOf(v),
          project_id: this.project.id,
          source_project_id: this.project.id,
          source_branch: required(str(v.source_branch), 'Source branch'),
          target_branch: required(str(v.target_branch), 'Target branch'),
          title,
          description: str(v.description),
          state,
          draft:
            v.draft !== undefined
              ? flag(v.draft)
              : flag(v.work_in_progress) || (/^\s*(\[draft\]|\(draft\)|draft:|draft\s-|draft\s|wip:|wip\s)/i.test(title) ? 1 : 0),
          author_id: this.user(v.author_id),
          milestone_id: isObj(v.milestone) ? await this.milestone(trx, v.milestone) : null,
          merge_user_id: this.userOrNull(mergedBy),
          closed_by_id: this.userOrNull(metrics.latest_closed_by_id ?? v.closed_by_id),
          sha: sha(v.diff_head_sha) ?? sha(v.source_branch_sha) ?? sha(diff.head_commit_sha) ?? sha(v.sha),
          diff_base_sha: sha(diff.base_commit_sha) ?? sha(v.diff_base_sha),
          merge_commit_sha: sha(v.merge_commit_sha),
          squash_commit_sha: sha(v.squash_commit_sha),
          merge_status: 'unchecked',
          merge_error: str(v.merge_error),
          squash: flag(v.squash),
          merge_params: JSON.stringify(isObj(v.merge_params) ? v.merge_params : {}),
          merge_when_pipeline_succeeds: flag(v.merge_when_pipeline_succeeds),
          discussion_locked: flagOrNull(v.discussion_locked),
          allow_collaboration: flag(v.allow_maintainer_to_push ?? v.allow_collaboration),
          imported_from: 'gitlab_project',
          time_estimate: int(v.time_estimate) ?? 0,
          upvotes: awards.filter((a) => a.name === 'thumbsup').length,
          downvotes: awards.filter((a) => a.name === 'thumbsdown').length,
          user_notes_count: arr(v.notes).filter((n) => !flag(n.system)).length,
          merged_at: state === 'merged' ? (time(metrics.merged_at) ?? time(v.merged_at)) : null,
          closed_at: state === 'closed' ? (time(metrics.latest_closed_at) ?? time(v.closed_at)) : null,
          prepared_at: now,
          created_at: time(v.created_at) ?? now,
          updated_at: time(v.updated_at) ?? time(v.created_at) ?? now,
        });
      }
      const ids = await insertMany(trx, 'merge_requests', rows, true);
      const notes = [];
      const awards = [];
      const approvals = [];
      const assignees = [];
      const reviewers = [];
      const labelLinks = [];
      const labelEvents: Insertable<Database['resource_label_events']>[] = [];
      const milestoneEvents: Insertable<Database['resource_milestone_events']>[] = [];
      const stateEvents: Insertable<Database['resource_state_events']>[] = [];
      for (let i = 0; i < todo.length; i++) {
        const v = todo[i].value;
        const id = ids[i];
        const at = rows[i].created_at;
        notes.push(...this.noteRows(v, 'MergeRequest', id));
        awards.push(...this.awardRows(arr(v.award_emoji), 'MergeRequest', id));
        for (const a of arr(v.approvals)) approvals.push({ merge_request_id: id, user_id: this.user(a.user_id), created_at: time(a.created_at) ?? at });
        const assigneeList = arr(v.merge_request_assignees);
        if (assigneeList.length) {
          for (const a of assigneeList) assignees.push({ merge_request_id: id, user_id: this.user(a.user_id), created_at: time(a.created_at) ?? at });
        } else if (int(v.assignee_id) !== null) {
          assignees.push({ merge_request_id: id, user_id: this.user(v.assignee_id), created_at: at });
        }
        for (const r of arr(v.merge_request_reviewers)) {
          const state = str(r.state);
          reviewers.push({
            merge_request_id: id,
            user_id: this.user(r.user_id),
            created_at: time(r.created_at) ?? at,
            state: state && ['unreviewed', 'reviewed', 'requested_changes', 'approved', 'unapproved', 'review_started'].includes(state) ? state : 'unreviewed',
          });
        }
        for (const l of arr(v.label_links)) {
          if (!isObj(l.label)) continue;
          labelLinks.push({ merge_request_id: id, label_id: await this.label(trx, l.label), created_at: time(l.created_at) ?? at });
        }
        await this.resourceEvents(trx, v, { merge_request_id: id, issue_id: null }, at, { labelEvents, milestoneEvents, stateEvents });
      }
      const byUser = (r: { merge_request_id: number; user_id: number }) => `${r.merge_request_id}/${r.user_id}`;
      await this.insertNotes(trx, notes);
      await insertMany(
        trx,
        'award_emoji',
        uniqueBy(awards, (a) => `${a.awardable_id}/${a.name}/${a.user_id}`),
      );
      await insertMany(trx, 'approvals', uniqueBy(approvals, byUser));
      await insertMany(trx, 'merge_request_assignees', uniqueBy(assignees, byUser));
      await insertMany(trx, 'merge_request_reviewers', uniqueBy(reviewers, byUser));
      await insertMany(
        trx,
        'merge_request_labels',
        uniqueBy(labelLinks, (l) => `${l.merge_request_id}/${l.label_id}`),
      );
      await insertMany(trx, 'resource_label_events', labelEvents);
      await insertMany(trx, 'resource_milestone_events', milestoneEvents);
      await insertMany(trx, 'resource_state_events', stateEvents);
      return todo.length;
    });
  }

  async importIssues(): Promise<void> {
    await this.relation('issues', 200, async (trx, items) => {
      const existing = await this.existingIids(trx, 'issues', items);
      const todo = items.filter((i) => !existing.has(int(i.value.iid) ?? -1));
      if (!todo.length) return 0;
      const now = nowIso();
      const rows = [];
      for (const { value: v } of todo) {
        const state = str(v.state) ?? 'opened';
        const awards = arr(v.award_emoji);
        rows.push({
          project_id: this.project.id,
          iid: iidOf(v),
          title: required(str(v.title), 'Title'),
          description: str(v.description),
          state: state === 'closed' ? 'closed' : 'opened',
          author_id: this.user(v.author_id),
          milestone_id: isObj(v.milestone) ? await this.milestone(trx, v.milestone) : null,
          confidential: flag(v.confidential),
          discussion_locked: flagOrNull(v.discussion_locked),
          due_date: date(v.due_date),
          weight: int(v.weight),
          closed_by_id: state === 'closed' ? this.userOrNull(v.closed_by_id) : null,
          closed_at: state === 'closed' ? time(v.closed_at) : null,
          imported_from: 'gitlab_project',
          issue_type: str(v.issue_type) === 'incident' ? 'incident' : 'issue',
          time_estimate: int(v.time_estimate) ?? 0,
          upvotes: awards.filter((a) => a.name === 'thumbsup').length,
          downvotes: awards.filter((a) => a.name === 'thumbsdown').length,
          user_notes_count: arr(v.notes).filter((n) => !flag(n.system)).length,
          relative_position: int(v.relative_position),
          created_at: time(v.created_at) ?? now,
          updated_at: time(v.updated_at) ?? time(v.created_at) ?? now,
        });
      }
      const ids = await insertMany(trx, 'issues', rows, true);
      const notes = todo.flatMap((item, i) => this.noteRows(item.value, 'Issue', ids[i]));
      const awards = todo.flatMap((item, i) => this.awardRows(arr(item.value.award_emoji), 'Issue', ids[i]));
      const assignees: Insertable<Database['issue_assignees']>[] = [];
      const labelLinks: Insertable<Database['issue_labels']>[] = [];
      const labelEvents: Insertable<Database['resource_label_events']>[] = [];
      const milestoneEvents: Insertable<Database['resource_milestone_events']>[] = [];
      const stateEvents: Insertable<Database['resource_state_events']>[] = [];
      for (let i = 0; i < todo.length; i++) {
        const v = todo[i].value;
        const id = ids[i];
        const at = rows[i].created_at;
        const users = arr(v.issue_assignees).map((a) => a.user_id);
        if (!users.length && Array.isArray(v.assignee_ids)) users.push(...v.assignee_ids);
        for (const u of users) assignees.push({ issue_id: id, user_id: this.user(u), created_at: at });
        for (const l of arr(v.label_links)) {
          if (!isObj(l.label)) continue;
          labelLinks.push({ issue_id: id, label_id: await this.label(trx, l.label), project_id: this.project.id, created_at: time(l.created_at) ?? at });
        }
        await this.resourceEvents(trx, v, { merge_request_id: null, issue_id: id }, at, { labelEvents, milestoneEvents, stateEvents });
      }
      await this.insertNotes(trx, notes);
      await insertMany(
        trx,
        'award_emoji',
        uniqueBy(awards, (a) => `${a.awardable_id}/${a.name}/${a.user_id}`),
      );
      await insertMany(
        trx,
        'issue_assignees',
        uniqueBy(assignees, (a) => `${a.issue_id}/${a.user_id}`),
      );
      await insertMany(
        trx,
        'issue_labels',
        uniqueBy(labelLinks, (l) => `${l.issue_id}/${l.label_id}`),
      );
      await insertMany(trx, 'resource_label_events', labelEvents);
      await insertMany(trx, 'resource_milestone_events', milestoneEvents);
      await insertMany(trx, 'resource_state_events', stateEvents);
      for (let i = 0; i < todo.length; i++) {
        for (const l of arr(todo[i].value.issue_links)) {
          const target = int(l.target_iid);
          if (target === null) continue;
          this.issueLinks.push({
            sourceIid: rows[i].iid,
            targetIid: target,
            type: str(l.link_type) === 'blocks' ? 'blocks' : 'relates_to',
            at: time(l.created_at) ?? rows[i].created_at,
          });
        }
      }
      return todo.length;
    });
    await this.inTransaction(async (trx) => {
      // links between the project's issues, once every issue is there (by iid; a link to an issue not imported is dropped)
      const iids = [...new Set(this.issueLinks.flatMap((l) => [l.sourceIid, l.targetIid]))];
      if (!iids.length) return 0;
      const byIid = new Map(
        (await trx.selectFrom('issues').select(['id', 'iid']).where('project_id', '=', this.project.id).where('iid', 'in', iids).execute()).map((r) => [
          r.iid,
          r.id,
        ]),
      );
      for (const l of this.issueLinks) {
        const source = byIid.get(l.sourceIid);
        const target = byIid.get(l.targetIid);
        if (source === undefined || target === undefined || source === target) continue;
        await trx
          .insertInto('issue_links')
          .values({ source_id: source, target_id: target, link_type: l.type, created_at: l.at, updated_at: l.at })
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      this.issueLinks = [];
      return 0;
    });
  }

  /** Issue boards and their lists; a list's label or milestone comes by title, an assignee list by the user map. */
  async importBoards(): Promise<void> {
    await this.relation('boards', 50, async (trx, items) => {
      const now = nowIso();
      for (const { value: v } of items) {
        const board = await trx
          .insertInto('boards')
          .values({
            project_id: this.project.id,
            group_id: null,
            name: required(str(v.name), 'Name'),
            hide_backlog_list: flag(v.hide_backlog_list),
            hide_closed_list: flag(v.hide_closed_list),
            created_at: time(v.created_at) ?? now,
            updated_at: time(v.updated_at) ?? now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        for (const l of arr(v.lists)) {
          const type = str(l.list_type);
          if (!type || !['backlog', 'closed', 'label', 'milestone', 'assignee'].includes(type)) continue;
          const label = type === 'label' && isObj(l.label) ? await this.label(trx, l.label) : null;
          const milestone = type === 'milestone' && isObj(l.milestone) ? await this.milestone(trx, l.milestone) : null;
          const user = type === 'assignee' ? this.userOrNull(l.user_id) : null;
          if ((type === 'label' && label === null) || (type === 'milestone' && milestone === null) || (type === 'assignee' && user === null)) continue;
          await trx
            .insertInto('board_lists')
            .values({
              board_id: board.id,
              list_type: type,
              label_id: label,
              milestone_id: milestone,
              user_id: user,
              position: ['backlog', 'closed'].includes(type) ? null : int(l.position),
              created_at: time(l.created_at) ?? now,
              updated_at: time(l.updated_at) ?? now,
            })
            .execute();
        }
      }
      return items.length;
    });
  }

  /** An issue's or a merge request's resource events (label, milestone, state), added to `into`. */
  private async resourceEvents(
    trx: Kysely<Database>,
    v: Json,
    owner: { merge_request_id: number | null; issue_id: number | null },
    at: string,
    into: {
      labelEvents: Insertable<Database['resource_label_events']>[];
      milestoneEvents: Insertable<Database['resource_milestone_events']>[];
      stateEvents: Insertable<Database['resource_state_events']>[];
    },
  ): Promise<void> {
    for (const e of arr(v.resource_label_events)) {
      const action = str(e.action);
      if (action !== 'add' && action !== 'remove') continue;
      into.labelEvents.push({
        ...owner,
        label_id: isObj(e.label) ? await this.label(trx, e.label) : null,
        user_id: this.userOrNull(e.user_id),
        action,
        created_at: time(e.created_at) ?? at,
      });
    }
    for (const e of arr(v.resource_milestone_events)) {
      const action = str(e.action);
      if (action !== 'add' && action !== 'remove') continue;
      into.milestoneEvents.push({
        ...owner,
        milestone_id: isObj(e.milestone) ? await this.milestone(trx, e.milestone) : null,
        user_id: this.userOrNull(e.user_id),
        action,
        state: str(e.state) ?? 'opened',
        created_at: time(e.created_at) ?? at,
      });
    }
    for (const e of arr(v.resource_state_events)) {
      const state = str(e.state);
      if (!state) continue;
      into.stateEvents.push({
        ...owner,
        user_id: this.userOrNull(e.user_id),
        state,
        source_commit: sha(e.source_commit),
        created_at: time(e.created_at) ?? at,
      });
    }
  }

  async importPipelines(): Promise<void> {
    const TYPES: Record<string, string> = {
      'Ci::Build': 'build',
      'Ci::Bridge': 'bridge',
      GenericCommitStatus: 'generic',
      'Ci::GenericCommitStatus': 'generic',
    };
    await this.relation('ci_pipelines', 200, async (trx, items) => {
      const existing = await this.existingIids(trx, 'ci_pipelines', items);
      const todo = items.filter((i) => !existing.has(int(i.value.iid) ?? -1));
      if (!todo.length) return 0;
      const now = nowIso();
      const rows = todo.map(({ value: v }) => ({
        iid: iidOf(v),
        project_id: this.project.id,
        ref: required(str(v.ref), 'Ref'),
        tag: flag(v.tag),
        sha: required(sha(v.sha), 'Sha'),
        before_sha: sha(v.before_sha),
        source: str(v.source) ?? 'push',
        status: importedStatus(v.status, 'created'),
        yaml_errors: str(v.yaml_errors),
        failure_reason: str(v.failure_reason),
        user_id: this.userOrNull(v.user_id),
        parent_pipeline_id: null,
        parent_job_id: null,
        variables: JSON.stringify(Array.isArray(v.variables) ? v.variables : []),
        coverage: str(v.coverage),
        created_at: time(v.created_at) ?? now,
        updated_at: time(v.updated_at) ?? time(v.created_at) ?? now,
        started_at: time(v.started_at),
        finished_at: time(v.finished_at),
        committed_at: time(v.committed_at),
        duration: int(v.duration),
        queued_duration: int(v.queued_duration),
      }));
      const ids = await insertMany(trx, 'ci_pipelines', rows, true);
      const builds = [];
      for (let i = 0; i < todo.length; i++) {
        const v = todo[i].value;
        const p = rows[i];
        // stages → statuses (and the newer builds / bridges / generic_commit_statuses), or flat lists
        const jobs: { job: Json; stage: Json | null; index: number }[] = [];
        arr(v.stages).forEach((stage, index) => {
          for (const key of ['statuses', 'builds', 'bridges', 'generic_commit_statuses']) for (const job of arr(stage[key])) jobs.push({ job, stage, index });
        });
        for (const key of ['statuses', 'builds']) for (const job of arr(v[key])) jobs.push({ job, stage: null, index: 0 });
        for (const { job: b, stage, index } of jobs) {
          builds.push({
            project_id: this.project.id,
            pipeline_id: ids[i],
            type: TYPES[str(b.type) ?? 'Ci::Build'] ?? 'build',
            name: required(str(b.name), 'Name'),
            stage: str(b.stage) ?? (stage ? str(stage.name) : null) ?? 'test',
            stage_idx: int(b.stage_idx) ?? (stage ? int(stage.position) : null) ?? index,
            status: importedStatus(b.status, 'created'),
            ref: str(b.ref) ?? p.ref,
            tag: b.tag === undefined ? p.tag : flag(b.tag),
            sha: sha(b.sha) ?? p.sha,
            user_id: this.userOrNull(b.user_id),
            runner_id: null,
            options: JSON.stringify(importedOptions(b.options)),
            yaml_variables: JSON.stringify(Array.isArray(b.yaml_variables) ? b.yaml_variables : []),
            tag_list: JSON.stringify(Array.isArray(b.tag_list) ? b.tag_list.filter((x) => typeof x === 'string') : []),
            when: str(b.when) ?? 'on_success',
            allow_failure: flag(b.allow_failure),
            environment: str(b.environment),
            coverage: typeof b.coverage === 'number' ? b.coverage : null,
            failure_reason: str(b.failure_reason),
            description: str(b.description),
            target_url: str(b.target_url),
            token_digest: null,
            retried: flag(b.retried),
            timeout: int(b.timeout),
            created_at: time(b.created_at) ?? p.created_at,
            updated_at: time(b.updated_at) ?? p.updated_at,
            queued_at: time(b.queued_at),
            started_at: time(b.started_at),
            finished_at: time(b.finished_at),
            erased_at: time(b.erased_at),
            artifacts_expire_at: time(b.artifacts_expire_at),
          });
        }
      }
      await insertMany(trx, 'ci_builds', builds);
      return todo.length;
    });
  }

  async importEnvironments(): Promise<void> {
    await this.relation('environments', 200, async (trx, items) => {
      let n = 0;
      for (const { value: v } of items) {
        const name = required(str(v.name), 'Name');
        const now = nowIso();
        let env = await trx.selectFrom('environments').select('id').where('project_id', '=', this.project.id).where('name', '=', name).executeTakeFirst();
        if (!env) {
          env = await trx
            .insertInto('environments')
            .values({
              project_id: this.project.id,
              name,
              slug:
                str(v.slug) ??
                name
                  .toLowerCase()
                  .replace(/[^a-z0-9]+/g, '-')
                  .slice(0, 24),
              external_url: str(v.external_url),
              state: ['available', 'stopping', 'stopped'].includes(str(v.state) ?? '') ? str(v.state)! : 'available',
              tier: str(v.tier) ?? 'other',
              created_at: time(v.created_at) ?? now,
              updated_at: time(v.updated_at) ?? now,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          n++;
        }
        const deployments = arr(v.deployments);
        const iids = deployments.map((d) => int(d.iid)).filter((x): x is number => x !== null);
        const taken = new Set(
          iids.length
            ? (await trx.selectFrom('deployments').select('iid').where('project_id', '=', this.project.id).where('iid', 'in', iids).execute()).map((r) => r.iid)
            : [],
        );
        const rows = deployments
          .filter((d) => !taken.has(int(d.iid) ?? -1))
          .map((d) => ({
            iid: iidOf(d),
            project_id: this.project.id,
            environment_id: env.id,
            ref: required(str(d.ref), 'Ref'),
            tag: flag(d.tag),
            sha: required(sha(d.sha), 'Sha'),
            user_id: this.userOrNull(d.user_id),
            status: str(d.status) ?? 'success',
            created_at: time(d.created_at) ?? now,
            updated_at: time(d.updated_at) ?? now,
            finished_at: time(d.finished_at),
          }));
        await insertMany(trx, 'deployments', rows);
      }
      return n;
    });
  }

  /** internal_ids at least the largest imported iid, so that the next item gets the next number. */
  async advanceIids(): Promise<void> {
    // each usage counts the iids of the table of the same name
    const usages: IidUsage[] = ['merge_requests', 'milestones', 'ci_pipelines', 'issues', 'deployments'];
    await this.db.transaction().execute(async (trx) => {
      for (const usage of usages) {
        const table = usage;
        const row = await trx
          .selectFrom(table)
          .select((eb) => eb.fn.max('iid').as('m'))
          .where('project_id', '=', this.project.id)
          .executeTakeFirst();
        const max = Number(row?.m ?? 0);
        if (!max) continue;
        await trx
          .insertInto('internal_ids')
          .values({ usage, scope_type: 'Project', scope_id: this.project.id, last_value: max })
          .onConflict((oc) => oc.columns(['usage', 'scope_type', 'scope_id']).doUpdateSet({ last_value: max }).where('internal_ids.last_value', '<', max))
          .execute();
      }
    });
  }
}

const ORDER = ['labels', 'milestones', 'issues', 'merge_requests', 'ci_pipelines', 'environments', 'boards'] as const;

export async function importTree(deps: FeatureDeps, dir: string, opts: ImportTreeOptions): Promise<ImportTreeResult> {
  const run = new TreeImport(deps, dir, opts);
  const only = opts.only ? new Set<string>(opts.only) : null;
  if (only) {
    for (const relation of only) {
      if (!fs.existsSync(run.file(relation))) throw new TreeError(`${relation}.ndjson file not found`);
    }
  }
  await run.loadCaches();
  await run.members(!only);
  const steps: Record<(typeof ORDER)[number], () => Promise<void>> = {
    labels: () => run.importLabels(),
    milestones: () => run.importMilestones(),
    issues: () => run.importIssues(),
    merge_requests: () => run.importMergeRequests(),
    ci_pipelines: () => run.importPipelines(),
    environments: () => run.importEnvironments(),
    boards: () => run.importBoards(),
  };
  for (const relation of ORDER) {
    if (only && !only.has(relation)) continue;
    await steps[relation]();
  }
  if (!only) {
    await importProtectedRefs(deps.db.kysely, run);
    await protectImportedDefaultBranch(deps, opts.project);
  }
  await run.advanceIids();
  return { counts: run.counts, failed: run.failed };
}
