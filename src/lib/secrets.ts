// Token digests, password hashing, constant-time comparison and random secrets.
import crypto from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(crypto.scrypt) as (pw: string, salt: Buffer, len: number, opts: crypto.ScryptOptions) => Promise<Buffer>;
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** Salted SHA-256 digest of a token: the instance salt is a secret kept in the database. */
export function tokenDigest(salt: string, token: string): string {
  return crypto.hash('sha256', salt + '\0' + token, 'base64');
}

export function randomToken(bytes = 20): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  if (ab.length !== bb.length) {
    crypto.timingSafeEqual(ab, ab); // keep the timing shape
    return false;
  }
  return crypto.timingSafeEqual(ab, bb);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(password.normalize('NFKC'), salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const [alg, n, r, p, saltB64, keyB64] = stored.split('$');
  if (alg !== 'scrypt') return false;
  const key = Buffer.from(keyB64, 'base64');
  const got = await scrypt(password.normalize('NFKC'), Buffer.from(saltB64, 'base64'), key.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return crypto.timingSafeEqual(key, got);
}

/** GitLab's routable token layout: prefix + base64url(payload + random + len) + "." + len36(2) + crc32(7, base36). */
export function routableToken(prefix: string, userId: number): string {
  const payload = Buffer.from(`o:1\nu:${userId.toString(36)}`);
  const random = crypto.randomBytes(16);
  const body = Buffer.concat([payload, random, Buffer.from([payload.length])]).toString('base64url');
  const head = `${prefix}${body}.${body.length.toString(36).padStart(2, '0').slice(-2)}`;
  return head + crc32(head).toString(36).padStart(7, '0');
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32(s: string): number {
  let c = 0xffffffff;
  for (const b of Buffer.from(s)) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * Secrets that must be sent again later (hook tokens) cannot be hashed: they are kept encrypted
 * (AES-256-GCM) with a key derived from an instance secret. Stored form: "v1:<iv>:<tag>:<data>" (base64url).
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(instanceSecret: string) {
    this.key = crypto
      .createHash('sha256')
      .update('hearth secret box\0' + instanceSecret)
      .digest();
  }

  seal(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join(':');
  }

  open(sealed: string): string {
    const [v, iv, tag, data] = sealed.split(':');
    if (v !== 'v1' || data === undefined) throw new Error('unknown sealed secret format');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/**
 * Secrets at rest that the database alone must not reveal (CI/CD variable values): AES-256-GCM with keys
 * given to the process, never stored in the database. The first key seals; every key opens, so a key is
 * rotated by putting the new one first, re-sealing (`hearth secrets rotate`) and then dropping the old one.
 * Stored form: "k1:<key id>:<iv>:<tag>:<data>" (base64url; the key id is a digest of the key, so a value
 * names the key it needs without revealing it).
 */
export class Keyring {
  private readonly keys = new Map<string, Buffer>();
  readonly primaryId: string;
  /**
   * Opened values by their sealed text (which names its key and carries a random IV and a tag, so an entry can
   * never be stale): a job's variables are opened on every claim. Bounded; emptied when full.
   */
  private readonly opened = new Map<string, string>();
  static readonly OPENED_MAX = 20_000;

  constructor(secrets: string[]) {
    if (!secrets.length) throw new Error('a keyring needs at least one key');
    for (const s of secrets) this.keys.set(Keyring.idOf(s), crypto.createHash('sha256').update(`hearth keyring\0${s}`).digest());
    this.primaryId = Keyring.idOf(secrets[0]!);
  }

  static idOf(secret: string): string {
    return crypto.createHash('sha256').update(`hearth key id\0${secret}`).digest('hex').slice(0, 12);
  }

  seal(plaintext: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.keys.get(this.primaryId)!, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['k1', this.primaryId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join(':');
  }

  open(sealed: string): string {
    const hit = this.opened.get(sealed);
    if (hit !== undefined) return hit;
    const plain = this.decrypt(sealed);
    if (this.opened.size >= Keyring.OPENED_MAX) this.opened.clear();
    this.opened.set(sealed, plain);
    return plain;
  }

  /** forget every opened value (the bench's cold path) */
  forgetOpened(): void {
    this.opened.clear();
  }

  private decrypt(sealed: string): string {
    const [v, id, iv, tag, data] = sealed.split(':');
    if (v !== 'k1' || data === undefined) throw new Error('unknown sealed secret format');
    const key = this.keys.get(id!);
    if (!key) throw new Error(`a secret is sealed with key ${id}, which this process was not given (HEARTH_ENCRYPTION_KEYS)`);
    const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv!, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** whether `sealed` is sealed with another key than the first */
  stale(sealed: string): boolean {
    return sealed.split(':', 2)[1] !== this.primaryId;
  }
}
