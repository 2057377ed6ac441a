// Users' SSH keys: GitLab's Key model — create with validation (a parseable OpenSSH
// public key, the application settings' key restrictions, a fingerprint nobody uses yet), list, find by
// id or fingerprint, delete; key_create/key_destroy system hook events.
import { keyColumns } from './ssh-public-key.ts';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database, DeployKeyProjectRow, KeyRow, UserRow } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import type { FeatureDeps } from '../deps.ts';
import { recordKeyEvent } from './key-events.ts';
import { FINGERPRINT_TAKEN, checkNewKey, type NewKeyInput } from './key-validation.ts';

const INT_MAX = 2 ** 31 - 1;
/** Keys::LastUsedService::TIMEOUT: last_used_at is written at most once a day per key. */
const LAST_USED_RESOLUTION_MS = 24 * 60 * 60 * 1000;

export type KeyQuery = SelectQueryBuilder<Database, 'keys', KeyRow>;

/** KeysFinder::InvalidFingerprint: a fingerprint parameter of neither form. */
export class InvalidFingerprint extends Error {}

/** Key#expired? (Expirable): an expiry at or before now. */
export function keyExpired(key: Pick<KeyRow, 'expires_at'>, now = Date.now()): boolean {
  return key.expires_at !== null && Date.parse(key.expires_at) <= now;
}

/**
 * Key#publishable_key: the type and base64 of the key, the comment replaced by the owner's name and the
 * instance's host, so that a comment holding an e-mail address does not leak.
 */
export function publishableKey(key: Pick<KeyRow, 'key'>, ownerName: string | null, host: string): string {
  const [type, b64] = key.key.split(/\s+/);
  return ownerName === null ? `${type} ${b64}` : `${type} ${b64} ${ownerName} (${host})`;
}

/** KeysFinder#valid_fingerprint_param? and the column the form is looked up in. */
export function fingerprintLookup(fingerprint: string): { column: 'fingerprint' | 'fingerprint_sha256'; value: string } {
  if (/^sha256:/i.test(fingerprint)) {
    const b64 = fingerprint.replace(/^sha256:/i, '');
    if (Buffer.from(b64, 'base64').length !== 32) throw new InvalidFingerprint();
    return { column: 'fingerprint_sha256', value: `SHA256:${b64}` };
  }
  if (!/^([0-9a-fA-F]{2}:){15}[0-9a-fA-F]{2}/.test(fingerprint)) throw new InvalidFingerprint();
  return { column: 'fingerprint', value: fingerprint };
}

export class KeysService {
  constructor(readonly deps: FeatureDeps) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /** The instance's host name, as Gitlab.config.gitlab.host (publishable keys name it). */
  get host(): string {
    return new URL(this.deps.externalUrl).hostname;
  }

  /** user.keys: the user's own keys (deploy keys they created are not among them), oldest first. */
  listQuery(userId: number): KeyQuery {
    return this.db.selectFrom('keys').selectAll().where('user_id', '=', userId).where('type', '=', 'user').orderBy('id');
  }

  /** One of the user's keys, or 404 "Key Not Found" (another user's key included). */
  async mustFindOf(userId: number, keyId: number): Promise<KeyRow> {
    const key = keyId >= 1 && keyId <= INT_MAX ? await this.listQuery(userId).where('id', '=', keyId).executeTakeFirst() : undefined;
    if (!key) throw Errors.notFound('Key');
    return key;
  }

  /** Key.find: any key, a deploy key included; undefined when there is none. */
  async byId(id: number): Promise<KeyRow | undefined> {
    if (!Number.isInteger(id) || id < 1 || id > INT_MAX) return undefined;
    return this.db.selectFrom('keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * KeysFinder by fingerprint: "SHA256:…" (either case of the prefix) or MD5 colon hex; throws
   * InvalidFingerprint when the value is neither. The most recently used key first, as GitLab orders.
   */
  async byFingerprint(fingerprint: string): Promise<KeyRow | undefined> {
    const { column, value } = fingerprintLookup(fingerprint);
    return this.db
      .selectFrom('keys')
      .selectAll()
      .where(column, '=', value)
      .orderBy((eb) => eb.case().when('last_used_at', 'is', null).then(1).else(0).end())
      .orderBy('last_used_at', 'desc')
      .orderBy('id')
      .executeTakeFirst();
  }

  /** The key an SSH client offers (its wire blob's SHA256 fingerprint), user key or deploy key. */
  async byBlobFingerprint(sha256: string): Promise<KeyRow | undefined> {
    return this.db.selectFrom('keys').selectAll().where('fingerprint_sha256', '=', sha256).executeTakeFirst();
  }

  /** The deploy_keys_projects rows of a deploy key (GET /keys?fingerprint= shows them). */
  async deployKeyProjects(keyId: number): Promise<DeployKeyProjectRow[]> {
    return this.db.selectFrom('deploy_keys_projects').selectAll().where('deploy_key_id', '=', keyId).orderBy('id').execute();
  }

  /**
   * Keys::CreateService: validates as GitLab's Key model (400 {"message": {field: [...]}} when refused;
   * nothing written), inserts, and records key_create in the same transaction.
   */
  async create(_actor: Actor, owner: UserRow, input: NewKeyInput): Promise<KeyRow> {
    const settings = await this.deps.settings.get();
    try {
      return await this.db.transaction().execute(async (trx) => {
        const check = await checkNewKey(trx, settings, input);
        if (!check.ok) throw Errors.invalid(check.errors);
        const now = nowIso();
        const key = await trx
          .insertInto('keys')
          .values({
            type: 'user',
            user_id: owner.id,
            title: check.title,
            ...keyColumns(check.parsed),
            usage_type: check.usageType,
            expires_at: check.expiresAt,
            last_used_at: null,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordKeyEvent(trx, 'key_create', key);
        return key;
      });
    } catch (err) {
      // another request added the same key between the check and the insert
      if (isUniqueViolation(err)) throw Errors.invalid(FINGERPRINT_TAKEN);
      throw err;
    }
  }

  /** Keys::DestroyService: deletes the key and records key_destroy in the same transaction. */
  async remove(_actor: Actor, key: KeyRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('keys').where('id', '=', key.id).returningAll().executeTakeFirst();
      if (gone) await recordKeyEvent(trx, 'key_destroy', gone);
    });
  }

  /** Keys::LastUsedService: records that the key authenticated, at most once a day. */
  async markUsed(key: Pick<KeyRow, 'id' | 'last_used_at'>, now = Date.now()): Promise<void> {
    if (key.last_used_at !== null && now - Date.parse(key.last_used_at) < LAST_USED_RESOLUTION_MS) return;
    await this.db
      .updateTable('keys')
      .set({ last_used_at: new Date(now).toISOString() })
      .where('id', '=', key.id)
      .execute();
  }
}
