// The command line: one clear line on error, non-zero exit.
import { closeGitBudget } from './git/budget.ts';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadConfig, VERSION } from './config.ts';
import { createContainer, type Container } from './container.ts';
import { buildApp } from './app.ts';
import { createDb } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import { DomainError } from './lib/errors.ts';
import { pastExpiryErrors } from './domain/tokens/tokens.service.ts';
import { availableScopes } from './domain/tokens/scopes.ts';
import { hostKeyFingerprint, loadHostKeys } from './ssh/host-keys.ts';
import { startSshServer } from './ssh/server.ts';
import { BACKUP_USAGE, runBackupCommand } from './backup/cli.ts';
import { trackConnections } from './http/drain.ts';
import { dataDirHolders, describeHolder, holdDataDir } from './lib/data-dir-lock.ts';
import { assets } from './web/assets.ts';

function explain(err: unknown): string {
  if (err instanceof DomainError) {
    if (err.detail && typeof err.detail === 'object') {
      return Object.entries(err.detail as Record<string, string[]>)
        .map(([k, v]) => `${k} ${[v].flat().join(', ')}`)
        .join('; ');
    }
    return String(err.detail ?? err.kind);
  }
  return err instanceof Error ? err.message : String(err);
}
async function withContainer<T>(fn: (c: Container) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const c = await createContainer({ ...config, logLevel: config.logLevel === 'info' ? 'warn' : config.logLevel });
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

/** One command of the table: `hearth <name> …`. `run` gets the arguments after the name and returns an
 * exit code, or null when the process keeps running (serve, worker). Options are parsed by `options()`
 * (node:util parseArgs, strict): an unknown flag or a stray argument is a usage error (exit 2). */
export interface Command {
  name: string;
  /** Usage lines, `usage: hearth <name> …` first; printed by `hearth <name> --help` and on a usage error. */
  usage: string;
  /** One line for `hearth --help`. */
  summary: string;
  run(args: string[]): Promise<number | null>;
}

/** A wrong command line: printed as one line plus the command's usage, exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

type Options = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>;

/** parseArgs in strict mode; its errors become UsageErrors naming the command. */
export function options<O extends Options>(usage: string, args: string[], opts: O, positionals = 0) {
  let r: ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>>;
  try {
    r = parseArgs({ args, options: opts, strict: true, allowPositionals: true });
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (!code.startsWith('ERR_PARSE_ARGS')) throw e;
    const msg = (e as Error).message;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option ${/'([^']+)'/.exec(msg)?.[1] ?? msg}`, usage);
    throw new UsageError(msg.split('\n')[0], usage);
  }
  if (r.positionals.length > positionals) throw new UsageError(`unexpected argument "${r.positionals[positionals]}"`, usage);
  return r;
}

const serve: Command = {
  name: 'serve',
  usage: `usage: hearth serve
  configured by the environment (PORT, HOST, DATA_DIR, DATABASE_URL, HEARTH_SSH_PORT … see the README)`,
  summary: 'start the server: APIs, web pages, git over HTTP and SSH, the job worker (unless HEARTH_IN_PROCESS_WORKER=false)',
  async run(args) {
    options(serve.usage, args, {});
    const config = loadConfig();
    holdForServing(config.dataDir, 'serve');
    const c = await createContainer(config);
    // pushes an earlier life of this process (or a node that died) left half done: their events
    await c.pushes.recover({ scanAll: true });
    const app = await buildApp(c);
    const connections = trackConnections(app.server);
    // the web assets (compressed at their best levels: seconds on a busy machine) before the first page,
    // which would otherwise wait for them with every request behind it
    assets();
    let sshServer: Awaited<ReturnType<typeof startSshServer>> | null = null;
    // registered before the server listens: a signal as soon as it does stops it as any other
    onStopSignal(c.log, 'serve', config.shutdownTimeoutMs, async () => {
      // connections without a request close now, the others after their response; running SSH git
      // sessions get the time left but a second (then they are ended before the process is)
      const closing = app.close();
      connections.closeIdle();
      await Promise.all([sshServer?.close(Math.max(0, config.shutdownTimeoutMs - 1000)), closing]);
      await c.close();
    });
    await app.listen({ port: config.port, host: config.host });
    if (!app.server.listening) return null; // stopped already
    // git over SSH from the same process (HEARTH_SSH_PORT=0: none); host keys made once in DATA_DIR/ssh
    if (config.ssh.port > 0) {
      const hostKeys = loadHostKeys(path.join(config.dataDir, 'ssh'));
      sshServer = await startSshServer(c, hostKeys, config.ssh.port, config.ssh.listen);
      c.log.info({ port: sshServer.port, host: config.ssh.listen, hostKeys: hostKeys.map(hostKeyFingerprint) }, 'git over SSH listening');
    }
    c.pushes.startSweeping();
    // what imports and uploads killed with an earlier life of this process left in DATA_DIR/tmp
    await c.importExport.imports.removeStaleWork();
    if (config.inProcessWorker) c.worker.start();
    return null;
  },
};

