// The git spawner (src/git/spawner.ts): git() runs its commands from a small child process; what a caller sees
// is what it saw when the server started git itself: output, exit codes, stderr, timeouts, output caps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { configureGit, git, GitError } from '../../src/git/command.ts';
import { spawner } from '../../src/git/spawner.ts';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-spawner-home-'));
configureGit(home);

function bareRepo(t: { after(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-spawner-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  execFileSync('git', ['init', '-q', '--bare', dir]);
  return dir;
}

test('git() answers output, input, exit codes and stderr as git gave them', async (t) => {
  const gitDir = bareRepo(t);
  const blob = await git(['hash-object', '-w', '--stdin'], { gitDir, input: 'hello\n' });
  assert.deepEqual(blob, { stdout: Buffer.from('ce013625030ba8dba906f756967f9e9ca394464a\n'), stderr: '', code: 0 });
  const shown = await git(['cat-file', '-p', 'ce013625030ba8dba906f756967f9e9ca394464a'], { gitDir });
  assert.equal(shown.stdout.toString(), 'hello\n');
  // a binary blob comes back byte for byte
  const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const id = (await git(['hash-object', '-w', '--stdin'], { gitDir, input: bytes })).stdout.toString().trim();
  assert.deepEqual((await git(['cat-file', 'blob', id], { gitDir })).stdout, bytes);
  // an exit code outside okCodes is a GitError with git's code and stderr
  const e = await git(['rev-parse', '--verify', 'refs/heads/none'], { gitDir }).catch((x: unknown) => x);
  assert.ok(e instanceof GitError);
  assert.equal(e.code, 128);
  assert.equal(e.stderr, 'fatal: Needed a single revision\n');
  assert.equal(e.message, 'git rev-parse exited with 128: fatal: Needed a single revision');
  // one that is allowed is an answer
  const ok = await git(['rev-parse', '--verify', '--quiet', 'refs/heads/none'], { gitDir, okCodes: [0, 1] });
  assert.deepEqual(ok, { stdout: Buffer.alloc(0), stderr: '', code: 1 });
});

test('git() kills a command past its timeout or its output cap, and reports a directory that is not there', async (t) => {
  const gitDir = bareRepo(t);
  const id = (await git(['hash-object', '-w', '--stdin'], { gitDir, input: Buffer.alloc(100_000, 97) })).stdout.toString().trim();
  const big = await git(['cat-file', 'blob', id], { gitDir, maxBytes: 1000 }).catch((x: unknown) => x);
  assert.ok(big instanceof GitError);
  assert.equal(big.message, 'git cat-file: output exceeds 1000 bytes');
  // a command that runs too long is killed at its timeout (the alias's shell holds the output open for its second)
  const slow = await git(['-c', 'alias.nap=!sleep 1', 'nap'], { gitDir, timeoutMs: 200 }).catch((x: unknown) => x);
  assert.ok(slow instanceof GitError);
  assert.equal(slow.message, 'git -c killed by SIGKILL');
  const missing = await git(['status'], { cwd: path.join(gitDir, 'no-such-dir') }).catch((x: unknown) => x);
  assert.ok(missing instanceof GitError);
  assert.match(missing.message, /^git status: spawn git ENOENT$/);
  assert.equal(missing.code, null);
});

test('a spawner that died fails the commands it ran and the next command starts another', async (t) => {
  const gitDir = bareRepo(t);
  const running = git(['-c', 'alias.nap=!sleep 5', 'nap'], { gitDir, timeoutMs: 10_000 }).catch((x: unknown) => x);
  await new Promise((r) => setTimeout(r, 200));
  spawner.stop();
  const failed = await running;
  assert.ok(failed instanceof GitError);
  assert.match(failed.message, /^git -c: git spawner exited \(SIGTERM\)$/);
  const again = await git(['rev-parse', '--is-bare-repository'], { gitDir });
  assert.equal(again.stdout.toString(), 'true\n');
});

test('many commands at once each get their own answer', async (t) => {
  const gitDir = bareRepo(t);
  const inputs = Array.from({ length: 50 }, (_, i) => `blob ${i}\n`);
  const ids = await Promise.all(inputs.map((input) => git(['hash-object', '-w', '--stdin'], { gitDir, input })));
  const back = await Promise.all(ids.map((r) => git(['cat-file', 'blob', r.stdout.toString().trim()], { gitDir })));
  assert.deepEqual(
    back.map((r) => r.stdout.toString()),
    inputs,
  );
});
