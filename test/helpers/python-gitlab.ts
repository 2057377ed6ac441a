// The real python-gitlab client (Debian's python3-gitlab, imported with /usr/bin/python3) on a script against a
// test server: whether it is installed, the prelude every script starts with (the client, and an assertion that
// prints what it got and exits 1), and the run that expects nothing on stderr and "all ok" last.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

export const PYTHON = '/usr/bin/python3';
export const pythonGitlab = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

export const PRELUDE = String.raw`
import sys, gitlab
base, token = sys.argv[1:3]
gl = gitlab.Gitlab(base, private_token=token)
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)
`;

/** `PRELUDE + script` run with the server's address and a token: its output, after asserting it ended with "all ok". */
export async function runPythonGitlab(script: string, base: string, token: string): Promise<string> {
  const out = await promisify(execFile)(PYTHON, ['-c', PRELUDE + script, base, token]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
  return out.stdout;
}
