// CI/CD variables (GitLab's Ci::Variable, Ci::GroupVariable, Ci::InstanceVariable, Ci::ChangeVariableService and
// the API's VariablesHelpers): one table, three owners. Values are sealed at rest with the process's keyring and
// opened only for those who administer the owner's variables and for the runner of a job that may have them.
//
// What a job gets (Ci::Build#variables, later entries win on the runner): the instance's, then each group's from
// the root down to the project's own group, then the project's — each only on a protected ref when protected, and
// only where its environment scope matches the job's environment (`*` everywhere; a more specific scope after a
// less specific one of the same key, so it wins).
import type { Kysely } from 'kysely';
import type { CiVariableRow, Database, NamespaceRow, ProjectRow } from '../../../db/schema.ts';
import { isUniqueViolation } from '../../../db/sql.ts';
import { readVersions, stamp, type Versions } from '../../../db/versions.ts';
import { Errors, type FieldErrors } from '../../../lib/errors.ts';
import type { Keyring } from '../../../lib/secrets.ts';
import { nowIso } from '../../../lib/time.ts';
import { VersionedCache } from '../../../lib/versioned-cache.ts';
import type { Actor } from '../../access/actor.ts';
import { traversalIds } from '../../access/policy.ts';
import type { CiDeps } from '../deps.ts';

export type VariableOwner = { kind: 'project'; project: ProjectRow } | { kind: 'group'; group: NamespaceRow } | { kind: 'instance' };

export const VARIABLE_TYPES = ['env_var', 'file'] as const;

export interface VariableInput {
  key?: string;
  value?: string;
  variable_type?: string;
  protected?: boolean;
  masked?: boolean;
  masked_and_hidden?: boolean;
  raw?: boolean;
  environment_scope?: string;
  description?: string | null;
}

/** Entities::Ci::Variable: `value` is null for a hidden variable; instance variables have no scope or hidden. */
export interface VariableView {
  variable_type: string;
  key: string;
  value: string | null;
  hidden: boolean;
  protected: boolean;
  masked: boolean;
  raw: boolean;
  environment_scope: string;
  description: string | null;
}

/** A variable as the runner receives it (gitlab-runner's common.JobVariable). */
export interface SecretVariable {
  key: string;
  value: string;
  public: boolean;
  masked: boolean;
  raw: boolean;
  file?: boolean;
}

/** Ci::Maskable: one line of at least 8 characters of the Base64 alphabet and `@:.~`; with raw, any 8 non-spaces. */
const MASKABLE = /^[a-zA-Z0-9_+=/@:.~-]{8,}$/;
const MASKABLE_RAW = /^\S{8,}$/;
const KEY = /^[a-zA-Z0-9_]+$/;
/** Gitlab::Regex.environment_scope_regex */
const SCOPE = /^([\p{L}\p{N}_\-/${}. ]|\*)+$/u;
const MAX_VALUE = 10_000;
/** the plan limits of a self-managed instance (ci_instance_level_variables, group and project ci variables) */
export const VARIABLE_LIMITS = { instance: 25, group: 30_000, project: 8_000 } as const;

const OWNER_NAMES = { instance: 'instance', group: 'group', project: 'project' } as const;

/** the columns a job's resolution reads (values still sealed) */
const JOB_COLUMNS = ['id', 'project_id', 'group_id', 'key', 'value', 'variable_type', 'protected', 'masked', 'raw', 'environment_scope'] as const;
type JobVariableRow = Pick<CiVariableRow, (typeof JOB_COLUMNS)[number]>;

export class VariablesService {
  private readonly k: Kysely<Database>;
  /**
   * The sealed rows a project's jobs read, by project and group path, as of the `ci_variables` version: a claim
   * reads them again only after a write to the variables (reading the versions costs no query while nothing wrote).
   */
  private readonly jobRows = new VersionedCache<JobVariableRow[]>(1000, 60_000);

  constructor(
    private readonly deps: CiDeps,
    private readonly keyring: Keyring,
  ) {
    this.k = deps.db.kysely;
  }

