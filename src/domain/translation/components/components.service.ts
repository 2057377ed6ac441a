// Components (Weblate's Component): a git repository + file mask + file format. Creating one fetches
// its repository into a mirror and scans it before the response; a failure at any step leaves no row
// and no mirror behind. Changing where the strings come from (repo, branch, filemask, template,
// file_format) fetches and rescans.
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../../db/connect.ts';
import type { ComponentRow, Database, TranslationProjectRow } from '../../../db/schema.ts';
import { isUniqueViolation } from '../../../db/sql.ts';
import { formatIds, getFormat } from '../../../formats/registry.ts';
import { Errors } from '../../../lib/errors.ts';
import { KeyedLock } from '../../../lib/keyed-lock.ts';
import { nowIso } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import { requireAdmin } from '../access.ts';
import { ACTION } from '../changes/actions.ts';
import { recordChange } from '../changes/record.ts';
import { parseEnforcedChecks, parseFlags } from '../checks/index.ts';
import { boolField, choiceField, FieldErrors, intField, languageField, stringField, urlField } from '../fields.ts';
import { SLUG } from '../projects/translation-projects.service.ts';
import { scanComponent, ScanError, type ScanResult } from './scan.ts';
import { RepoError, type ComponentVcs } from './vcs.ts';

export interface ComponentInput {
  [field: string]: unknown;
}

const NEW_LANG = ['contact', 'url', 'add', 'none'] as const;
const LANGUAGE_CODE_STYLES = [
  '',
  'posix',
  'posix_lowercase',
  'bcp',
  'posix_long',
  'posix_long_lowercase',
  'bcp_long',
  'bcp_legacy',
  'bcp_lower',
  'android',
  'appstore',
  'googleplay',
  'linux',
  'linux_lowercase',
] as const;
/** fields whose change means fetching and scanning again */
const SOURCE_FIELDS = [
  'repo',
  'branch',
  'filemask',
  'template',
  'file_format',
  'language_regex',
  'source_language_id',
  'check_flags',
  'enforced_checks',
  'edit_template',
] as const;

/** how long a mirror or staging directory without a component is left alone (a creation may be in progress) */
const LEFTOVER_GRACE_MS = 60 * 60 * 1000;

type Values = Partial<Omit<ComponentRow, 'id' | 'project_id' | 'created_at'>>;

export class ComponentsService {
  /** one repository operation at a time per component within this process */
  private readonly locks = new KeyedLock();

  constructor(
    private readonly db: Db,
    private readonly vcs: ComponentVcs,
  ) {}

