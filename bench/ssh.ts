// npm run bench:ssh: git over SSH with the real OpenSSH client against the embedded server.
// - clone (bare) of the 10,000-file bench repository over SSH against `git clone --bare --no-local` of the
//   bare directory (git's own pack protocol over the local filesystem), median of BENCH_TIMED_RUNS;
//   bar: within 1.5×;
// - 20 concurrent SSH clones: all complete without errors (wall time reported);
// - connection set-up: `ssh git@127.0.0.1` (key exchange, public-key login, the greeting, exit), sequential,
//   p50/p99 of BENCH_SSH_CONNECTS runs; bar: p99 < 50 ms. The first login of a key (nothing cached) is
//   reported beside it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ssh2 from 'ssh2';
import { gitEnv } from '../src/git/command.ts';
import { loadHostKeys } from '../src/ssh/host-keys.ts';
import { startSshServer } from '../src/ssh/server.ts';
import { buildBigRepo } from './big-repo.ts';
import { insertKey, sshArgs } from '../test/helpers/ssh.ts';
import { benchContainer, freshBenchDatabase, publicProject, Report } from './harness.ts';

const run = promisify(execFile);
const TIMED_RUNS = Number(process.env.BENCH_TIMED_RUNS ?? 5);
const CONNECTS = Number(process.env.BENCH_SSH_CONNECTS ?? 200);
const CONCURRENT = 20;

await freshBenchDatabase('hearth_bench_ssh');
const { c, dataDir } = await benchContainer('hearth-bench-ssh-');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-bench-ssh-work-'));
const report = new Report();
const line = (x: string) => report.line(x);
let failed = false;
try {
  const project = await publicProject(c, 'Big', 'big');
  const { full_path: owner } = await c.db.kysely.selectFrom('namespaces').select('full_path').where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  const bare = c.repos.pathOf(project);
  const big = await buildBigRepo(bare, gitEnv());
  c.repos.repository(project).touchRefs();

  const server = await startSshServer(c, loadHostKeys(path.join(dataDir, 'ssh')), 0, '127.0.0.1');
  const port = server.port;
  const root = await c.db.kysely.selectFrom('users').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();

  /** a client key for root, stored as the keys API stores it */
  const keyFor = async (name: string) => {
    const pair = ssh2.utils.generateKeyPairSync('ed25519');
    const file = path.join(work, name);
    fs.writeFileSync(file, pair.private, { mode: 0o600 });
    await insertKey(c, { file, publicKey: pair.public }, { user: root, title: name });
    return file;
  };
  const keyFile = await keyFor('bench');
  const sshOpts = (file: string) => sshArgs(port, file);
  const gitSshEnv = { ...gitEnv(), GIT_SSH_COMMAND: ['ssh', ...sshOpts(keyFile)].join(' ') };
  let n = 0;
  const sshClone = () =>
    run('git', ['clone', '-q', '--bare', `git@127.0.0.1:${owner}/big.git`, path.join(work, `s${n++}`)], { env: gitSshEnv, maxBuffer: 1 << 26 });
  const localClone = () => run('git', ['clone', '-q', '--bare', '--no-local', bare, path.join(work, `l${n++}`)], { env: gitEnv(), maxBuffer: 1 << 26 });
  const timed = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
  const clean = () => {
    for (const d of fs.readdirSync(work)) if (/^[sl]\d+$/.test(d)) fs.rmSync(path.join(work, d), { recursive: true, force: true });
  };

  line(
    `Hearth SSH bench — ${big.files} files, ${big.commits} commits, ${c.db.dialect}, node ${process.version}, ${(await run('git', ['--version'])).stdout.trim()}, ${(await run('ssh', ['-V'])).stderr.trim()}`,
  );
  line('');
  // the first clone warms git's and the OS's caches for both sides alike
  await sshClone();
  await localClone();
  clean();
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let i = 0; i < TIMED_RUNS; i++) {
    ours.push(await timed(sshClone));
    theirs.push(await timed(localClone));
    clean();
  }
  const ratio = med(ours) / med(theirs);
  const cloneOk = ratio <= 1.5;
  failed ||= !cloneOk;
  line('| scenario | Hearth over SSH ms | `git clone --bare --no-local <bare dir>` ms | ratio | bar |');
  line('|---|---|---|---|---|');
  line(
    `| bare clone, median of ${TIMED_RUNS} | ${med(ours).toFixed(0)} | ${med(theirs).toFixed(0)} | ${ratio.toFixed(2)} | ≤ 1.5 ${cloneOk ? 'met' : 'MISSED'} |`,
  );
  line('');

  const t0 = performance.now();
  const results = await Promise.allSettled(Array.from({ length: CONCURRENT }, () => sshClone()));
  const wall = performance.now() - t0;
  const errors = results.filter((r) => r.status === 'rejected');
  const refsOk = fs.readdirSync(work).filter((d) => /^s\d+$/.test(d) && fs.existsSync(path.join(work, d, 'packed-refs'))).length;
  clean();
  failed ||= errors.length > 0;
  line(
    `${CONCURRENT} concurrent SSH clones: ${CONCURRENT - errors.length} completed, ${errors.length} failed, ${refsOk} with their refs, ${(wall / 1000).toFixed(1)} s wall${errors.length ? ` — first error: ${String((errors[0] as PromiseRejectedResult).reason).slice(0, 300)}` : ''}`,
  );
  line('');

  // connection set-up: a fresh key's first login (its row read from the database), then the same key again
  const freshKey = await keyFor('fresh');
  const first = await timed(() => run('ssh', [...sshOpts(freshKey), 'git@127.0.0.1']));
  const connects: number[] = [];
  for (let i = 0; i < CONNECTS; i++) connects.push(await timed(() => run('ssh', [...sshOpts(keyFile), 'git@127.0.0.1'])));
  const p99 = pct(connects, 99);
  failed ||= p99 >= 50;
  line('| connection set-up (`ssh git@127.0.0.1`: key exchange, login, greeting, exit) | p50 ms | p99 ms | bar |');
  line('|---|---|---|---|');
  line(`| ${CONNECTS} sequential logins | ${pct(connects, 50).toFixed(1)} | ${p99.toFixed(1)} | p99 < 50 ${p99 < 50 ? 'met' : 'MISSED'} |`);
  line(`| first login of a new key | ${first.toFixed(1)} | — | — |`);
  await server.close();
} finally {
  await c.close();
  fs.rmSync(work, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
}
report.save(true);
process.exit(failed ? 1 : 0);
