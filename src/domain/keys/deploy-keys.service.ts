// Deploy keys (GitLab's DeployKey, DeployKeysProject, lib/api/deploy_keys.rb, DeployKeys::CreateService,
// Projects::EnableDeployKeyService, DeployKeyPolicy): a row of `keys` with type 'deploy', enabled on
// projects through deploy_keys_projects, each link with its own can_push. The project routes need
// admin_project (Maintainer+); a key the caller may enable elsewhere is a public one or one enabled on a
// project they belong to (User#accessible_deploy_keys). Disabling a private key on its last project
// deletes it (DeployKeysProject#destroy_orphaned_deploy_key); public keys stay.
import { keyColumns } from './ssh-public-key.ts';
import type { Kysely } from 'kysely';
import type { Database, DeployKeyProjectRow, KeyRow, NamespaceRow, ProjectRow } from '../../db/schema.ts';
import { isInt32, isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { ResolvedProject } from '../access/resolve.ts';
import type { FeatureDeps } from '../deps.ts';
import { recordKeyEvent } from './key-events.ts';
import { checkNewKey, FINGERPRINT_TAKEN, sanitizeKey } from './key-validation.ts';

const TITLE_MAX = 255;

/** A key as enabled on one project: the key's row and the link's. */
export interface DeployKeyLink {
  key: KeyRow;
  link: DeployKeyProjectRow;
}

export interface DeployKeyInput {
  title?: string;
  key?: string;
  can_push?: boolean;
  expires_at?: string | null;
}

/** A project a deploy key is enabled on, for the administrators' list. */
export interface DeployKeyProjectRef {
  can_push: number;
  project: ProjectRow;
  namespace: NamespaceRow;
}

/** What the git transports need to know about a deploy key on a project. */
export interface DeployKeyAccess {
  key: KeyRow;
  canPush: boolean;
}

/** Validation errors of the key behind a DeployKeysProject (Rails' autosave prefix, "deploy_key.title"). */
function nested(errors: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(errors).map(([k, v]) => [`deploy_key.${k}`, v]));
}

/** The SHA256 fingerprint of the pasted key, when it is one. */
function fingerprintOf(text: string): string | null {
  return sanitizeKey(text)?.parsed.sha256 ?? null;
}

/**
 * Before a user is deleted: the deploy keys they created stay, with no creator (GitLab's DeployKey#user
 * falls back to the ghost user); their own keys go with the user row.
 */
export async function keepDeployKeysOf(trx: Kysely<Database>, userId: number): Promise<void> {
  await trx.updateTable('keys').set({ user_id: null }).where('type', '=', 'deploy').where('user_id', '=', userId).execute();
}

export class DeployKeysService {
  constructor(readonly deps: FeatureDeps) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  // ---- who may ----------------------------------------------------------------------------

  /** authorize_admin_project: the project, if the actor may administer it (404 unseen, 403 seen). */
  async project(actor: Actor, id: string): Promise<ResolvedProject> {
    const r = await this.deps.resolve.project(actor, id);
    if (!r.access.abilities.has('admin_project')) throw Errors.forbidden();
    return r;
  }

  /** User#accessible_deploy_keys (and every deploy key for an administrator): as SQL on keys.id. */
  private accessibleKeyIds(actor: Actor) {
    const links = this.db.selectFrom('deploy_keys_projects').select('deploy_keys_projects.deploy_key_id');
    return actor.isAdmin ? null : links.where('deploy_keys_projects.project_id', 'in', this.deps.policy.memberProjectIds(actor.user!.id));
  }

  // ---- a project's keys -------------------------------------------------------------------

  /** GET /projects/:id/deploy_keys: the links in the order they were made, with their keys. */
  listQuery(projectId: number) {
    return this.db
      .selectFrom('deploy_keys_projects')
      .innerJoin('keys', 'keys.id', 'deploy_keys_projects.deploy_key_id')
      .selectAll('keys')
      .select(['deploy_keys_projects.can_push as link_can_push'])
      .where('deploy_keys_projects.project_id', '=', projectId)
      .orderBy('deploy_keys_projects.id');
  }

