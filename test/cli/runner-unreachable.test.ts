// `hearth runner` says which server it could not reach and why (not undici's bare "fetch failed"), and
// names itself Hearth/<package version> in its requests. Real processes; the "server" is a local sink.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, ROOT, tempDataDir } from '../helpers/process.ts';
import { startSink } from '../helpers/sink.ts';

const run = promisify(execFile);
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };

async function runner(args: string[], buildsDir: string) {
  try {
    const r = await run(process.execPath, ['bin/hearth.js', 'runner', ...args, '--builds-dir', buildsDir], { cwd: ROOT });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e: any) {
    return { code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string };
  }
}

test('runner: a server that is down is named with the reason; requests carry User-Agent Hearth/<version>', async (t) => {
  const buildsDir = tempDataDir(t, 'hearth-runner-builds-');
  const port = await freePort(); // nothing listens there
  const url = `http://127.0.0.1:${port}`;
  const down = await runner(['--url', url, '--token', 'glrt-unreachable', '--once'], buildsDir);
  const why = `POST ${url}/api/v4/jobs/request: connect ECONNREFUSED 127.0.0.1:${port}`;
  assert.deepEqual(down, { code: 1, stdout: '', stderr: `Checking for jobs... failed: ${why}\nhearth: ${why}\n` });

  // a coordinator with no job for it (204): one request, then --once ends
  const sink = await startSink(t);
  sink.respond.push(204);
  const idle = await runner(['--url', sink.url, '--token', 'glrt-idle', '--once'], buildsDir);
  assert.deepEqual(idle, { code: 0, stdout: '', stderr: '' });
  assert.equal(sink.received.length, 1);
  assert.equal(sink.received[0].url, '/api/v4/jobs/request');
  assert.equal(sink.received[0].headers['user-agent'], `Hearth/${pkg.version}`);
  assert.equal(sink.received[0].json.info.version, pkg.version);
});
