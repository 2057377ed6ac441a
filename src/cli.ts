// The command line: one clear line on error, non-zero exit.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from './config.ts';
import { createContainer, type Container } from './container.ts';
import { buildApp } from './app.ts';
import { createDb } from './db/connect.ts';
import { migrate } from './db/migrate.ts';
import { DomainError } from './lib/errors.ts';
import { pastExpiryErrors } from './domain/tokens/tokens.service.ts';
import { availableScopes } from './domain/tokens/scopes.ts';
import { hostKeyFingerprint, loadHostKeys } from './ssh/host-keys.ts';
import { startSshServer } from './ssh/server.ts';

const USAGE = `usage: hearth <command>
  serve                         start the server (default; with the job worker unless HEARTH_IN_PROCESS_WORKER=false)
  worker                        run the job worker alone (hook deliveries); several may run at once
  migrate                       apply database migrations
  runner --url URL --token glrt-… [--once] [--concurrent N] [--builds-dir DIR]
                                run CI jobs of that server with the shell executor (HEARTH_RUNNER_URL,
                                HEARTH_RUNNER_TOKEN); --once takes one job, or none, and exits
  admin create-user --username U --email E --name N [--password P] [--admin]
  admin create-token --username U --name N [--scopes api,read_api] [--expires-at YYYY-MM-DD]
  admin reset-password --username U [--password P]`;

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

/** Returns an exit code, or null when the process should keep running (serve). */
export async function runCli(argv: string[]): Promise<number | null> {
  const [cmd = 'serve', sub, ...rest] = argv;
  try {
    switch (cmd) {
      case 'serve': {
        const config = loadConfig();
        const c = await createContainer(config);
        // pushes an earlier life of this process (or a node that died) left half done: their events
        await c.pushes.recover({ scanAll: true });
        const app = await buildApp(c);
        await app.listen({ port: config.port, host: config.host });
        // git over SSH from the same process (HEARTH_SSH_PORT=0: none); host keys made once in DATA_DIR/ssh
        let sshServer: Awaited<ReturnType<typeof startSshServer>> | null = null;
        if (config.ssh.port > 0) {
          const hostKeys = loadHostKeys(path.join(config.dataDir, 'ssh'));
          sshServer = await startSshServer(c, hostKeys, config.ssh.port, config.ssh.listen);
          c.log.info({ port: sshServer.port, host: config.ssh.listen, hostKeys: hostKeys.map(hostKeyFingerprint) }, 'git over SSH listening');
        }
        c.pushes.startSweeping();
        if (config.inProcessWorker) c.worker.start();
        const stop = async () => {
          await sshServer?.close();
          await app.close();
          await c.close();
          process.exit(0);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        return null;
      }
      case 'worker': {
        const c = await createContainer(loadConfig());
        c.worker.start();
        const stop = async () => {
          await c.close();
          process.exit(0);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        return null;
      }
      case 'migrate': {
        const config = loadConfig();
        const db = createDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
        const applied = await migrate(db);
        await db.close();
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
        return 0;
      }
      case 'admin':
        return await admin(sub, rest);
      case 'runner':
        return await runner(argv.slice(1));
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE + '\n');
        return 0;
      default:
        process.stderr.write(`hearth: unknown command "${cmd}"\n${USAGE}\n`);
        return 2;
    }
  } catch (err) {
    process.stderr.write(`hearth: ${explain(err)}\n`);
    return 1;
  }
}

/** `hearth runner`: no database, no container; only the server's runner protocol. */
async function runner(args: string[]): Promise<number> {
  const { values: v } = parseArgs({
    args,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      once: { type: 'boolean' },
      concurrent: { type: 'string' },
      'builds-dir': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const url = v.url ?? process.env.HEARTH_RUNNER_URL;
  const token = v.token ?? process.env.HEARTH_RUNNER_TOKEN;
  if (!url) throw new Error('--url (or HEARTH_RUNNER_URL) is required');
  if (!token) throw new Error('--token (or HEARTH_RUNNER_TOKEN) is required');
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
  const { values: v } = parseArgs({ args, options: opts, strict: true, allowPositionals: false });
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
