// The command line, run as a user runs it: a real process on a fresh data directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { createDb } from '../../src/db/connect.ts';
import { MIGRATIONS } from '../../src/db/migrate.ts';

const run = promisify(execFile);
const BIN = path.resolve('bin/hearth.js');

async function hearth(dataDir: string, args: string[], env: Record<string, string> = {}) {
  try {
    const r = await run(process.execPath, [BIN, ...args], { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', DATABASE_URL: '', ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e: any) {
    return { code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string };
  }
}

test('migrate, create-user, create-token, reset-password; errors are one line and non-zero', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-cli-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const m = await hearth(dir, ['migrate']);
  assert.equal(m.code, 0, m.stderr);
  assert.equal(m.stdout, `applied: ${MIGRATIONS.map((x) => x.name).join(', ')}\n`);
  assert.equal(MIGRATIONS[0].name, '001-foundation');
  assert.equal((await hearth(dir, ['migrate'])).stdout, 'database is up to date\n');

  const u = await hearth(dir, [
    'admin',
    'create-user',
    '--username',
    'alice',
    '--email',
    'alice@example.com',
    '--name',
    'Alice',
    '--password',
    'secret-pass-1',
  ]);
  assert.equal(u.code, 0, u.stderr);
  assert.equal(u.stdout, 'created user alice (id 2)\n');
  // root was created on first container start, with its password in the file (mode 0600)
  const pwFile = path.join(dir, 'initial_root_password');
  assert.equal(fs.statSync(pwFile).mode & 0o777, 0o600);
  assert.match(fs.readFileSync(pwFile, 'utf8'), /^Password: \S{20,}\n$/);

  const dup = await hearth(dir, ['admin', 'create-user', '--username', 'ALICE', '--email', 'other@example.com']);
  assert.equal(dup.code, 1);
  assert.equal(dup.stderr, 'hearth: Username has already been taken\n');

  const bad = await hearth(dir, ['admin', 'create-user', '--username', 'bob', '--email', 'not-an-email']);
  assert.equal(bad.code, 1);
  assert.equal(bad.stderr, 'hearth: email is invalid\n');

  const tok = await hearth(dir, ['admin', 'create-token', '--username', 'alice', '--name', 'ci', '--scopes', 'api,read_api']);
  assert.equal(tok.code, 0, tok.stderr);
  assert.match(tok.stdout, /^glpat-\S+\n$/);

  const badScope = await hearth(dir, ['admin', 'create-token', '--username', 'alice', '--name', 'ci', '--scopes', 'sudo']);
  assert.equal(badScope.code, 1);
  assert.equal(badScope.stderr, 'hearth: unknown or unavailable scopes: sudo\n');

  const past = await hearth(dir, ['admin', 'create-token', '--username', 'alice', '--name', 'old', '--expires-at', '2001-02-03']);
  assert.equal(past.code, 1);
  assert.equal(past.stderr, 'hearth: expires_at must be in the future\n');

  const nobody = await hearth(dir, ['admin', 'reset-password', '--username', 'nobody']);
  assert.equal(nobody.code, 1);
  assert.equal(nobody.stderr, 'hearth: no user named "nobody"\n');

  const reset = await hearth(dir, ['admin', 'reset-password', '--username', 'alice']);
  assert.equal(reset.code, 0);
  assert.match(reset.stdout, /^new password of alice: \S+\n$/);

  const unknown = await hearth(dir, ['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^hearth: unknown command "frobnicate"\n/);

  const badOpt = await hearth(dir, ['admin', 'create-user', '--bogus']);
  assert.equal(badOpt.code, 2);
  assert.match(badOpt.stderr, /^hearth admin: unknown option --bogus\nusage: hearth admin create-user /);

  const badEnv = await hearth(dir, ['migrate'], { PORT: 'eighty' });
  assert.equal(badEnv.code, 1);
  assert.equal(badEnv.stderr, 'hearth: PORT must be an integer, got "eighty"\n');

  // state: the rows are there
  const db = createDb({ databaseUrl: null, dataDir: loadConfig({ DATA_DIR: dir }).dataDir });
  const users = await db.kysely.selectFrom('users').select(['id', 'username', 'is_admin']).orderBy('id').execute();
  assert.deepEqual(users, [
    { id: 1, username: 'root', is_admin: 1 },
    { id: 2, username: 'alice', is_admin: 0 },
  ]);
  const tokens = await db.kysely.selectFrom('personal_access_tokens').select(['name', 'scopes']).execute();
  assert.deepEqual(tokens, [{ name: 'ci', scopes: '["api","read_api"]' }]);
  await db.close();
});

test('serve: first start creates root, HEARTH_ROOT_TOKEN works, the log never holds the secret', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-serve-'));
  const { spawn } = await import('node:child_process');
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...process.env,
      DATA_DIR: dir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: '',
      HEARTH_ROOT_TOKEN: 'glpat-cli-serve-token',
      // the SSH server of serve too, on a port of its own
      HEARTH_SSH_PORT: String(port + 1),
    },
  });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  t.after(() => {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });
  // a first start migrates a new database: give it a minute on a busy machine, and stop waiting if it died
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? -1));
  for (let i = 0; i < 600 && !log.includes('Server listening') && exited === null; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(log.includes('Server listening'), `the server did not start (exit ${exited}):\n${log}`);
  const res = await fetch(`http://127.0.0.1:${port}/api/v4/version`, { headers: { 'private-token': 'glpat-cli-serve-token' } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/json');
  assert.deepEqual(await res.json(), { version: '17.0.0', revision: 'hearth' });
  const password = fs.readFileSync(path.join(dir, 'initial_root_password'), 'utf8').replace('Password: ', '').trim();
  assert.ok(log.includes('initial_root_password'));
  assert.ok(!log.includes(password));
  assert.ok(!log.includes('glpat-cli-serve-token'));
  // git over SSH from the same process, its host keys made in DATA_DIR/ssh
  for (let i = 0; i < 300 && !log.includes('git over SSH listening') && exited === null; i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(log.includes('git over SSH listening'), log);
  assert.deepEqual(fs.readdirSync(path.join(dir, 'ssh')).sort(), [
    'ssh_host_ed25519_key',
    'ssh_host_ed25519_key.pub',
    'ssh_host_rsa_key',
    'ssh_host_rsa_key.pub',
  ]);
});

test('the command line: --version, help per command, and usage errors (one line, then the usage, exit 2)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-cli-usage-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string };
  const [version, v, help, serveHelp, helpBackup, bare, port, unknown, unknownOpt, stray, adminNone, adminBad, runnerBad] = await Promise.all([
    hearth(dir, ['--version']),
    hearth(dir, ['-v']),
    hearth(dir, ['--help']),
    hearth(dir, ['serve', '--help']),
    hearth(dir, ['help', 'backup']),
    hearth(dir, []),
    hearth(dir, ['serve', '--port', '1']),
    hearth(dir, ['frobnicate']),
    hearth(dir, ['--frob']),
    hearth(dir, ['migrate', 'now']),
    hearth(dir, ['admin']),
    hearth(dir, ['admin', 'delete-everything']),
    hearth(dir, ['runner', '--url', 'http://x', '--token', 't', '--concurrent']),
  ]);
  assert.deepEqual(version, { code: 0, stdout: `hearth ${pkg.version}\n`, stderr: '' });
  assert.deepEqual(v, version);
  assert.equal(help.code, 0);
  assert.equal(help.stderr, '');
  const listed = help.stdout
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/)[0])
    .filter(Boolean);
  assert.deepEqual(listed, ['serve', 'worker', 'migrate', 'runner', 'admin', 'secrets', 'backup', 'help', '--version']);
  assert.match(serveHelp.stdout, /^usage: hearth serve\n/);
  assert.equal(serveHelp.code, 0);
  assert.match(helpBackup.stdout, /^usage: hearth backup create \[--output FILE\]\n\s+hearth backup restore FILE \[--force\]\n/);
  // a bare `hearth` does not serve: it says what is missing
  assert.equal(bare.code, 2);
  assert.equal(bare.stdout, '');
  assert.equal(bare.stderr, `hearth: a command is required (npm start runs "hearth serve")\n${help.stdout}`);
  assert.equal(port.code, 2);
  assert.equal(port.stderr, `hearth serve: unknown option --port\n${serveHelp.stdout}`);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stderr, `hearth: unknown command "frobnicate"\n${help.stdout}`);
  assert.equal(unknownOpt.code, 2);
  assert.equal(unknownOpt.stderr, `hearth: unknown option "--frob"\n${help.stdout}`);
  assert.equal(stray.code, 2);
  assert.equal(stray.stderr, 'hearth migrate: unexpected argument "now"\nusage: hearth migrate\n');
  assert.equal(adminNone.code, 2);
  assert.match(adminNone.stderr, /^hearth admin: a subcommand is required\nusage: hearth admin create-user /);
  assert.equal(adminBad.code, 2);
  assert.match(adminBad.stderr, /^hearth admin: unknown subcommand "delete-everything"\nusage: hearth admin create-user /);
  assert.equal(runnerBad.code, 2);
  assert.match(runnerBad.stderr, /^hearth runner: Option '--concurrent <value>' argument missing\nusage: hearth runner \[--url URL\] /);
  // nothing was made: no database, no root
  assert.deepEqual(fs.readdirSync(dir), []);
});
