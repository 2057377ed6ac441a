// Git over SSH in tests: the embedded SSH server on a free loopback port for a test app, client key
// pairs, key rows inserted directly, and the real OpenSSH `ssh` and `git` run asynchronously.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ssh2 from 'ssh2';
import type { Container } from '../../src/container.ts';
import type { KeyRow, UserRow } from '../../src/db/schema.ts';
import { keyColumns, parseSshPublicKey } from '../../src/domain/keys/ssh-public-key.ts';
import { loadHostKeys, type HostKey } from '../../src/ssh/host-keys.ts';
import { GitSshServer } from '../../src/ssh/server.ts';
import type { SshConfig } from '../../src/config.ts';
import { AUTHOR, fixtureEnv } from './git.ts';

const { utils } = ssh2;

let sharedHostKeys: HostKey[] | null = null;

/** Host keys made once per test process (an RSA key takes a while). */
export function testHostKeys(): HostKey[] {
  if (!sharedHostKeys) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-ssh-host-'));
    sharedHostKeys = loadHostKeys(dir);
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return sharedHostKeys;
}

/** An SSH server for the container `c` on 127.0.0.1 and a free port, closed after the test. */
export async function startSsh(t: { after(fn: () => unknown): void }, c: Container, opts: Partial<SshConfig> = {}): Promise<GitSshServer> {
  const server = new GitSshServer(c, { ...c.config.ssh, ...opts, hostKeys: testHostKeys(), log: c.log });
  await server.listen(0, '127.0.0.1');
  t.after(() => server.close());
  return server;
}

export interface ClientKey {
  /** the private key file (0600) */
  file: string;
  /** "ssh-ed25519 AAAA… comment" */
  publicKey: string;
}

const generate = (type: 'ed25519' | 'rsa' | 'ecdsa', bits?: number) =>
  type === 'ed25519' ? utils.generateKeyPairSync('ed25519') : utils.generateKeyPairSync(type, { bits: bits ?? (type === 'rsa' ? 2048 : 256) });

/** A new client key pair in a temporary directory. */
export function clientKey(t: { after(fn: () => unknown): void }, type: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519', bits?: number): ClientKey {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-ssh-key-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // ssh2 writes about one ed25519 public key in 250 with its leading zero byte dropped (a 31-byte key, which
  // OpenSSH and our parser refuse): such a pair is made again
  let pair = generate(type, bits);
  while (!parseSshPublicKey(pair.public)) pair = generate(type, bits);
  const file = path.join(dir, 'id');
  fs.writeFileSync(file, pair.private, { mode: 0o600 });
  return { file, publicKey: `${pair.public} test@hearth` };
}

/** A key row (a user key, or a deploy key when `type` is 'deploy'), as the keys API would store it. */
export async function insertKey(
  c: Container,
  key: ClientKey,
  attrs: Partial<{ user: UserRow | null; type: 'user' | 'deploy'; title: string; expires_at: string | null; usage_type: KeyRow['usage_type'] }> = {},
): Promise<KeyRow> {
  const parsed = parseSshPublicKey(key.publicKey);
  if (!parsed) throw new Error('unparseable test key');
  const now = new Date().toISOString();
  return c.db.kysely
    .insertInto('keys')
    .values({
      type: attrs.type ?? 'user',
      user_id: attrs.user === undefined ? null : (attrs.user?.id ?? null),
      title: attrs.title ?? 'test key',
      ...keyColumns(parsed),
      usage_type: attrs.usage_type ?? 'auth_and_signing',
      expires_at: attrs.expires_at ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Enables a deploy key on a project. */
export async function enableDeployKey(c: Container, key: KeyRow, projectId: number, canPush: boolean): Promise<void> {
  const now = new Date().toISOString();
  await c.db.kysely
    .insertInto('deploy_keys_projects')
    .values({ deploy_key_id: key.id, project_id: projectId, can_push: canPush ? 1 : 0, created_at: now, updated_at: now })
    .execute();
}

/** The ssh options of every test client: this key only, no agent, no host key prompts, no config. */
export function sshArgs(port: number, keyFile: string): string[] {
  return [
    '-F',
    '/dev/null',
    '-i',
    keyFile,
    '-p',
    String(port),
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
    '-o',
    'IdentityAgent=none',
  ];
}

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { cwd: opts.cwd, env: opts.env, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    child.stdin?.end(opts.input ?? '');
  });
}

/** `ssh -p PORT git@127.0.0.1 [command…]` with the key (and extra ssh options before the host). */
export function ssh(port: number, keyFile: string, command: string[] = [], extra: string[] = [], user = 'git'): Promise<Run> {
  return run('ssh', [...sshArgs(port, keyFile), ...extra, `${user}@127.0.0.1`, ...command], { env: fixtureEnv() });
}

/** `git …` whose SSH transport uses the key; `git@127.0.0.1:<path>.git` URLs go to the test server. */
export function sshGit(cwd: string, port: number, keyFile: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const command = ['ssh', ...sshArgs(port, keyFile)].map((a) => (/^[\w@./=:-]+$/.test(a) ? a : `'${a}'`)).join(' ');
  return run('git', args, {
    cwd,
    env: fixtureEnv({
      GIT_SSH_COMMAND: command,
      GIT_AUTHOR_NAME: AUTHOR.name,
      GIT_AUTHOR_EMAIL: AUTHOR.email,
      GIT_COMMITTER_NAME: AUTHOR.name,
      GIT_COMMITTER_EMAIL: AUTHOR.email,
      ...env,
    }),
  });
}

/** The URL git clones a project from over SSH (scp-like: git@127.0.0.1:group/project.git; the port comes from GIT_SSH_COMMAND). */
export function sshUrl(fullPath: string): string {
  return `git@127.0.0.1:${fullPath}.git`;
}
