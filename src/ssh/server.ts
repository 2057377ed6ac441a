// The embedded SSH server (GitLab's gitlab-sshd, Gitea's builtin SSH server): git clone, fetch and
// push over SSH as user `git`, authenticated by a user's SSH key or a deploy key, from the same
// process as the HTTP server. It serves exactly what gitlab-shell serves: git-upload-pack,
// git-receive-pack and git-upload-archive with one path, and the greeting when no command is given.
// Every other request — pty, x11, agent or port forwarding, subsystems, env other than GIT_PROTOCOL —
// is refused (ssh2 refuses what has no listener). Access is decided by the one path both transports
// share (RepositoryService#gitTarget); pushes go through RepositoryService#receivePack, so protected
// branches, the push journal, events and hooks are those of smart HTTP.
import net from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import ssh2 from 'ssh2';
import type { Logger } from 'pino';
import type { Container } from '../container.ts';
import type { SshConfig } from '../config.ts';
import type { KeyRow, UserRow } from '../db/schema.ts';
import { deniedReason } from '../domain/auth/authenticator.ts';
import { userActor } from '../domain/access/actor.ts';
import { GitAccessDenied, GIT_ACCESS_MESSAGES, type GitCaller, type GitTarget } from '../domain/repository/git-access.ts';
import { keyExpired } from '../domain/keys/keys.service.ts';
import { FORBIDDEN_KEY_VALUE, forbiddenKeyTypeMessage, keyRestrictionFor } from '../domain/keys/key-validation.ts';
import { fingerprints, parseSshPublicKey } from '../domain/keys/ssh-public-key.ts';
import { parseCommand } from './command.ts';
import type { HostKey } from './host-keys.ts';

const { Server, utils } = ssh2;
type ServerChannel = ssh2.ServerChannel;

/** The only user name clients log in as (gitlab-sshd: the configured `user`, "git"). */
export const SSH_USER = 'git';
/** What the server calls itself in the version exchange ("SSH-2.0-Hearth"). */
const IDENT = 'Hearth';
/** A GIT_PROTOCOL value as git sends it ("version=2"). */
const GIT_PROTOCOL = /^[A-Za-z0-9=:._-]{1,64}$/;

export type SshServerOptions = Pick<SshConfig, 'maxSessions' | 'maxSessionsPerUser' | 'idleTimeoutMs' | 'authTimeoutMs'> & {
  hostKeys: HostKey[];
  log: Logger;
};

/** Who a connection authenticated as: a user's key or a deploy key. */
type Identity = { kind: 'user'; key: KeyRow; userId: number } | { kind: 'deploy'; key: KeyRow };

interface Connection {
  client: ssh2.Connection;
  identity: Identity | null;
  lastActivity: number;
  /** what to undo when the connection goes: the counts of its sessions, their git input */
  cleanups: Set<() => void>;
  /** the key found when the client asked whether its key would do (it signs next: one lookup for both) */
  offered: { fingerprint: string; key: KeyRow } | null;
}

/** gitlab-shell's console.DisplayWarningMessage: the message between two rulers, each line "remote: …". */
export function warningMessage(message: string): string {
  const line = (s: string) => `remote: ${s}\n`;
  const divider = line('') + line('='.repeat(72)) + line('');
  return divider + line(message) + divider;
}

/** The login grace timer of each socket not yet authenticated. */
const graceTimers = new WeakMap<net.Socket, NodeJS.Timeout>();

/** How long our KEXINIT waits for the client's (clients that wait for ours first lose this much). */
const KEXINIT_HOLD_MS = 25;

/**
 * OpenSSH writes its KEXINIT once it has read our version line and, once it has read our KEXINIT, its
 * key exchange init: two small writes with nothing of ours between them when our KEXINIT went out before
 * its KEXINIT arrived. The kernel delays the acknowledgement of that KEXINIT (40 ms on Linux) and the
 * client's Nagle algorithm holds its next write until the acknowledgement comes: a login took 55–65 ms
 * instead of 14 about one time in five. So our KEXINIT (ssh2's first write after the version line) waits
 * until the client's KEXINIT has arrived, and carries that acknowledgement.
 */
