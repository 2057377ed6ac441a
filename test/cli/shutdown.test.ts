// Stopping `hearth serve` (SIGTERM from Docker or systemd, Ctrl-C under `npm start`): connections without a
// request do not hold the drain, a request in flight still completes and its connection then closes, a
// second SIGINT right after the first (npm forwards the terminal's) is the same stop, the drain has a bound,
// and the log ends with a "stopped" line. Real processes started as the README starts them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { groupsOf, startHearth, tempDataDir, TOKEN, type HearthProcess } from '../helpers/process.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A POST /api/v4/groups whose body is sent in two parts: `finish()` sends the rest; `response` resolves when the server closed the connection. */
async function groupRequestInTwoParts(port: number, name: string) {
  const body = JSON.stringify({ name, path: name.toLowerCase() });
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let received = '';
  socket.on('data', (b) => (received += b));
  const response = new Promise<RawResponse>((resolve) =>
    socket.once('close', () => {
      const [head, ...rest] = received.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    }),
  );
  socket.write(
    `POST /api/v4/groups HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nPRIVATE-TOKEN: ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body.slice(0, 10)}`,
  );
  return { finish: () => socket.write(body.slice(10)), response };
}

const stopping = (l: { msg: string }) => l.msg.startsWith('stopping serve');
/** LOG_LEVEL=debug logs each request as it starts (its headers read, its body not yet) */
const groupRequestStarted = (l: { msg: string; req?: unknown }) =>
  l.msg === 'incoming request' && (l.req as { url?: string } | undefined)?.url === '/api/v4/groups';
const DEBUG = { LOG_LEVEL: 'debug' };

async function stoppedCleanly(server: HearthProcess) {
  assert.deepEqual(await server.exited, { code: 0, signal: null }, server.output());
  // the last line logged (by its time: stdout and stderr are two pipes, read in either order)
  const byTime = server.lines.filter((l) => typeof l.time === 'number').sort((a, b) => (a.time as number) - (b.time as number));
  assert.equal(byTime.at(-1)?.msg, 'serve stopped', server.output());
}

test('SIGTERM with idle connections open (keep-alive, a preconnect that sent nothing): they close at once, exit 0', { timeout: 120_000 }, async (t) => {
  const server = await startHearth(t, { dataDir: tempDataDir(t), env: { HEARTH_SHUTDOWN_TIMEOUT_MS: '60000' } });
  const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 60_000 });
  t.after(() => agent.destroy());
  const health = await new Promise<{ status: number; body: string; socket: net.Socket }>((resolve, reject) => {
    http
      .get(`${server.base}/-/health`, { agent }, (res) => {
        const socket = res.socket;
        let body = '';
        res.on('data', (b) => (body += b));
        res.on('end', () => resolve({ status: res.statusCode!, body, socket }));
      })
      .on('error', reject);
  });
  assert.deepEqual([health.status, health.body], [200, 'Hearth OK']);
  const keptAlive = new Promise((r) => health.socket.once('close', r));
  // a browser opens connections ahead of its requests
  const preconnect = net.connect(server.port, '127.0.0.1');
  await new Promise((r) => preconnect.once('connect', r));
  const preconnectClosed = new Promise((r) => preconnect.once('close', r));
  preconnect.on('error', () => {});

  server.child.kill('SIGTERM');
  await Promise.all([keptAlive, preconnectClosed]);
  await stoppedCleanly(server);
  // the drain did not wait for the clients to give up
  const stopped = server.lines.at(-1)!;
  assert.ok(typeof stopped.durationMs === 'number' && stopped.durationMs < 60_000, JSON.stringify(stopped));
});

test('SIGTERM: a request in flight completes (201, Connection: close), its write stays, then the server exits 0', { timeout: 120_000 }, async (t) => {
  const dataDir = tempDataDir(t);
  const server = await startHearth(t, { dataDir, env: { ...DEBUG, HEARTH_SHUTDOWN_TIMEOUT_MS: '60000' } });
  const req = await groupRequestInTwoParts(server.port, 'Inflight');
  await server.waitForLine(groupRequestStarted);
  server.child.kill('SIGTERM');
  await server.waitForLine(stopping);
  req.finish();
  const res = await req.response;
  assert.equal(res.status, 201, res.body);
  assert.equal(res.headers.connection, 'close');
  assert.equal(JSON.parse(res.body).path, 'inflight');
  await stoppedCleanly(server);
  assert.deepEqual(groupsOf(dataDir), ['inflight']);
});

test('Ctrl-C under npm start: a second SIGINT within a second is the same stop: the drain finishes, exit 0', { timeout: 120_000 }, async (t) => {
  const dataDir = tempDataDir(t);
  const server = await startHearth(t, { dataDir, env: { ...DEBUG, HEARTH_SHUTDOWN_TIMEOUT_MS: '60000' } });
  // a request in flight holds the drain open while the second signal arrives
  const req = await groupRequestInTwoParts(server.port, 'Twice');
  await server.waitForLine(groupRequestStarted);
  server.child.kill('SIGINT');
  await server.waitForLine(stopping);
  server.child.kill('SIGINT'); // what npm forwards
  // the second signal has been handled (the process is alive and still draining) before the request ends
  await new Promise((r) => setImmediate(r));
  assert.equal(server.child.exitCode, null);
  req.finish();
  const res = await req.response;
  assert.equal(res.status, 201, res.body);
  await stoppedCleanly(server);
  assert.deepEqual(groupsOf(dataDir), ['twice']);
  assert.equal(server.lines.filter(stopping).length, 1);
});

test('HEARTH_SHUTDOWN_TIMEOUT_MS bounds the drain: a request that never completes is cut, exit 1, the log says so', { timeout: 120_000 }, async (t) => {
  const server = await startHearth(t, { dataDir: tempDataDir(t), env: { ...DEBUG, HEARTH_SHUTDOWN_TIMEOUT_MS: '1000' } });
  const req = await groupRequestInTwoParts(server.port, 'Never');
  await server.waitForLine(groupRequestStarted);
  server.child.kill('SIGTERM');
  assert.deepEqual(await server.exited, { code: 1, signal: null }, server.output());
  const last = server.lines.at(-1)!;
  assert.equal(last.msg, 'serve stopped: the drain took longer than 1000 ms, work still in flight was cut short');
  assert.equal(last.level, 40);
  // the client sees its connection end without an answer
  assert.ok(Number.isNaN((await req.response).status));
});