  private async validate(project: TranslationProjectRow, input: ComponentInput, partial: boolean, current?: ComponentRow): Promise<Values> {
    const e = new FieldErrors();
    const v: Values = {};
    const str = (f: keyof Values & string, opts: { required?: boolean; blank?: boolean; max?: number } = {}) => {
      const s = stringField(e, input, f, { blank: true, max: 300, ...opts });
      if (s !== undefined) (v as Record<string, unknown>)[f] = s;
    };
    str('name', { required: !partial, blank: false, max: 100 });
    str('slug', { required: !partial, blank: false, max: 100 });
    if (v.slug !== undefined && !SLUG.test(v.slug)) e.add('slug', 'Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.');
    str('repo', { required: !partial, blank: false, max: 300 });
    str('push');
    str('branch', { max: 200 });
    if (v.branch && (!/^[A-Za-z0-9._/-]+$/.test(v.branch) || /^[-/.]|\.\.|\/\/|\.lock$|[/.]$/.test(v.branch))) e.add('branch', 'Enter a valid branch name.');
    str('filemask', { required: !partial, blank: false, max: 400 });
    str('template', { max: 400 });
    str('new_base', { max: 400 });
    str('file_format', { required: !partial, blank: false });
    str('license', { max: 150 });
    const licenseUrl = urlField(e, input, 'license_url', { blank: true });
    if (licenseUrl !== undefined) v.license_url = licenseUrl;
    str('agreement', { max: 10000 });
    str('check_flags', { max: 1000 });
    str('language_regex', { max: 500 });
    const vcs = choiceField(e, input, 'vcs', ['git', 'gitlab']);
    if (vcs) v.vcs = vcs;
    const newLang = choiceField(e, input, 'new_lang', NEW_LANG);
    if (newLang) v.new_lang = newLang;
    const style = choiceField(e, input, 'language_code_style', LANGUAGE_CODE_STYLES);
    if (style !== undefined) v.language_code_style = style;
    for (const f of ['edit_template', 'restricted'] as const) {
      const b = boolField(e, input, f);
      if (b !== undefined) v[f] = b ? 1 : 0;
    }
    // repository settings (migration 019): Weblate's push_branch, message templates, merge_style,
    // commit_pending_age (1–2160 hours) and push_on_commit
    str('push_branch', { max: 200 });
    if (v.push_branch && (!/^[A-Za-z0-9._/-]+$/.test(v.push_branch) || /^[-/.]|\.\.|\/\/|\.lock$|[/.]$/.test(v.push_branch)))
      e.add('push_branch', 'Enter a valid branch name.');
    for (const f of ['commit_message', 'add_message', 'delete_message', 'merge_message'] as const) str(f, { max: 10000 });
    const mergeStyle = choiceField(e, input, 'merge_style', ['merge', 'rebase', 'merge_noff']);
    if (mergeStyle) v.merge_style = mergeStyle;
    const age = intField(e, input, 'commit_pending_age', { min: 1, max: 2160 });
    if (age !== undefined) v.commit_pending_age = age;
    const pushOnCommit = boolField(e, input, 'push_on_commit');
    if (pushOnCommit !== undefined) v.push_on_commit = pushOnCommit ? 1 : 0;
    const priority = intField(e, input, 'priority', { min: 0, max: 1000 });
    if (priority !== undefined) v.priority = priority;
    if (input.enforced_checks !== undefined) {
      const raw = Array.isArray(input.enforced_checks) ? JSON.stringify(input.enforced_checks) : String(input.enforced_checks);
      try {
        v.enforced_checks = JSON.stringify(parseEnforcedChecks(raw));
      } catch (err) {
        e.add('enforced_checks', (err as Error).message);
      }
    }
    if (v.check_flags !== undefined) {
      try {
        parseFlags(v.check_flags);
      } catch (err) {
        e.add('check_flags', (err as Error).message);
      }
    }
    if (v.language_regex) {
      try {
        new RegExp(v.language_regex);
      } catch {
        e.add('language_regex', 'Enter a valid regular expression.');
      }
    }
    if (input.source_language !== undefined) v.source_language_id = await languageField(this.db, e, input.source_language, 'source_language');

    // the model's clean(): file format, filemask and template together
    const fileFormat = v.file_format ?? current?.file_format;
    const format = fileFormat ? getFormat(fileFormat) : undefined;
    if (v.file_format !== undefined && !format) e.add('file_format', `"${v.file_format}" is not a valid choice. Known formats: ${formatIds().join(', ')}.`);
    const filemask = v.filemask ?? current?.filemask;
    if (v.filemask !== undefined && !v.filemask.includes('*')) e.add('filemask', 'File mask does not contain * as a language placeholder!');
    for (const f of ['filemask', 'template', 'new_base'] as const) {
      const p = v[f];
      if (p && !safeRepoPath(p.replace(/\*/g, 'x'))) e.add(f, 'Enter a relative path inside the repository.');
    }
    const template = v.template ?? current?.template ?? '';
    if (format && !e.has('file_format')) {
      if (format.monolingual === false && template) {
        e.add('template', 'You can not use a base file for bilingual translation.');
        e.add('file_format', 'You can not use a base file for bilingual translation.');
      }
      if (format.monolingual === true && !template) {
        e.add('template', 'You need to provide a base file for monolingual translation.');
        e.add('file_format', 'You need to provide a base file for monolingual translation.');
      }
    }
    if (filemask && template && !e.has('filemask') && !e.has('template')) {
      // the template should be a file of the mask's shape or anything else; it may not be the mask itself
      if (template === filemask) e.add('template', 'The template file can not be the file mask.');
    }
    e.throwIfAny();
    // uniqueness within the project
    const errs: Record<string, string[]> = {};
    for (const [field, msg] of [
      ['name', 'Component with this Component name already exists.'],
      ['slug', 'Component with this URL slug already exists.'],
    ] as const) {
      const val = v[field];
      if (val === undefined) continue;
      let q = this.db.kysely
        .selectFrom('components')
        .select('id')
        .where('project_id', '=', project.id)
        .where((eb) => eb(eb.fn('lower', [field]), '=', val.toLowerCase()));
      if (current) q = q.where('id', '!=', current.id);
      if (await q.executeTakeFirst()) errs[field] = [msg];
    }
    if (Object.keys(errs).length) throw Errors.invalid(errs);
    return v;
  }