  private async findLink(db: Kysely<Database>, projectId: number, keyId: number): Promise<DeployKeyLink | undefined> {
    // an id beyond the id column names no key
    if (!isInt32(keyId)) return undefined;
    const link = await db
      .selectFrom('deploy_keys_projects')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('deploy_key_id', '=', keyId)
      .executeTakeFirst();
    if (!link) return undefined;
    const key = await db.selectFrom('keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
    return { key, link };
  }

  /** GET /projects/:id/deploy_keys/:key_id (find_by!: "404 Not found"). */
  async get(project: ProjectRow, keyId: number): Promise<DeployKeyLink> {
    const found = await this.findLink(this.db, project.id, keyId);
    if (!found) throw Errors.recordNotFound();
    return found;
  }

  /**
   * POST /projects/:id/deploy_keys: the same public key already enabled here is answered as it is; one
   * the actor may use (enabled on a project of theirs, or public) is enabled here with `can_push`;
   * otherwise a new key, validated as GitLab's Key (a fingerprint anybody uses, a user's key included,
   * is "has already been taken").
   */
  async create(actor: Actor, project: ProjectRow, input: DeployKeyInput): Promise<{ result: DeployKeyLink; created: KeyRow | null }> {
    const text = (input.key ?? '').trim();
    const canPush = input.can_push ? 1 : 0;
    const sha256 = fingerprintOf(text);
    const run = async (trx: Kysely<Database>) => {
      if (sha256) {
        const existing = await trx.selectFrom('keys').selectAll().where('fingerprint_sha256', '=', sha256).where('type', '=', 'deploy').executeTakeFirst();
        if (existing) {
          const here = await this.findLink(trx, project.id, existing.id);
          if (here) return { result: here, created: null };
          if (await this.mayUse(trx, actor, existing.id))
            return { result: { key: existing, link: await this.link(trx, existing.id, project.id, canPush) }, created: null };
        }
      }
      const settings = await this.deps.settings.get();
      const check = await checkNewKey(trx, settings, { title: input.title, key: text, expires_at: input.expires_at ?? null });
      if (!check.ok) throw Errors.invalid(nested(check.errors));
      const key = await this.insertKey(trx, actor, check, false);
      await recordKeyEvent(trx, 'key_create', key);
      return { result: { key, link: await this.link(trx, key.id, project.id, canPush) }, created: key };
    };
    const out = await this.transaction(run, nested(FINGERPRINT_TAKEN));
    return out;
  }

  /**
   * PUT /projects/:id/deploy_keys/:key_id: can_push of the link; the title only where GitLab's
   * update_deploy_key_title allows it (an administrator, or a private key enabled on this one project),
   * silently kept otherwise.
   */
  async update(actor: Actor, project: ProjectRow, keyId: number, input: { title?: string; can_push?: boolean }): Promise<DeployKeyLink> {
    if (input.title === undefined && input.can_push === undefined) throw Errors.param('title, can_push are missing, at least one parameter must be provided');
    const found = await this.get(project, keyId);
    let title: string | undefined;
    if (input.title !== undefined && (await this.mayRetitle(actor, found.key))) {
      if (input.title.trim() === '') throw Errors.invalid({ 'deploy_key.title': ["can't be blank"] });
      if ([...input.title].length > TITLE_MAX) throw Errors.invalid({ 'deploy_key.title': [`is too long (maximum is ${TITLE_MAX} characters)`] });
      title = input.title;
    }
    const now = nowIso();
    return this.db.transaction().execute(async (trx) => {
      let { key, link } = found;
      if (input.can_push !== undefined && Boolean(link.can_push) !== input.can_push)
        link = await trx
          .updateTable('deploy_keys_projects')
          .set({ can_push: input.can_push ? 1 : 0, updated_at: now })
          .where('id', '=', link.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      if (title !== undefined && title !== key.title)
        key = await trx.updateTable('keys').set({ title, updated_at: now }).where('id', '=', key.id).returningAll().executeTakeFirstOrThrow();
      return { key, link };
    });
  }

  /** DeployKeyPolicy's update_deploy_key_title for a key enabled on a project the actor administers. */
  private async mayRetitle(actor: Actor, key: KeyRow): Promise<boolean> {
    if (actor.isAdmin) return true;
    if (key.public) return false;
    const row = await this.db
      .selectFrom('deploy_keys_projects')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('deploy_key_id', '=', key.id)
      .executeTakeFirstOrThrow();
    return Number(row.n) === 1;
  }

  /**
   * POST /projects/:id/deploy_keys/:key_id/enable: a key the actor may use, enabled here (read-only) if
   * it is not yet; "404 Deploy key Not Found" otherwise.
   */
  async enable(actor: Actor, project: ProjectRow, keyId: number): Promise<KeyRow> {
    if (!isInt32(keyId)) throw Errors.notFound('Deploy key');
    const key = await this.db.selectFrom('keys').selectAll().where('id', '=', keyId).where('type', '=', 'deploy').executeTakeFirst();
    if (!key || !(await this.mayUse(this.db, actor, key.id))) throw Errors.notFound('Deploy key');
    try {
      if (!(await this.findLink(this.db, project.id, key.id))) await this.link(this.db, key.id, project.id, 0);
    } catch (err) {
      // another request enabled it first: enabled it is
      if (!isUniqueViolation(err)) throw err;
    }
    return key;
  }

  /**
   * DELETE /projects/:id/deploy_keys/:key_id: the key leaves the project; a private key that no project
   * uses any more is deleted (and a key_destroy event goes out). `unmodifiedSince` (ms): 412 when the
   * link changed after it.
   */
  async disable(project: ProjectRow, keyId: number, unmodifiedSince?: number): Promise<{ destroyed: KeyRow | null }> {
    return this.db.transaction().execute(async (trx) => {
      const found = await this.findLink(trx, project.id, keyId);
      if (!found) throw Errors.notFound('Deploy key');
      if (unmodifiedSince !== undefined && Math.floor(Date.parse(found.link.updated_at) / 1000) * 1000 > unmodifiedSince) throw Errors.preconditionFailed();
      await trx.deleteFrom('deploy_keys_projects').where('id', '=', found.link.id).execute();
      if (found.key.public) return { destroyed: null };
      const other = await trx.selectFrom('deploy_keys_projects').select('id').where('deploy_key_id', '=', keyId).limit(1).executeTakeFirst();
      if (other) return { destroyed: null };
      await trx.deleteFrom('keys').where('id', '=', keyId).execute();
      await recordKeyEvent(trx, 'key_destroy', found.key);
      return { destroyed: found.key };
    });
  }

  /**
   * The deploy keys the actor could enable on the project (the settings page's lists): public ones and
   * those of projects they belong to (User#accessible_deploy_keys, administrators included), not
   * enabled here yet, by id.
   */
  availableQuery(actor: Actor, projectId: number) {
    const links = this.db.selectFrom('deploy_keys_projects').select('deploy_keys_projects.deploy_key_id');
    const mine = links.where('deploy_keys_projects.project_id', 'in', this.deps.policy.memberProjectIds(actor.user!.id));
    const here = links.where('deploy_keys_projects.project_id', '=', projectId);
    return this.db
      .selectFrom('keys')
      .selectAll()
      .where('type', '=', 'deploy')
      .where((eb) => eb.or([eb('public', '=', 1), eb('id', 'in', mine)]))
      .where('id', 'not in', here)
      .orderBy('id');
  }

  /**
   * GET /users/:id/project_deploy_keys: the deploy keys of the projects both the actor and `userId` (the
   * actor alone when it is them) maintain, by id; "403 Forbidden - No common authorized projects found"
   * when there are none.
   */
  async commonQuery(actor: Actor, userId: number) {
    const MAINTAINER = 40;
    let projects = this.db
      .selectFrom('projects')
      .select('projects.id')
      .where('projects.id', 'in', this.deps.policy.memberProjectIds(actor.user!.id, MAINTAINER));
    if (userId !== actor.user!.id) projects = projects.where('projects.id', 'in', this.deps.policy.memberProjectIds(userId, MAINTAINER));
    if (!(await projects.limit(1).executeTakeFirst())) throw Errors.forbidden('No common authorized projects found');
    const keyIds = this.db
      .selectFrom('deploy_keys_projects')
      .select('deploy_keys_projects.deploy_key_id')
      .where('deploy_keys_projects.project_id', 'in', projects);
    return this.db.selectFrom('keys').selectAll().where('type', '=', 'deploy').where('id', 'in', keyIds).orderBy('id');
  }

  // ---- instance-wide (administrators) -----------------------------------------------------

  /** GET /deploy_keys: every deploy key (or the public ones), by id. */
  allQuery(onlyPublic: boolean) {
    let q = this.db.selectFrom('keys').selectAll().where('type', '=', 'deploy').orderBy('id');
    if (onlyPublic) q = q.where('public', '=', 1);
    return q;
  }

  /** The projects each key is enabled on, in the order of enabling (one query for a page of keys). */
  async projectsOf(keyIds: number[]): Promise<Map<number, DeployKeyProjectRef[]>> {
    const out = new Map<number, DeployKeyProjectRef[]>(keyIds.map((id) => [id, []]));
    if (!keyIds.length) return out;
    const rows = await this.db
      .selectFrom('deploy_keys_projects')
      .innerJoin('projects', 'projects.id', 'deploy_keys_projects.project_id')
      .selectAll('projects')
      .select(['deploy_keys_projects.deploy_key_id as dk_key_id', 'deploy_keys_projects.can_push as dk_can_push'])
      .where('deploy_keys_projects.deploy_key_id', 'in', keyIds)
      .orderBy('deploy_keys_projects.id')
      .execute();
    const namespaceIds = [...new Set(rows.map((r) => r.namespace_id))];
    const namespaces = new Map(
      (
        await this.db
          .selectFrom('namespaces')
          .selectAll()
          .where('id', 'in', namespaceIds.length ? namespaceIds : [0])
          .execute()
      ).map((n) => [n.id, n]),
    );
    for (const { dk_key_id, dk_can_push, ...project } of rows)
      out.get(dk_key_id)!.push({ can_push: dk_can_push, project: project as ProjectRow, namespace: namespaces.get(project.namespace_id)! });
    return out;
  }

  /** POST /deploy_keys (administrators): an instance-wide public key, enabled on no project yet. */
  async createPublic(actor: Actor, input: DeployKeyInput): Promise<KeyRow> {
    return this.transaction(async (trx) => {
      const settings = await this.deps.settings.get();
      const check = await checkNewKey(trx, settings, { title: input.title, key: (input.key ?? '').trim(), expires_at: input.expires_at ?? null });
      if (!check.ok) throw Errors.invalid(check.errors);
      const key = await this.insertKey(trx, actor, check, true);
      await recordKeyEvent(trx, 'key_create', key);
      return key;
    }, FINGERPRINT_TAKEN);
  }

  // ---- for the git transports -------------------------------------------------------------

  /**
   * The deploy key `keyId` on `projectId`: null when it is not enabled there (or is no deploy key);
   * `canPush` from the link. Expiry and protected branches are the caller's to check.
   */
  async accessOn(keyId: number, projectId: number): Promise<DeployKeyAccess | null> {
    const found = await this.findLink(this.db, projectId, keyId);
    if (!found || found.key.type !== 'deploy') return null;
    return { key: found.key, canPush: found.link.can_push === 1 };
  }

  // ---- helpers ----------------------------------------------------------------------------

  private async mayUse(trx: Kysely<Database>, actor: Actor, keyId: number): Promise<boolean> {
    if (actor.isAdmin) return true;
    const ids = this.accessibleKeyIds(actor)!;
    const row = await trx
      .selectFrom('keys')
      .select('id')
      .where('id', '=', keyId)
      .where('type', '=', 'deploy')
      .where((eb) => eb.or([eb('public', '=', 1), eb('id', 'in', ids)]))
      .executeTakeFirst();
    return !!row;
  }

  private async link(trx: Kysely<Database>, keyId: number, projectId: number, canPush: number): Promise<DeployKeyProjectRow> {
    const now = nowIso();
    return trx
      .insertInto('deploy_keys_projects')
      .values({ deploy_key_id: keyId, project_id: projectId, can_push: canPush, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  private async insertKey(
    trx: Kysely<Database>,
    actor: Actor,
    check: Extract<Awaited<ReturnType<typeof checkNewKey>>, { ok: true }>,
    isPublic: boolean,
  ): Promise<KeyRow> {
    const now = nowIso();
    const p = check.parsed;
    return trx
      .insertInto('keys')
      .values({
        type: 'deploy',
        user_id: actor.user?.id ?? null,
        title: check.title,
        ...keyColumns(p),
        usage_type: 'auth_and_signing',
        public: isPublic ? 1 : 0,
        expires_at: check.expiresAt,
        last_used_at: null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** A transaction whose unique violations (a key or link another request wrote first) become `taken`. */
  private async transaction<T>(fn: (trx: Kysely<Database>) => Promise<T>, taken: Record<string, string[]> = FINGERPRINT_TAKEN): Promise<T> {
    try {
      return await this.db.transaction().execute(fn);
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.invalid(taken);
      throw err;
    }
  }
}