const worker: Command = {
  name: 'worker',
  usage: 'usage: hearth worker',
  summary: 'run the job worker alone (hook deliveries); several may run at once',
  async run(args) {
    options(worker.usage, args, {});
    const config = loadConfig();
    holdForServing(config.dataDir, 'worker');
    const c = await createContainer(config);
    await c.importExport.imports.removeStaleWork();
    c.worker.start();
    onStopSignal(c.log, 'worker', config.shutdownTimeoutMs, () => c.close());
    return null;
  },
};

/** serve and worker hold DATA_DIR while they run (DATA_DIR/locks, see lib/data-dir-lock.ts): `backup restore`
 * refuses meanwhile, and neither starts while a restore runs. */
function holdForServing(dataDir: string, command: string): void {
  const lock = holdDataDir(dataDir, command);
  const restore = dataDirHolders(dataDir).live.find((h) => h.command === 'backup restore');
  if (restore) {
    lock.release();
    throw new Error(`${dataDir} is being restored by ${describeHolder(restore)}; start ${command} when it has finished`);
  }
}

const migrateCmd: Command = {
  name: 'migrate',
  usage: 'usage: hearth migrate',
  summary: 'apply database migrations',
  async run(args) {
    options(migrateCmd.usage, args, {});
    const config = loadConfig();
    const db = createDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const applied = await migrate(db);
    await db.close();
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    return 0;
  },
};

const runnerCmd: Command = {
  name: 'runner',
  usage: `usage: hearth runner [--url URL] [--token glrt-…] [--config FILE] [--once] [--concurrent N] [--builds-dir DIR]
       hearth runner register [--url URL] [--token glrt-…|GR1348941…] [--config FILE] [--description D] [--tag-list a,b]
  runs CI jobs of that server with the shell executor; the URL and token come from the flags, else
  HEARTH_RUNNER_URL and HEARTH_RUNNER_TOKEN, else the config file that \`register\` wrote (--config, default
  ~/.config/hearth/runner.json); --once takes one job, or none, and exits; --concurrent 1 to 64 (default 1).
  register checks a runner token (glrt-…, from the project's CI/CD settings or POST /user/runners) with the
  server, or registers a runner with a registration token, and writes the config file (mode 0600)`,
  summary: 'run CI jobs of a Hearth server with the shell executor',
  run: (args) => runner(args),
};

const adminCmd: Command = {
  name: 'admin',
  usage: `usage: hearth admin create-user --username U --email E [--name N] [--password P] [--admin]
       hearth admin create-token --username U --name N [--scopes api,read_api] [--expires-at YYYY-MM-DD]
       hearth admin reset-password --username U [--password P]`,
  summary: 'create users and personal access tokens, reset passwords',
  run: (args) => admin(args[0], args.slice(1)),
};

const secretsCmd: Command = {
  name: 'secrets',
  usage: `usage: hearth secrets rotate
  re-seals every secret kept at rest (CI/CD variable values) with the first key of HEARTH_ENCRYPTION_KEYS;
  to rotate: put the new key first (HEARTH_ENCRYPTION_KEYS=new,old) on every node, run this once, then drop the old key`,
  summary: 'rotate the key that seals secrets at rest',
  run: async (args) => {
    if (args[0] !== 'rotate') throw new UsageError(args[0] === undefined ? 'a subcommand is required' : `unknown subcommand "${args[0]}"`, secretsCmd.usage);
    options(secretsCmd.usage, args.slice(1), {});
    return withContainer(async (c) => {
      const n = await c.ci.variables.reseal();
      process.stdout.write(`re-sealed ${n} secret${n === 1 ? '' : 's'}\n`);
      return 0;
    });
  },
};

const backupCmd: Command = {
  name: 'backup',
  usage: BACKUP_USAGE,
  summary: 'write everything to one archive, or restore one (DATA_DIR, DATABASE_URL name the target)',
  // src/backup/cli.ts parses its own options (options() above, with BACKUP_USAGE)
  run: (args) => runBackupCommand(args[0], args.slice(1)),
};

/** The command table: `hearth <name> …`. */
export const COMMANDS: Command[] = [serve, worker, migrateCmd, runnerCmd, adminCmd, secretsCmd, backupCmd];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 'help <command>'.length) + 2;
  return [
    'usage: hearth <command> [options]',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    `  ${'help <command>'.padEnd(width)}the command's options (or: hearth <command> --help)`,
    `  ${'--version'.padEnd(width)}print the version`,
  ].join('\n');
}