  /**
   * Fetches the repository of `repo`/`branch` into `dir`; field errors when it cannot. `reset` (a new
   * component, or a new repo or branch): the local branch starts again at the upstream head; otherwise
   * its translation commits stay (see repository/component-repository.ts).
   */
  private async fetch(actor: Actor, dir: string, repo: string, branch: string, reset = true) {
    try {
      const source = await this.vcs.source(actor, repo);
      const fetched = await this.vcs.fetch(dir, source, branch, { reset });
      return { ...fetched, platformProjectId: source.kind === 'platform' ? source.projectId : null };
    } catch (err) {
      if (err instanceof RepoError) {
        if (/branch/.test(err.message) && branch) throw Errors.invalid({ branch: [err.message] });
        throw Errors.invalid({ repo: [err.message] });
      }
      throw err;
    }
  }

  /** Fresh planner statistics after a scan changed many rows (SQLite never gathers them by itself). */
  private async analyze(): Promise<void> {
    await sql.raw(this.db.dialect === 'sqlite' ? 'PRAGMA optimize' : 'ANALYZE units').execute(this.db.kysely);
  }

  private scanFailure(err: unknown): never {
    if (err instanceof ScanError) throw Errors.invalid({ [err.field]: [err.message] });
    if (err instanceof RepoError) throw Errors.invalid({ repo: [err.message] });
    throw err;
  }