  // ---- who may -------------------------------------------------------------------------------

  /** The project whose variables `actor` administers (admin_cicd_variables): 404 when unseen, 403 otherwise. */
  async projectOwner(actor: Actor, id: string): Promise<VariableOwner> {
    const ctx = await this.deps.resolve.project(actor, id);
    if (!ctx.access.abilities.has('admin_cicd_variables')) throw Errors.forbidden();
    return { kind: 'project', project: ctx.project };
  }

  async groupOwner(actor: Actor, id: string): Promise<VariableOwner> {
    const ctx = await this.deps.resolve.group(actor, id);
    if (!ctx.access.abilities.has('admin_cicd_variables') && !actor.isAdmin) throw Errors.forbidden();
    return { kind: 'group', group: ctx.group };
  }

  instanceOwner(actor: Actor): VariableOwner {
    if (!actor.isAdmin) throw Errors.forbidden();
    return { kind: 'instance' };
  }

  // ---- reads ---------------------------------------------------------------------------------

  private ofOwner(owner: VariableOwner) {
    const q = this.k.selectFrom('ci_variables').selectAll();
    if (owner.kind === 'project') return q.where('project_id', '=', owner.project.id);
    if (owner.kind === 'group') return q.where('group_id', '=', owner.group.id);
    return q.where('project_id', 'is', null).where('group_id', 'is', null);
  }

  async list(owner: VariableOwner): Promise<VariableView[]> {
    const rows = await this.ofOwner(owner).orderBy('id').execute();
    return rows.map((r) => this.view(r));
  }

  /**
   * VariablesHelpers#find_variable: the owner's variable `key` (of `scope` when given); 404 Variable Not Found
   * when none, 409 when several scopes hold the key and none was named.
   */
  async find(owner: VariableOwner, key: string, scope?: string): Promise<CiVariableRow> {
    let q = this.ofOwner(owner).where('key', '=', key);
    if (scope !== undefined && owner.kind !== 'instance') q = q.where('environment_scope', '=', scope);
    const rows = await q.limit(2).execute();
    if (rows.length > 1) throw Errors.conflict("There are multiple variables with provided parameters. Please use 'filter[environment_scope]'");
    if (!rows[0]) throw Errors.notFound('Variable');
    return rows[0];
  }

  async get(owner: VariableOwner, key: string, scope?: string): Promise<VariableView> {
    return this.view(await this.find(owner, key, scope));
  }

  view(row: CiVariableRow): VariableView {
    return {
      variable_type: row.variable_type,
      key: row.key,
      value: row.hidden ? null : this.keyring.open(row.value),
      hidden: row.hidden === 1,
      protected: row.protected === 1,
      masked: row.masked === 1,
      raw: row.raw === 1,
      environment_scope: row.environment_scope,
      description: row.description,
    };
  }

  // ---- writes --------------------------------------------------------------------------------

