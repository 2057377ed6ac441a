// An OpenSSH public key as users paste it ("<type> <base64> [comment]"): parsed with ssh2, its
// technology and size (for the application settings' key restrictions), and the two fingerprints
// GitLab shows (MD5 colon hex, and SHA256 base64 without padding as `ssh-keygen -l` prints it).
import crypto from 'node:crypto';
import ssh2 from 'ssh2';

const { utils } = ssh2;

export interface SshPublicKey {
  /** ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, sk-ssh-ed25519@openssh.com, … */
  type: string;
  /** GitLab's technology name: rsa, dsa, ecdsa, ed25519, ecdsa_sk, ed25519_sk */
  technology: 'rsa' | 'dsa' | 'ecdsa' | 'ed25519' | 'ecdsa_sk' | 'ed25519_sk';
  bits: number;
  /** the wire-format public key (what an SSH client offers when it authenticates) */
  blob: Buffer;
  comment: string;
  /** "<type> <base64>[ <comment>]", whitespace collapsed */
  normalized: string;
  /** "aa:bb:…" */
  md5: string;
  /** "SHA256:…" */
  sha256: string;
}

const TECHNOLOGY: Record<string, SshPublicKey['technology']> = {
  'ssh-rsa': 'rsa',
  'ssh-dss': 'dsa',
  'ecdsa-sha2-nistp256': 'ecdsa',
  'ecdsa-sha2-nistp384': 'ecdsa',
  'ecdsa-sha2-nistp521': 'ecdsa',
  'ssh-ed25519': 'ed25519',
  'sk-ecdsa-sha2-nistp256@openssh.com': 'ecdsa_sk',
  'sk-ssh-ed25519@openssh.com': 'ed25519_sk',
};

/** The fingerprints of a wire-format key blob. */
export function fingerprints(blob: Buffer): { md5: string; sha256: string } {
  const md5 = crypto
    .createHash('md5')
    .update(blob)
    .digest('hex')
    .replace(/(..)(?!$)/g, '$1:');
  const sha256 = 'SHA256:' + crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
  return { md5, sha256 };
}

/** Reads an SSH string (uint32 length + bytes) at `at`. */
function sshString(buf: Buffer, at: number): { value: Buffer; next: number } | null {
  if (at + 4 > buf.length) return null;
  const len = buf.readUInt32BE(at);
  if (at + 4 + len > buf.length) return null;
  return { value: buf.subarray(at + 4, at + 4 + len), next: at + 4 + len };
}

/** The key's size in bits: RSA/DSA modulus (p for DSA), the curve for ECDSA, 256 for ed25519 and sk keys. */
function bitsOf(type: string, blob: Buffer): number | null {
  const name = sshString(blob, 0);
  if (!name || name.value.toString('latin1') !== type) return null;
  if (type === 'ssh-rsa' || type === 'ssh-dss') {
    // rsa: e, n; dss: p, q, g, y
    let field = sshString(blob, name.next);
    if (type === 'ssh-rsa' && field) field = sshString(blob, field.next);
    if (!field) return null;
    let v = field.value;
    while (v.length > 0 && v[0] === 0) v = v.subarray(1);
    if (v.length === 0) return null;
    return (v.length - 1) * 8 + (32 - Math.clz32(v[0]));
  }
  if (type.startsWith('ecdsa-sha2-nistp')) return Number(type.slice('ecdsa-sha2-nistp'.length));
  return 256;
}

/**
 * The parsed key, or null when `text` is not one OpenSSH public key (a private key, several keys, a
 * type we do not know, a blob that does not decode).
 */
export function parseSshPublicKey(text: string): SshPublicKey | null {
  if (typeof text !== 'string' || text.length > 8192) return null;
  const parts = text.trim().split(/\s+/);
  if (parts.length < 2) return null;
  const [type, b64, ...rest] = parts;
  const technology = TECHNOLOGY[type];
  if (!technology || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return null;
  const blob = Buffer.from(b64, 'base64');
  const bits = bitsOf(type, blob);
  if (bits === null) return null;
  // ssh2 checks the key itself (the point is on the curve, the encoding is whole); sk keys it does not read
  if (!type.startsWith('sk-')) {
    const parsed = utils.parseKey(`${type} ${b64}`);
    if (parsed instanceof Error || Array.isArray(parsed) || parsed.type !== type) return null;
  }
  const comment = rest.join(' ');
  return { type, technology, bits, blob, comment, normalized: comment ? `${type} ${b64} ${comment}` : `${type} ${b64}`, ...fingerprints(blob) };
}

/** The columns of a `keys` row that the public key decides. */
export function keyColumns(p: SshPublicKey): { key: string; key_type: string; bits: number; fingerprint: string; fingerprint_sha256: string } {
  return { key: p.normalized, key_type: p.type, bits: p.bits, fingerprint: p.md5, fingerprint_sha256: p.sha256 };
}
