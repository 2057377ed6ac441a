// GitLab's Key validations (app/models/key.rb, app/validators/ssh_key_validator.rb), shared by users' keys
// and deploy keys: the title, the key text (present, at most 5000 characters, starting with a supported
// algorithm, one parseable OpenSSH public key), the application settings' key restrictions (0 any size,
// -1 forbidden, N minimum bits), the expiry and a fingerprint nobody uses yet — user key or deploy key.
// The messages and their order are GitLab's, so a refused key renders as `{"message": {field: [...]}}`.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { type Settings, settingNamed } from '../core/settings-definitions.ts';
import { isDate, parseDateTime } from '../../lib/time.ts';
import { parseSshPublicKey, type SshPublicKey } from './ssh-public-key.ts';

/** Key.usage_types, in GitLab's enum order. */
export const KEY_USAGE_TYPES = ['auth_and_signing', 'auth', 'signing'] as const;
export type KeyUsageType = (typeof KEY_USAGE_TYPES)[number];

/** Gitlab::SSHPublicKey.supported_types, in GitLab's order (the order of the "Must be …" sentence). */
export const KEY_TECHNOLOGIES = ['rsa', 'dsa', 'ecdsa', 'ed25519', 'ecdsa_sk', 'ed25519_sk'] as const;
export type KeyTechnology = (typeof KEY_TECHNOLOGIES)[number];

/** Gitlab::SSHPublicKey.supported_algorithms: what a key's text must start with. */
export const KEY_ALGORITHMS = [
  'ssh-rsa',
  'ssh-dss',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-ed25519',
  'sk-ecdsa-sha2-nistp256@openssh.com',
  'sk-ssh-ed25519@openssh.com',
] as const;
const ALGORITHMS: ReadonlySet<string> = new Set(KEY_ALGORITHMS);

/** ApplicationSetting::FORBIDDEN_KEY_VALUE */
export const FORBIDDEN_KEY_VALUE = -1;
const TITLE_MAX = 255;
const KEY_MAX = 5000;

export interface NewKeyInput {
  title?: unknown;
  key?: unknown;
  expires_at?: unknown;
  usage_type?: unknown;
}

export type NewKeyCheck =
  | { ok: true; parsed: SshPublicKey; title: string; expiresAt: string | null; usageType: KeyUsageType }
  | { ok: false; errors: Record<string, string[]> };

/** ApplicationSetting#key_restriction_for */
export function keyRestrictionFor(settings: Settings, technology: string | null): number {
  if (technology === null || !(KEY_TECHNOLOGIES as readonly string[]).includes(technology)) return FORBIDDEN_KEY_VALUE;
  const v = settingNamed(settings, `${technology}_key_restriction`);
  return typeof v === 'number' ? v : 0;
}

/** ApplicationSetting#allowed_key_types */
export function allowedKeyTypes(settings: Settings): KeyTechnology[] {
  return KEY_TECHNOLOGIES.filter((t) => keyRestrictionFor(settings, t) !== FORBIDDEN_KEY_VALUE);
}

/** Gitlab::Sentence.to_exclusive_sentence: "A", "A or B", "A, B, or C". */
function exclusiveSentence(words: string[]): string {
  if (words.length <= 1) return words.join('');
  if (words.length === 2) return `${words[0]} or ${words[1]}`;
  return `${words.slice(0, -1).join(', ')}, or ${words[words.length - 1]}`;
}

/** SshKeyValidator's message for a type the settings forbid (or a key of no known type). */
export function forbiddenKeyTypeMessage(settings: Settings): string {
  return `type is forbidden. Must be ${exclusiveSentence(allowedKeyTypes(settings).map((t) => t.toUpperCase()))}`;
}

/**
 * Gitlab::SSHPublicKey.sanitize: a key pasted with its base64 broken over several lines is joined back; the
 * result is "<type> <base64>[ <first word of the comment>]". Null when no prefix of the text is one key.
 * `rest` is what followed the comment (a second key pasted with the first shows up there).
 */
export function sanitizeKey(text: string): { parsed: SshPublicKey; text: string; rest: string[] } | null {
  const [type, ...parts] = text.trim().split(/\s+/);
  let blob = '';
  for (let i = 0; i < parts.length; i++) {
    blob += parts[i];
    const candidate = `${type} ${blob}`;
    const parsed = parseSshPublicKey(candidate);
    if (!parsed) continue;
    const comment = parts[i + 1];
    const full = comment === undefined ? candidate : `${candidate} ${comment}`;
    return { parsed: { ...parsed, comment: comment ?? '', normalized: full }, text: full, rest: parts.slice(i + 2) };
  }
  return null;
}