function holdKexInitForClient(socket: net.Socket): void {
  const write = socket.write;
  let held: Parameters<net.Socket['write']>[] | null = [];
  let wroteIdent = false;
  let received = Buffer.alloc(0);
  const release = () => {
    if (!held) return;
    const queue = held;
    held = null;
    clearTimeout(timer);
    socket.off('data', onData);
    socket.write = write;
    for (const args of queue) write.apply(socket, args);
  };
  const timer = setTimeout(release, KEXINIT_HOLD_MS);
  const onData = (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const identEnd = received.indexOf(0x0a) + 1;
    // the client's first packet follows its version line: uint32 length, then that many bytes
    const whole = identEnd > 0 && received.length >= identEnd + 4 && received.length >= identEnd + 4 + received.readUInt32BE(identEnd);
    if (whole || received.length > 65_536) release();
  };
  socket.prependListener('data', onData);
  socket.once('close', release);
  socket.write = ((...args: Parameters<net.Socket['write']>) => {
    if (held && wroteIdent) {
      held.push(args);
      return true;
    }
    wroteIdent = true;
    return write.apply(socket, args);
  }) as net.Socket['write'];
}

/** The socket under an ssh2 connection (ssh2 keeps it as `_sock`). */
function socketOf(client: ssh2.Connection): net.Socket | undefined {
  return (client as unknown as { _sock?: net.Socket })._sock;
}

export class GitSshServer {
  private readonly server: ssh2.Server;
  /** the listening socket: connections are handed to ssh2 after the login grace timer is set */
  private readonly tcp: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly connections = new Set<Connection>();
  private readonly perIdentity = new Map<string, number>();
  private sessions = 0;
  private sweeper: NodeJS.Timeout | null = null;
  private listening: net.AddressInfo | null = null;

  constructor(
    private readonly c: Container,
    private readonly opts: SshServerOptions,
  ) {
    this.server = new Server({ hostKeys: opts.hostKeys.map((k) => k.private), ident: IDENT }, (client, info) => this.onConnection(client, info));
    this.server.on('error', (err: Error) => opts.log.warn({ err }, 'ssh server error'));
    this.tcp = net.createServer((socket) => this.onSocket(socket));
    // connections, authenticated or not, beyond twice the sessions allowed are dropped at once
    this.tcp.maxConnections = Math.max(64, 2 * opts.maxSessions);
  }

  /**
   * A new TCP connection: it has the login grace time to authenticate (ssh2 only reports a connection
   * once the client has said hello, so the timer is set on the socket itself), then goes to ssh2.
   */
  private onSocket(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.setNoDelay(true);
    const timer = setTimeout(() => socket.destroy(), this.opts.authTimeoutMs);
    timer.unref();
    graceTimers.set(socket, timer);
    holdKexInitForClient(socket);
    this.server.injectSocket(socket);
  }