  async create(actor: Actor, project: TranslationProjectRow, input: ComponentInput): Promise<{ component: ComponentRow; scan: ScanResult }> {
    requireAdmin(actor, 'Can not create components');
    const v = await this.validate(project, input, false);
    const staging = this.vcs.stagingDir();
    let adopted: number | null = null;
    try {
      const fetched = await this.fetch(actor, staging, v.repo!, v.branch ?? '');
      const created = await this.db.kysely.transaction().execute(async (trx) => {
        const now = nowIso();
        const component = await trx
          .insertInto('components')
          .values({
            ...(v as Required<Pick<ComponentRow, 'name' | 'slug' | 'repo' | 'filemask' | 'file_format'>>),
            ...v,
            branch: fetched.branch,
            head: fetched.head,
            platform_project_id: fetched.platformProjectId,
            source_language_id: v.source_language_id ?? project.source_language_id,
            project_id: project.id,
            created_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        this.vcs.adopt(staging, component.id);
        adopted = component.id;
        await recordChange(trx, {
          projectId: project.id,
          componentId: component.id,
          userId: actor.user!.id,
          authorId: actor.user!.id,
          action: ACTION.CREATE_COMPONENT,
          target: component.name,
          timestamp: now,
        });
        const scan = await scanComponent(trx, this.vcs, component, fetched.head, { userId: actor.user!.id, trx });
        return { component: await trx.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow(), scan };
      });
      await this.analyze();
      return created;
    } catch (err) {
      this.vcs.discard(staging);
      if (adopted !== null) this.vcs.remove(adopted);
      if (isUniqueViolation(err)) throw Errors.invalid({ slug: ['Component with this URL slug already exists.'] });
      this.scanFailure(err);
    }
  }

  async update(actor: Actor, project: TranslationProjectRow, component: ComponentRow, input: ComponentInput, partial: boolean): Promise<ComponentRow> {
    requireAdmin(actor, 'Can not edit component');
    const v = await this.validate(project, input, partial, component);
    const changed = Object.fromEntries(Object.entries(v).filter(([k, val]) => component[k as keyof ComponentRow] !== val)) as Values;
    const rescan = SOURCE_FIELDS.some((f) => f in changed);
    return this.locks.run(String(component.id), async () => {
      let fetched: { branch: string; head: string; platformProjectId: number | null } | null = null;
      if ('repo' in changed || 'branch' in changed)
        fetched = await this.fetch(actor, this.vcs.mirrorDir(component.id), v.repo ?? component.repo, v.branch ?? component.branch);
      try {
        return await this.db.kysely.transaction().execute(async (trx) => {
          const set: Values = { ...changed };
          if (fetched) Object.assign(set, { branch: fetched.branch, head: fetched.head, platform_project_id: fetched.platformProjectId });
          const row = Object.keys(set).length
            ? await trx.updateTable('components').set(set).where('id', '=', component.id).returningAll().executeTakeFirstOrThrow()
            : component;
          const by = { projectId: project.id, componentId: component.id, userId: actor.user!.id, authorId: actor.user!.id, timestamp: nowIso() };
          if (changed.slug !== undefined) await recordChange(trx, { ...by, action: ACTION.RENAME_COMPONENT, target: row.slug, old: component.slug });
          if (changed.license !== undefined) await recordChange(trx, { ...by, action: ACTION.LICENSE_CHANGE, target: row.license, old: component.license });
          if (rescan) await scanComponent(trx, this.vcs, row, row.head, { userId: actor.user!.id, full: true, trx });
          return trx.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow();
        });
      } catch (err) {
        this.scanFailure(err);
      }
    });
  }

  /**
   * `pull`: fetch and, when the branch moved, scan what changed (21 Rebased repository);
   * `file-scan`: read every file again. The local branch is fast-forwarded to the upstream when it has
   * no commits of its own; otherwise it stays (merging is the repository service's `pull`).
   */
  async refresh(actor: Actor, component: ComponentRow, operation: 'pull' | 'file-scan'): Promise<ScanResult | null> {
    return this.locks.run(String(component.id), async () => {
      const dir = this.vcs.mirrorDir(component.id);
      const fetched = await this.fetch(actor, dir, component.repo, component.branch, false);
      if (fetched.head !== fetched.remote && (await this.vcs.isAncestor(dir, fetched.head, fetched.remote))) {
        await this.vcs.mirror(component.id).updateRef(`refs/heads/${fetched.branch}`, fetched.remote, fetched.head);
        fetched.head = fetched.remote;
      }
      if (operation === 'pull' && fetched.head === component.head) return null;
      try {
        const scanned = await this.db.kysely.transaction().execute(async (trx) => {
          if (fetched.head !== component.head) {
            await recordChange(trx, {
              projectId: component.project_id,
              componentId: component.id,
              userId: actor.user?.id ?? null,
              authorId: actor.user?.id ?? null,
              action: ACTION.REBASE,
            });
          }
          return scanComponent(trx, this.vcs, component, fetched.head, { userId: actor.user?.id ?? null, full: operation === 'file-scan', trx });
        });
        if (scanned.parsed) await this.analyze();
        return scanned;
      } catch (err) {
        this.scanFailure(err);
      }
    });
  }

  /**
   * `POST lock/` (reference §1.4): the caller checked the permission (component.lock) before the body;
   * a change record (14 lock, 15 unlock) when the state changes. Returns the state asked for.
   */
  async setLock(actor: Actor, project: TranslationProjectRow, component: ComponentRow, input: object): Promise<boolean> {
    const lock = lockField(input);
    if (Boolean(component.locked) !== lock) {
      await this.db.kysely.transaction().execute(async (trx) => {
        await trx
          .updateTable('components')
          .set({ locked: lock ? 1 : 0 })
          .where('id', '=', component.id)
          .execute();
        await recordChange(trx, {
          projectId: project.id,
          componentId: component.id,
          userId: actor.user?.id ?? null,
          authorId: actor.user?.id ?? null,
          action: lock ? ACTION.LOCK : ACTION.UNLOCK,
        });
      });
    }
    return Boolean(lock);
  }

  /**
   * A project's `POST lock/` (Weblate's Project.do_lock): the project and every component of it locked
   * or unlocked, a change record for each component whose state changes. The caller checked
   * project.edit before the body. Returns the project's state (projectLocked).
   */
  async setProjectLock(actor: Actor, project: TranslationProjectRow, input: object): Promise<boolean> {
    const lock = lockField(input);
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx
        .updateTable('translation_projects')
        .set({ locked: lock ? 1 : 0 })
        .where('id', '=', project.id)
        .execute();
      const changing = await trx
        .selectFrom('components')
        .select('id')
        .where('project_id', '=', project.id)
        .where('locked', '=', lock ? 0 : 1)
        .orderBy('id')
        .execute();
      if (!changing.length) return;
      await trx
        .updateTable('components')
        .set({ locked: lock ? 1 : 0 })
        .where('project_id', '=', project.id)
        .execute();
      await recordChange(
        trx,
        changing.map((c) => ({
          projectId: project.id,
          componentId: c.id,
          userId: actor.user?.id ?? null,
          authorId: actor.user?.id ?? null,
          action: lock ? ACTION.LOCK : ACTION.UNLOCK,
        })),
      );
    });
    return this.projectLocked({ ...project, locked: lock ? 1 : 0 });
  }

