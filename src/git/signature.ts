// Commit signatures: the `gpgsig` header of a commit object (OpenPGP, SSH or X.509/CMS) and what
// `git verify-commit --raw` says of it. Verification runs against an empty keyring (a temporary
// GNUPGHOME) or an empty allowed-signers file: the instance keeps no GPG or SSH keys of its users, so a
// signature can be cryptographically good but never tied to a known key (GitLab's `unknown_key`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Repository } from './repository.ts';

export type SignatureType = 'PGP' | 'SSH' | 'X509';

export interface CommitSignature {
  type: SignatureType;
  /** the armored signature */
  armored: string;
}

export interface SignatureCheck {
  type: SignatureType;
  /** the signature matches the commit's content and the key it names (false when that cannot be told) */
  good: boolean;
  /** OpenPGP: the 16-hex key id of the signing key (upper case), when the signature names it */
  keyId: string | null;
  /** OpenPGP: the full fingerprint of the signing key, when the signature names it */
  fingerprint: string | null;
  /** SSH: the key's fingerprint as ssh-keygen prints it ("SHA256:…") */
  sshFingerprint: string | null;
}

/** The signature of a commit object's raw bytes, or null when unsigned. */
export function signatureOf(raw: Buffer): CommitSignature | null {
  const text = raw.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = (split < 0 ? text : text.slice(0, split)).split('\n');
  for (let i = 0; i < headers.length; i++) {
    if (!headers[i].startsWith('gpgsig ') && !headers[i].startsWith('gpgsig-sha256 ')) continue;
    const lines = [headers[i].slice(headers[i].indexOf(' ') + 1)];
    for (let j = i + 1; j < headers.length && headers[j].startsWith(' '); j++) lines.push(headers[j].slice(1));
    const armored = lines.join('\n');
    if (armored.includes('BEGIN SSH SIGNATURE')) return { type: 'SSH', armored };
    if (armored.includes('BEGIN PGP SIGNATURE')) return { type: 'PGP', armored };
    return { type: 'X509', armored };
  }
  return null;
}

/** The signature of a commit, or null (unsigned, or not a commit). */
export async function commitSignature(repo: Repository, sha: string): Promise<CommitSignature | null> {
  const o = await repo.read(sha);
  if (!o || o.type !== 'commit' || !o.content) return null;
  return signatureOf(o.content);
}

/** `git verify-commit --raw` against an empty keyring / allowed-signers file: what the signature says. */
export async function verifyCommit(repo: Repository, sha: string, sig: CommitSignature): Promise<SignatureCheck> {
  const check: SignatureCheck = { type: sig.type, good: false, keyId: null, fingerprint: null, sshFingerprint: null };
  if (sig.type === 'X509') return check;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-verify-'));
  try {
    const allowed = path.join(dir, 'allowed_signers');
    fs.writeFileSync(allowed, '');
    const gnupg = path.join(dir, 'gnupg');
    fs.mkdirSync(gnupg, { mode: 0o700 });
    const args =
      sig.type === 'SSH'
        ? ['-c', 'gpg.format=ssh', '-c', `gpg.ssh.allowedSignersFile=${allowed}`, 'verify-commit', '--raw', sha]
        : ['-c', 'gpg.format=openpgp', '-c', 'gpg.program=gpg', 'verify-commit', '--raw', sha];
    let out = '';
    try {
      const r = await repo.run(args, { env: { GNUPGHOME: gnupg }, okCodes: [0, 1, 128], timeoutMs: 30_000 });
      out = r.stderr + r.stdout.toString('utf8');
    } catch {
      // gpg or ssh-keygen missing or failing: nothing is known of the signature
      return check;
    }
    if (sig.type === 'SSH') {
      const m = /Good "git" signature (?:for \S+ )?with \S+ key (SHA256:[A-Za-z0-9+/=]+)/.exec(out);
      if (m) {
        check.good = true;
        check.sshFingerprint = m[1];
      }
      return check;
    }
    const err = /^\[GNUPG:\] ERRSIG ([0-9A-F]{16}) \S+ \S+ \S+ \S+ \S+(?: ([0-9A-F]{40,64}))?/m.exec(out);
    const good = /^\[GNUPG:\] (?:GOODSIG|EXPSIG|EXPKEYSIG|REVKEYSIG) ([0-9A-F]{16})/m.exec(out);
    const valid = /^\[GNUPG:\] VALIDSIG ([0-9A-F]{40,64})/m.exec(out);
    const noKey = /^\[GNUPG:\] NO_PUBKEY ([0-9A-F]{16})/m.exec(out);
    check.keyId = good?.[1] ?? err?.[1] ?? noKey?.[1] ?? null;
    check.fingerprint = valid?.[1] ?? err?.[2] ?? null;
    check.good = !!good && !/^\[GNUPG:\] BADSIG/m.test(out);
    return check;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