/** A second signal this soon after the first is the same stop: `npm start` forwards the terminal's Ctrl-C
 * to the server, which got it from the terminal already. */
const SAME_SIGNAL_MS = 1000;

/** SIGTERM/SIGINT: stop taking work, let running requests, git processes and deliveries finish — for at most
 * `timeoutMs` (HEARTH_SHUTDOWN_TIMEOUT_MS) —, log "<what> stopped" and exit 0, or 1 when the time ran out
 * first. A second signal within a second of the first changes nothing; a later one exits at once (1). */
function onStopSignal(log: Container['log'], what: string, timeoutMs: number, stop: () => Promise<unknown>): void {
  let first = 0;
  const handler = (signal: NodeJS.Signals) => {
    if (first) {
      if (performance.now() - first < SAME_SIGNAL_MS) return;
      log.warn({ signal }, `${signal} again: ${what} exits now, without draining`);
      process.exit(1);
    }
    first = performance.now();
    log.info({ signal, timeoutMs }, `stopping ${what}: draining requests, git processes and the worker`);
    closeGitBudget(); // git still queued, or finding no free slot, gets 503 at once: the drain never waits behind the queue
    const timer = setTimeout(() => {
      log.warn({ timeoutMs }, `${what} stopped: the drain took longer than ${timeoutMs} ms, work still in flight was cut short`);
      process.exit(1);
    }, timeoutMs);
    stop().then(
      () => {
        clearTimeout(timer);
        log.info({ durationMs: Math.round(performance.now() - first) }, `${what} stopped`);
        process.exit(0);
      },
      (err) => {
        clearTimeout(timer);
        log.error({ err }, `${what} stopped: stopping failed`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

function isHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

/** Returns an exit code, or null when the process should keep running (serve, worker). */
export async function runCli(argv: string[]): Promise<number | null> {
  const [name, ...args] = argv;
  if (name === undefined) {
    process.stderr.write(`hearth: a command is required (npm start runs "hearth serve")\n${usage()}\n`);
    return 2;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    process.stdout.write(`hearth ${VERSION}\n`);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const cmd = COMMANDS.find((c) => c.name === args[0]);
    if (args[0] !== undefined && !cmd) {
      process.stderr.write(`hearth: unknown command "${args[0]}"\n${usage()}\n`);
      return 2;
    }
    process.stdout.write(`${cmd ? cmd.usage : usage()}\n`);
    return 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    process.stderr.write(`hearth: unknown ${name.startsWith('-') ? 'option' : 'command'} "${name}"\n${usage()}\n`);
    return 2;
  }
  if (isHelp(args)) {
    process.stdout.write(`${cmd.usage}\n`);
    return 0;
  }
  try {
    return await cmd.run(args);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`hearth ${cmd.name}: ${err.message}\n${err.usage}\n`);
      return 2;
    }
    process.stderr.write(`hearth: ${explain(err)}\n`);
    return 1;
  }
}

/** Where `hearth runner register` keeps the URL and token, and `hearth runner` reads them. */
function runnerConfigFile(flag: string | undefined): string {
  return path.resolve(flag ?? path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'hearth', 'runner.json'));
}

function readRunnerConfig(file: string): { url?: string; token?: string } {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as { url?: unknown; token?: unknown };
    return { url: typeof v.url === 'string' ? v.url : undefined, token: typeof v.token === 'string' ? v.token : undefined };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`${file}: ${(e as Error).message}`);
  }
}