/** Grape's DateTime coercion of `expires_at`: ISO text, null when absent, undefined when not a time. */
export function parseKeyExpiry(v: unknown): string | null | undefined {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || !isDate(v.trim().slice(0, 10))) return undefined; // 2999-02-31 is no day
  return parseDateTime(v) ?? undefined;
}

/** Ordered field → messages, as ActiveModel::Errors renders them. */
class FieldErrors {
  readonly map: Record<string, string[]> = {};
  add(field: string, message: string): void {
    (this.map[field] ??= []).push(message);
  }
  get empty(): boolean {
    return Object.keys(this.map).length === 0;
  }
}

/**
 * Checks a new key as GitLab's Key model does before it is saved. `db` may be a transaction: the fingerprint
 * lookup then sees the keys written in it. The unique index on keys.fingerprint_sha256 stays the last word
 * against two requests racing (the caller maps its violation to the same message).
 */
export async function checkNewKey(
  db: Kysely<Database>,
  settings: Settings,
  input: NewKeyInput,
  opts: { usageTypes?: boolean; now?: Date } = {},
): Promise<NewKeyCheck> {
  const errors = new FieldErrors();
  const title = typeof input.title === 'string' ? input.title : '';
  if (title.trim() === '') errors.add('title', "can't be blank");
  else if ([...title].length > TITLE_MAX) errors.add('title', `is too long (maximum is ${TITLE_MAX} characters)`);

  const raw = typeof input.key === 'string' ? input.key : '';
  const sanitized = raw.trim() === '' ? null : sanitizeKey(raw);
  const keyText = sanitized ? sanitized.text : raw.trim();
  // several keys in one value: GitLab would keep the first silently; here the value is refused
  const several = sanitized !== null && sanitized.rest.some((w) => ALGORITHMS.has(w));
  const parsed = sanitized ? sanitized.parsed : null;

  if (keyText === '') errors.add('key', "can't be blank");
  // SshKeyValidator: a key of no known type is "forbidden"; else the settings' restriction for its type
  const restriction = keyRestrictionFor(settings, parsed?.technology ?? null);
  if (restriction === FORBIDDEN_KEY_VALUE) errors.add('key', forbiddenKeyTypeMessage(settings));
  else if (parsed && parsed.bits < restriction) errors.add('key', `must be at least ${restriction} bits`);
  if ([...keyText].length > KEY_MAX) errors.add('key', `is too long (maximum is ${KEY_MAX} characters)`);
  if (![...ALGORITHMS].some((a) => keyText.startsWith(a))) errors.add('key', 'is invalid');
  if (several) errors.add('key', 'should be a single line');

  if (!parsed) errors.add('fingerprint_sha256', 'cannot be generated');
  else {
    const taken = await db.selectFrom('keys').select('id').where('fingerprint_sha256', '=', parsed.sha256).executeTakeFirst();
    if (taken) errors.add('fingerprint_sha256', 'has already been taken');
  }

  const expiresAt = parseKeyExpiry(input.expires_at);
  if (expiresAt === undefined) errors.add('expires_at', 'is invalid');
  else if (expiresAt !== null && Date.parse(expiresAt) <= (opts.now ?? new Date()).getTime()) errors.add('key', 'has expired');

  let usageType: KeyUsageType = 'auth_and_signing';
  if (opts.usageTypes === false) usageType = 'auth';
  else if (input.usage_type !== undefined && input.usage_type !== null) {
    if ((KEY_USAGE_TYPES as readonly unknown[]).includes(input.usage_type)) usageType = input.usage_type as KeyUsageType;
    else errors.add('usage_type', 'is not included in the list');
  }

  if (!errors.empty || !parsed) return { ok: false, errors: errors.map };
  return { ok: true, parsed, title, expiresAt: expiresAt ?? null, usageType };
}

/** The error of a key whose fingerprint another request took first (the unique index's violation). */
export const FINGERPRINT_TAKEN: Record<string, string[]> = { fingerprint_sha256: ['has already been taken'] };