  /** Ci::ChangeVariableService create: every attribute checked before anything is written. */
  async create(owner: VariableOwner, input: VariableInput): Promise<VariableView> {
    const hidden = owner.kind !== 'instance' && input.masked_and_hidden === true;
    const next = {
      key: input.key ?? '',
      value: input.value ?? '',
      variable_type: input.variable_type ?? 'env_var',
      protected: input.protected ?? false,
      masked: hidden || (input.masked ?? false),
      hidden,
      raw: input.raw ?? false,
      environment_scope: owner.kind === 'instance' ? '*' : (input.environment_scope ?? '*'),
      description: input.description ?? null,
    };
    const errors = validate(next);
    const count = await this.ofOwner(owner)
      .clearSelect()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= VARIABLE_LIMITS[owner.kind]) {
      (errors.base ??= []).push(`Maximum number of ${OWNER_NAMES[owner.kind]} ci variables (${VARIABLE_LIMITS[owner.kind]}) exceeded`);
    }
    if (!errors.key && (await this.ofOwner(owner).where('key', '=', next.key).where('environment_scope', '=', next.environment_scope).executeTakeFirst())) {
      errors.key = [`(${next.key}) has already been taken`];
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    const now = nowIso();
    try {
      const row = await this.k
        .insertInto('ci_variables')
        .values({
          project_id: owner.kind === 'project' ? owner.project.id : null,
          group_id: owner.kind === 'group' ? owner.group.id : null,
          key: next.key,
          value: this.keyring.seal(next.value),
          variable_type: next.variable_type,
          protected: next.protected ? 1 : 0,
          masked: next.masked ? 1 : 0,
          hidden: next.hidden ? 1 : 0,
          raw: next.raw ? 1 : 0,
          environment_scope: next.environment_scope,
          description: next.description,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.view(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.invalid({ key: [`(${next.key}) has already been taken`] });
      throw e;
    }
  }

  /** Ci::ChangeVariableService update: the key and the hidden flag stay; the rest as given, checked as a whole. */
  async update(owner: VariableOwner, key: string, scope: string | undefined, input: VariableInput): Promise<VariableView> {
    const row = await this.find(owner, key, scope);
    const hidden = row.hidden === 1;
    const next = {
      key: row.key,
      value: input.value ?? this.keyring.open(row.value),
      variable_type: input.variable_type ?? row.variable_type,
      protected: input.protected ?? row.protected === 1,
      masked: hidden || (input.masked ?? row.masked === 1),
      hidden,
      raw: input.raw ?? row.raw === 1,
      environment_scope: owner.kind === 'instance' ? '*' : (input.environment_scope ?? row.environment_scope),
      description: input.description !== undefined ? input.description : row.description,
    };
    const errors = validate(next);
    if (
      next.environment_scope !== row.environment_scope &&
      (await this.ofOwner(owner).where('key', '=', next.key).where('environment_scope', '=', next.environment_scope).executeTakeFirst())
    ) {
      errors.key = [`(${next.key}) has already been taken`];
    }
    if (Object.keys(errors).length) throw Errors.invalid(errors);
    try {
      const updated = await this.k
        .updateTable('ci_variables')
        .set({
          value: input.value !== undefined || this.keyring.stale(row.value) ? this.keyring.seal(next.value) : row.value,
          variable_type: next.variable_type,
          protected: next.protected ? 1 : 0,
          masked: next.masked ? 1 : 0,
          raw: next.raw ? 1 : 0,
          environment_scope: next.environment_scope,
          description: next.description,
          updated_at: nowIso(),
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return this.view(updated);
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.invalid({ key: [`(${next.key}) has already been taken`] });
      throw e;
    }
  }

  async remove(owner: VariableOwner, key: string, scope: string | undefined): Promise<void> {
    const row = await this.find(owner, key, scope);
    await this.k.deleteFrom('ci_variables').where('id', '=', row.id).execute();
  }

  /** Re-seals every value with the keyring's first key (after a new key was put first); the count re-sealed. */
  async reseal(): Promise<number> {
    let done = 0;
    let after = 0;
    for (;;) {
      const rows = await this.k.selectFrom('ci_variables').select(['id', 'value']).where('id', '>', after).orderBy('id').limit(500).execute();
      if (!rows.length) return done;
      for (const r of rows) {
        after = r.id;
        if (!this.keyring.stale(r.value)) continue;
        const value = this.keyring.seal(this.keyring.open(r.value));
        await this.k.updateTable('ci_variables').set({ value }).where('id', '=', r.id).where('value', '=', r.value).execute();
        done++;
      }
    }
  }

  /** forget the rows read and the values opened so far (the bench's cold path: the query, every value decrypted) */
  forgetCached(): void {
    this.jobRows.clear();
    this.keyring.forgetOpened();
  }

  // ---- what a job gets -----------------------------------------------------------------------

  /**
   * The instance's, groups' and project's variables a job of `project` gets, in the order the runner applies
   * them (later wins): protected ones only on a protected ref, scoped ones only where `environment` matches.
   */
  async forJob(
    project: ProjectRow,
    namespace: NamespaceRow,
    opts: { protectedRef: boolean; environment: string | null },
    versions?: Versions,
  ): Promise<SecretVariable[]> {
    const groupIds = namespace.type === 'Group' ? traversalIds(namespace) : [];
    const key = `${project.id}:${groupIds.join(',')}`;
    // the stamp is taken before the query: rows read after a version are never older than it
    const at = stamp(versions ?? (await readVersions(this.deps.db)), ['ci_variables']);
    let rows = this.jobRows.get(key, at);
    if (!rows) {
      rows = await this.k
        .selectFrom('ci_variables')
        .select(JOB_COLUMNS)
        .where((eb) =>
          eb.or([
            eb('project_id', '=', project.id),
            ...(groupIds.length ? [eb('group_id', 'in', groupIds)] : []),
            eb.and([eb('project_id', 'is', null), eb('group_id', 'is', null)]),
          ]),
        )
        .execute();
      this.jobRows.set(key, at, rows);
    }
    const depth = new Map(groupIds.map((id, i) => [id, i + 1]));
    type Row = JobVariableRow;
    const level = (r: Row) => (r.project_id !== null ? groupIds.length + 1 : r.group_id !== null ? (depth.get(r.group_id) ?? 0) : 0);
    const applies = rows.filter((r) => (opts.protectedRef || r.protected !== 1) && scopeMatches(r.environment_scope, opts.environment));
    applies.sort((a, b) => level(a) - level(b) || specificity(a.environment_scope) - specificity(b.environment_scope) || a.id - b.id);
    return applies.map((r) => ({
      key: r.key,
      value: this.keyring.open(r.value),
      public: false,
      masked: r.masked === 1,
      raw: r.raw === 1,
      ...(r.variable_type === 'file' ? { file: true } : {}),
    }));
  }
}

/** The model's validations, GitLab's messages, by attribute. */
function validate(v: {
  key: string;
  value: string;
  variable_type: string;
  masked: boolean;
  raw: boolean;
  environment_scope: string;
  description: string | null;
}): Record<string, string[]> {
  const errors: FieldErrors & Record<string, string[]> = {};
  const add = (field: string, msg: string) => (errors[field] ??= []).push(msg);
  if (!v.key) add('key', "can't be blank");
  else if (v.key.length > 255) add('key', 'is too long (maximum is 255 characters)');
  else if (!KEY.test(v.key)) add('key', "can contain only letters, digits and '_'.");
  if (v.value.length > MAX_VALUE) add('value', `is too long (maximum is ${MAX_VALUE} characters)`);
  if (v.masked && !(v.raw ? MASKABLE_RAW : MASKABLE).test(v.value)) add('value', 'is invalid');
  if (!(VARIABLE_TYPES as readonly string[]).includes(v.variable_type)) add('variable_type', 'is not included in the list');
  if (!v.environment_scope) add('environment_scope', "can't be blank");
  else if (v.environment_scope.length > 255) add('environment_scope', 'is too long (maximum is 255 characters)');
  else if (!SCOPE.test(v.environment_scope)) {
    add('environment_scope', "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces");
  }
  if (v.description && v.description.length > 255) add('description', 'is too long (maximum is 255 characters)');
  return errors;
}

/** Ci::EnvironmentScope: `*` matches every environment (and none); `*` inside a scope matches any characters. */
export function scopeMatches(scope: string, environment: string | null): boolean {
  if (scope === '*') return true;
  if (!environment) return false;
  if (!scope.includes('*')) return scope === environment;
  const re = new RegExp(`^${scope.split('*').map(escapeRegExp).join('.*')}$`);
  return re.test(environment);
}

/** `*` least, a wildcard pattern more, an exact name most (by its literal length among patterns) */
function specificity(scope: string): number {
  if (scope === '*') return 0;
  if (scope.includes('*')) return 1 + scope.replaceAll('*', '').length / 1000;
  return 2;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