  /** Starts listening; resolves to the port (useful with port 0). */
  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      this.tcp.once('error', onError);
      this.tcp.listen(port, host, () => {
        this.tcp.off('error', onError);
        resolve();
      });
    });
    this.tcp.on('error', (err: Error) => this.opts.log.warn({ err }, 'ssh server error'));
    this.listening = this.tcp.address() as net.AddressInfo;
    const every = Math.max(250, Math.min(5000, Math.floor(this.opts.idleTimeoutMs / 4)));
    this.sweeper = setInterval(() => this.sweepIdle(), every);
    this.sweeper.unref();
    return this.listening.port;
  }

  get port(): number {
    return this.listening?.port ?? 0;
  }

  /** Git sessions running now (for tests and status). */
  get activeSessions(): number {
    return this.sessions;
  }

  /** Stops accepting connections and closes the open ones; with `graceMs` (serve's SIGTERM), running git
   * sessions first get that long to finish. */
  async close(graceMs = 0): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    const closed = new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    for (const end = Date.now() + graceMs; this.sessions > 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
    for (const conn of this.connections) conn.client.end();
    // what has not authenticated yet, or does not go away when asked
    const stragglers = setTimeout(() => {
      for (const socket of this.sockets) socket.destroy();
    }, 1000);
    stragglers.unref();
    const owned = new Set([...this.connections].map((conn) => socketOf(conn.client)));
    for (const socket of this.sockets) if (!owned.has(socket)) socket.destroy();
    await closed;
    clearTimeout(stragglers);
  }

  private sweepIdle(): void {
    const now = Date.now();
    for (const conn of this.connections) {
      if (now - conn.lastActivity > this.opts.idleTimeoutMs) {
        this.opts.log.info({ identity: conn.identity?.key.id }, 'ssh connection idle: closed');
        conn.client.end();
      }
    }
  }

  private onConnection(client: ssh2.Connection, info: ssh2.ClientInfo): void {
    const conn: Connection = { client, identity: null, lastActivity: Date.now(), cleanups: new Set(), offered: null };
    this.connections.add(conn);
    client.on('error', (err: Error) => this.opts.log.debug({ err, ip: info.ip }, 'ssh client error'));
    client.on('close', () => {
      this.connections.delete(conn);
      // a client gone without closing its channels (killed, network lost)
      for (const fn of conn.cleanups) fn();
      conn.cleanups.clear();
    });
    client.on('authentication', (ctx) => {
      conn.lastActivity = Date.now();
      void this.authenticate(conn, ctx).catch((err) => {
        this.opts.log.error({ err }, 'ssh authentication failed');
        ctx.reject(['publickey']);
      });
    });
    client.on('ready', () => {
      const socket = socketOf(client);
      if (socket) clearTimeout(graceTimers.get(socket));
      conn.lastActivity = Date.now();
      client.on('session', (accept, reject) => this.onSession(conn, accept, reject));
    });
  }

  /** Public key only, as `git`; the key's SHA256 fingerprint finds the user key or deploy key. */
  private async authenticate(conn: Connection, ctx: ssh2.AuthContext): Promise<void> {
    if (ctx.method !== 'publickey' || ctx.username !== SSH_USER) return ctx.reject(['publickey']);
    const fingerprint = fingerprints(ctx.key.data).sha256;
    const key = conn.offered?.fingerprint === fingerprint ? conn.offered.key : await this.usableKey(fingerprint);
    conn.offered = key ? { fingerprint, key } : null;
    if (!key) return ctx.reject(['publickey']);
    // without a signature the client only asks whether the key would do (OpenSSH sends it, then signs)
    if (!ctx.signature) return ctx.accept();
    const parsed = utils.parseKey(ctx.key.data);
    if (parsed instanceof Error || Array.isArray(parsed) || !ctx.blob || parsed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) {
      return ctx.reject(['publickey']);
    }
    conn.offered = null;
    conn.identity = key.type === 'deploy' ? { kind: 'deploy', key } : { kind: 'user', key, userId: key.user_id! };
    // Keys::LastUsedService (at most once a day)
    void this.c.keys.markUsed(key).catch((err) => this.opts.log.warn({ err }, 'recording the use of an SSH key failed'));
    ctx.accept();
  }

  /**
   * The key row with this SHA256 fingerprint, if it may log in: known, usable for authentication
   * (not a signing-only key), not expired, and of a type and size today's key restrictions allow.
   */
  private async usableKey(fingerprint: string): Promise<KeyRow | null> {
    const key = await this.c.keys.byBlobFingerprint(fingerprint);
    if (!key || key.usage_type === 'signing' || keyExpired(key)) return null;
    if (key.type === 'user' && key.user_id === null) return null;
    return (await this.restrictionRefusal(key)) ? null : key;
  }

  /** ApplicationSetting's key restrictions applied to a key added before they changed (Key#valid?). */
  private async restrictionRefusal(key: KeyRow): Promise<string | null> {
    const settings = await this.c.settings.get();
    const parsed = parseSshPublicKey(key.key);
    const restriction = keyRestrictionFor(settings, parsed?.technology ?? null);
    if (restriction === FORBIDDEN_KEY_VALUE) return forbiddenKeyTypeMessage(settings);
    if (restriction > 0 && key.bits < restriction) return `must be at least ${restriction} bits`;
    return null;
  }

  private identityName(identity: Identity): string {
    return identity.kind === 'user' ? `user:${identity.userId}` : `deploy:${identity.key.id}`;
  }

  private onSession(conn: Connection, accept: () => ssh2.Session, reject: () => void): void {
    const identity = conn.identity!;
    const name = this.identityName(identity);
    const mine = this.perIdentity.get(name) ?? 0;
    if (this.sessions >= this.opts.maxSessions || mine >= this.opts.maxSessionsPerUser) {
      this.opts.log.warn({ identity: name, sessions: this.sessions }, 'ssh session refused: too many concurrent sessions');
      reject();
      return;
    }
    this.sessions++;
    this.perIdentity.set(name, mine + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.sessions--;
      const n = (this.perIdentity.get(name) ?? 1) - 1;
      if (n > 0) this.perIdentity.set(name, n);
      else this.perIdentity.delete(name);
      conn.cleanups.delete(release);
    };
    conn.cleanups.add(release);
    const session = accept();
    const env: Record<string, string> = {};
    let started = false;
    session.on('close', release);
    session.on('env', (ok, no, info) => {
      // gitlab-sshd accepts GIT_PROTOCOL only
      if (info.key === 'GIT_PROTOCOL' && GIT_PROTOCOL.test(info.val)) {
        env.GIT_PROTOCOL = info.val;
        ok?.();
      } else no?.();
    });
    const start = (ch: ServerChannel | undefined, command: string) => {
      if (!ch || started) return;
      started = true;
      ch.on('close', release);
      void this.run(conn, ch, command, env).catch((err) => {
        this.opts.log.error({ err }, 'ssh command failed');
        this.finish(ch, 1, warningMessage('ERROR: Internal API unreachable'));
      });
    };
    session.on('exec', (ok, _no, info) => start(ok(), info.command));
    // a shell without a command: the greeting, as `ssh git@host` shows on GitLab
    session.on('shell', (ok) => start(ok(), ''));
  }

  /** Writes `stderr`, then exit-status `code`, then closes the channel, after what was written before. */
  private finish(ch: ServerChannel, code: number, stderr?: string): void {
    if (ch.destroyed || ch.writableEnded || (ch as unknown as { closed?: boolean }).closed) return;
    if (stderr) ch.stderr.write(stderr);
    const done = () => {
      try {
        ch.exit(code);
        ch.end();
      } catch {
        // the client went away meanwhile
      }
    };
    // an empty write's callback comes once everything written before has gone out (the client's window
    // permitting): the exit status and the close follow the data ('drain' would not come when the
    // buffer never went over its mark)
    ch.write(Buffer.alloc(0), done);
  }

  private async run(conn: Connection, ch: ServerChannel, line: string, env: Record<string, string>): Promise<void> {
    const touch = () => {
      conn.lastActivity = Date.now();
    };
    touch();
    ch.on('error', () => {});
    ch.stderr.on('error', () => {});
    const identity = conn.identity!;
    let user: UserRow | null = null;
    if (identity.kind === 'user' || identity.key.user_id !== null) {
      user = (await this.c.users.byId(identity.key.user_id!)) ?? null;
    }
    if (identity.kind === 'user') {
      const denied = user ? deniedReason(user) : 'Your account has been blocked.';
      if (denied) return this.finish(ch, 1, warningMessage(`ERROR: ${denied}`));
    }
    const cmd = parseCommand(line);
    switch (cmd.kind) {
      case 'discover': {
        const who = identity.kind === 'user' && user ? `@${user.username}` : 'Anonymous';
        ch.write(`Welcome to Hearth, ${who}!\n`);
        return this.finish(ch, 0);
      }
      case 'invalid':
        return this.finish(ch, 128, warningMessage(`ERROR: Failed to parse command: ${cmd.error}`));
      case 'unknown':
        return this.finish(ch, 128, warningMessage(`ERROR: Unknown command: ${cmd.name}`));
      case 'disallowed':
        return this.finish(ch, 1, warningMessage('ERROR: Disallowed command'));
    }
    const caller: GitCaller =
      identity.kind === 'user' ? { actor: userActor(user!) } : { deployKey: { key: identity.key, user: user && !deniedReason(user) ? user : null } };
    let target: GitTarget;
    try {
      target = await this.c.repository.gitTarget(caller, cmd.path, cmd.command);
    } catch (e) {
      if (!(e instanceof GitAccessDenied)) throw e;
      const message = e.refusal.kind === 'unauthenticated' ? GIT_ACCESS_MESSAGES.projectNotFound : e.refusal.message;
      return this.finish(ch, 1, warningMessage(`ERROR: ${message}`));
    }
    const gitEnv: Record<string, string> = env.GIT_PROTOCOL ? { GIT_PROTOCOL: env.GIT_PROTOCOL } : {};
    // what the client sends, ended when the channel ends or closes (a client gone mid-push: git sees
    // the pack end early and moves no ref)
    const input = new PassThrough();
    ch.on('data', touch);
    ch.pipe(input);
    const endInput = () => {
      if (!input.writableEnded) input.end();
    };
    ch.on('close', () => {
      endInput();
      conn.cleanups.delete(endInput);
    });
    conn.cleanups.add(endInput);
    if (cmd.command === 'git-receive-pack') {
      const out = await this.c.repository.receivePack(target, input, { env: gitEnv, log: this.opts.log, statelessRpc: false, stderr: ch.stderr });
      return this.forward(out, ch, touch, () => this.finish(ch, 0));
    }
    const service = cmd.command === 'git-upload-pack' ? 'upload-pack' : 'upload-archive';
    const child: ChildProcess = target.repo.spawn([service, target.repo.gitDir], { env: gitEnv });
    child.stdin!.on('error', () => {});
    input.pipe(child.stdin!);
    child.stderr!.on('data', (b: Buffer) => {
      if (ch.stderr.writable) ch.stderr.write(b);
    });
    // nothing to keep of a fetch the client left
    ch.on('close', () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    });
    const exited = new Promise<number>((resolve) => {
      child.once('close', (code) => resolve(code ?? 1));
      child.once('error', () => resolve(1));
    });
    this.forward(child.stdout!, ch, touch, () => void exited.then((code) => this.finish(ch, code)));
  }

  /** Copies `src` to the channel with backpressure; `done` when `src` ended. */
  private forward(src: Readable, ch: ServerChannel, touch: () => void, done: () => void): void {
    src.on('data', (chunk: Buffer) => {
      touch();
      if (!ch.writable) return;
      if (!ch.write(chunk)) {
        src.pause();
        ch.once('drain', () => src.resume());
      }
    });
    src.once('end', done);
    src.once('error', () => this.finish(ch, 1));
    ch.on('close', () => src.resume());
  }
}

/** An SSH server for the container, listening on `port` (0: any free port) and `host`. */
export async function startSshServer(c: Container, hostKeys: HostKey[], port: number, host: string): Promise<GitSshServer> {
  const server = new GitSshServer(c, { ...c.config.ssh, hostKeys, log: c.log });
  await server.listen(port, host);
  return server;
}