  /** Weblate's Project.locked: it has components and every one is locked (or the project itself is) */
  async projectLocked(project: TranslationProjectRow): Promise<boolean> {
    const row = await this.db.kysely
      .selectFrom('components')
      .select([(eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.sum<number>('locked').as('locked')])
      .where('project_id', '=', project.id)
      .executeTakeFirstOrThrow();
    const n = Number(row.n);
    if (n === 0) return Boolean(project.locked);
    return Number(row.locked ?? 0) === n;
  }

  async delete(actor: Actor, project: TranslationProjectRow, component: ComponentRow): Promise<void> {
    requireAdmin(actor, 'Can not delete component');
    await this.db.kysely.transaction().execute(async (trx) => {
      await this.deleteRows(trx, component.id);
      await recordChange(trx, {
        projectId: project.id,
        userId: actor.user!.id,
        authorId: actor.user!.id,
        action: ACTION.REMOVE_COMPONENT,
        target: component.slug,
      });
    });
    this.removeMirror(component.id);
  }

  /** The rows of a component (its changes included), inside the caller's transaction. */
  async deleteRows(trx: Transaction<Database>, componentId: number): Promise<void> {
    await trx.deleteFrom('units').where('component_id', '=', componentId).execute();
    await trx.deleteFrom('translations').where('component_id', '=', componentId).execute();
    await trx.deleteFrom('translation_changes').where('component_id', '=', componentId).execute();
    await trx.deleteFrom('components').where('id', '=', componentId).execute();
  }

  removeMirror(componentId: number): void {
    this.vcs.remove(componentId);
  }

  /**
   * At start: removes the mirrors no component owns and the staging directories left behind — by a
   * process killed while creating a component (a staged fetch, or a mirror adopted in a transaction
   * that never committed; on PostgreSQL its id is never used again) or while deleting one. They hold
   * copies of repositories, private ones too. Another node may be creating a component right now, so
   * only what has not been written for `graceMs` goes (a creation's fetch is limited to minutes).
   */
  async removeLeftovers(graceMs = LEFTOVER_GRACE_MS): Promise<string[]> {
    const old = (modifiedMs: number) => modifiedMs < Date.now() - graceMs;
    const candidates = this.vcs.leftovers().filter((l) => old(l.modifiedMs));
    const ids = candidates.flatMap((l) => (l.componentId === null ? [] : [l.componentId]));
    const owned = new Set<number>();
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db.kysely
        .selectFrom('components')
        .select('id')
        .where('id', 'in', ids.slice(i, i + 500))
        .execute();
      for (const r of rows) owned.add(r.id);
    }
    const removed: string[] = [];
    for (const l of candidates) {
      if (l.componentId !== null && owned.has(l.componentId)) continue;
      // written since it was listed: adopted or fetched into by a creation in progress
      const now = this.vcs.lastWritten(l.dir);
      if (now === null || !old(now)) continue;
      this.vcs.discard(l.dir);
      removed.push(l.dir);
    }
    return removed;
  }
}

/** The lock request's `lock` (a DRF BooleanField, required): field errors otherwise. */
function lockField(input: object): boolean {
  const e = new FieldErrors();
  const lock = boolField(e, input, 'lock');
  if (lock === undefined && !e.has('lock')) e.add('lock', 'This field is required.');
  e.throwIfAny();
  return Boolean(lock);
}

/** A relative path inside the repository: no `..`, no leading `/` or `-`, no control characters. */
function safeRepoPath(p: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (!p || p.startsWith('/') || p.startsWith('-') || /[\x00-\x1f\x7f\\]/.test(p)) return false;
  return p.split('/').every((s) => s !== '..' && s !== '.' && s !== '');
}