/** `hearth runner`: no database, no container; only the server's runner protocol. */
async function runner(args: string[]): Promise<number> {
  if (args[0] === 'register') return runnerRegister(args.slice(1));
  const { values: v } = options(runnerCmd.usage, args, {
    url: { type: 'string' },
    token: { type: 'string' },
    config: { type: 'string' },
    once: { type: 'boolean' },
    concurrent: { type: 'string' },
    'builds-dir': { type: 'string' },
  });
  const saved = v.url && v.token ? {} : readRunnerConfig(runnerConfigFile(v.config));
  const url = v.url ?? process.env.HEARTH_RUNNER_URL ?? saved.url;
  const token = v.token ?? process.env.HEARTH_RUNNER_TOKEN ?? saved.token;
  if (!url) throw new Error('--url (or HEARTH_RUNNER_URL, or `hearth runner register`) is required');
  if (!token) throw new Error('--token (or HEARTH_RUNNER_TOKEN, or `hearth runner register`) is required');
  const concurrent = v.concurrent === undefined ? 1 : Number(v.concurrent);
  if (!Number.isInteger(concurrent) || concurrent < 1 || concurrent > 64) throw new Error('--concurrent must be an integer from 1 to 64');
  const { Runner } = await import('./runner/runner.ts');
  const r = new Runner({ url, token, once: !!v.once, concurrent, buildsDir: v['builds-dir'] });
  let signals = 0;
  const onSignal = () => {
    signals++;
    process.stderr.write(signals === 1 ? 'hearth runner: stopping (running jobs finish; again to cancel them)\n' : 'hearth runner: canceling running jobs\n');
    r.stop(signals > 1);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await r.run();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
}

/**
 * `hearth runner register`: a runner token (glrt-…) is checked with the server (POST /runners/verify); a
 * registration token registers a new runner (POST /runners) whose token is kept. Either way the URL and the
 * runner's token go to the config file (0600), which a bare `hearth runner` then reads.
 */
async function runnerRegister(args: string[]): Promise<number> {
  const { values: v } = options(runnerCmd.usage, args, {
    url: { type: 'string' },
    token: { type: 'string' },
    config: { type: 'string' },
    description: { type: 'string' },
    'tag-list': { type: 'string' },
    'builds-dir': { type: 'string' },
  });
  const url = v.url ?? process.env.HEARTH_RUNNER_URL;
  const token = v.token ?? process.env.HEARTH_RUNNER_TOKEN;
  if (!url || !/^https?:\/\//.test(url)) throw new Error("--url (or HEARTH_RUNNER_URL) must be the server's http(s) URL");
  if (!token) throw new Error('--token (or HEARTH_RUNNER_TOKEN) is required: a runner token (glrt-…) or a registration token');
  const { RunnerClient } = await import('./runner/protocol.ts');
  const { defaultBuildsDir, systemId, versionInfo } = await import('./runner/runner.ts');
  const client = new RunnerClient(url, token, versionInfo(), systemId(path.resolve(v['builds-dir'] ?? defaultBuildsDir())));
  let id: number;
  let runnerToken = token;
  if (token.startsWith('glrt-')) {
    id = (await client.verify()).id;
  } else {
    const tags = (v['tag-list'] ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    const r = await client.register({ description: v.description ?? os.hostname(), tagList: tags });
    id = r.id;
    runnerToken = r.token;
  }
  const file = runnerConfigFile(v.config);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ url, token: runnerToken }, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  process.stdout.write(
    `runner ${id} registered with ${url}; its token is in ${file}\nstart it with: hearth runner${v.config ? ` --config ${v.config}` : ''}\n`,
  );
  return 0;
}

async function admin(sub: string | undefined, args: string[]): Promise<number> {
  const opts = {
    username: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    password: { type: 'string' },
    admin: { type: 'boolean' },
    scopes: { type: 'string' },
    'expires-at': { type: 'string' },
  } as const;
  if (sub === undefined || !['create-user', 'create-token', 'reset-password'].includes(sub)) {
    throw new UsageError(sub === undefined ? 'a subcommand is required' : `unknown subcommand "${sub}"`, adminCmd.usage);
  }
  const { values: v } = options(adminCmd.usage, args, opts);
  const need = (k: keyof typeof v) => {
    const val = v[k];
    if (typeof val !== 'string' || !val) throw new Error(`--${k} is required`);
    return val;
  };
  switch (sub) {
    case 'create-user':
      return withContainer(async (c) => {
        const u = await c.users.create({
          username: need('username'),
          email: need('email'),
          name: v.name ?? need('username'),
          password: v.password ?? null,
          is_admin: !!v.admin,
        });
        process.stdout.write(`created user ${u.username} (id ${u.id})\n`);
        return 0;
      });
    case 'create-token':
      return withContainer(async (c) => {
        const user = await c.users.byUsername(need('username'));
        if (!user) throw new Error(`no user named "${v.username}"`);
        const scopes = (v.scopes ?? 'api')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const bad = scopes.filter((s) => !availableScopes(user.is_admin === 1).includes(s));
        if (bad.length) throw new Error(`unknown or unavailable scopes: ${bad.join(', ')}`);
        const input = { name: need('name'), scopes, expires_at: v['expires-at'] ?? null };
        const errors = { ...c.tokens.validateInput(user, input, false), ...pastExpiryErrors(input.expires_at) };
        if (Object.keys(errors).length) throw new DomainError('invalid', 400, errors);
        const t = await c.tokens.create(user, input);
        process.stdout.write(`${t.token}\n`);
        return 0;
      });
    case 'reset-password':
      return withContainer(async (c) => {
        const user = await c.users.byUsername(need('username'));
        if (!user) throw new Error(`no user named "${v.username}"`);
        const password = v.password ?? c.tokens.randomSecret().slice(0, 24);
        await c.users.setPassword(user, password);
        process.stdout.write(v.password ? `password of ${user.username} changed\n` : `new password of ${user.username}: ${password}\n`);
        return 0;
      });
    default:
      throw new Error(`unknown admin command "${sub ?? ''}" (create-user, create-token, reset-password)`);
  }
}
