// The SSH server's host keys: an ed25519 and an RSA key in DATA_DIR/ssh/, made on the first start
// (mode 0600) and read on every later one, so clients' known_hosts stay valid across restarts and
// upgrades (OpenSSH's ssh_host_*_key files; gitlab-sshd's host_key_files).
import fs from 'node:fs';
import path from 'node:path';
import ssh2 from 'ssh2';
import { fingerprints } from '../domain/keys/ssh-public-key.ts';

const { utils } = ssh2;

export interface HostKey {
  /** ssh-ed25519, ssh-rsa */
  type: string;
  file: string;
  /** the private key in OpenSSH's format */
  private: Buffer;
}

const KINDS = [
  { type: 'ssh-ed25519', file: 'ssh_host_ed25519_key', make: () => utils.generateKeyPairSync('ed25519') },
  { type: 'ssh-rsa', file: 'ssh_host_rsa_key', make: () => utils.generateKeyPairSync('rsa', { bits: 3072 }) },
] as const;

/** Both halves read back, and the public half is the one the private key holds. */
function wellFormed(pair: { private: string; public: string }): boolean {
  const priv = utils.parseKey(pair.private);
  const pub = utils.parseKey(pair.public);
  if (priv instanceof Error || pub instanceof Error || Array.isArray(priv) || Array.isArray(pub)) return false;
  return priv.getPublicSSH().equals(pub.getPublicSSH());
}

/** The host keys in `dir` (DATA_DIR/ssh), generating the missing ones. */
export function loadHostKeys(dir: string): HostKey[] {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return KINDS.map((k) => {
    const file = path.join(dir, k.file);
    if (!fs.existsSync(file)) {
      // ssh2 writes about one ed25519 key in 250 with the public half's leading zero byte dropped, which no
      // client accepts: such a pair is made again
      let pair = k.make();
      while (!wellFormed(pair)) pair = k.make();
      // written under another name first: a crash never leaves half a key behind
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, pair.private, { mode: 0o600 });
      fs.writeFileSync(`${file}.pub`, `${pair.public}\n`, { mode: 0o644 });
      fs.renameSync(tmp, file);
    }
    const key = fs.readFileSync(file);
    const parsed = utils.parseKey(key);
    if (parsed instanceof Error) throw new Error(`${file}: ${parsed.message}`);
    return { type: k.type, file, private: key };
  });
}

/** "SHA256:…" of a host key, as ssh prints it on first contact. */
export function hostKeyFingerprint(key: HostKey): string {
  const parsed = utils.parseKey(key.private);
  if (parsed instanceof Error || Array.isArray(parsed)) throw new Error(`${key.file}: unreadable`);
  return fingerprints(parsed.getPublicSSH()).sha256;
}
