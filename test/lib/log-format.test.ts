// LOG_FORMAT=pretty: one readable line per log entry (time, level, message, request id, fields, an error's
// stack below), written by `hearth serve` itself; json stays the default off a terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { prettyLine } from '../../src/lib/log-format.ts';
import { startHearth, tempDataDir } from '../helpers/process.ts';

const TIME = /^\d\d:\d\d:\d\d\.\d{3} /;

test('prettyLine: time, level, message, [request id], fields as key=value, the stack indented', () => {
  const time = Date.UTC(2026, 0, 2, 3, 4, 5, 67);
  const d = new Date(time);
  const stamp = [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':') + '.067';
  const line = JSON.stringify({
    level: 40,
    time,
    pid: 1,
    hostname: 'h',
    reqId: 'req-1',
    method: 'GET',
    route: '/api/v4/projects/:id',
    statusCode: 200,
    durationMs: 1234,
    note: 'two words',
    msg: 'slow request',
  });
  assert.equal(prettyLine(line), `${stamp} WARN  slow request [req-1] method=GET route=/api/v4/projects/:id statusCode=200 durationMs=1234 note="two words"\n`);
  const failed = JSON.stringify({
    level: 50,
    time,
    msg: 'stopping serve failed',
    err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (y.ts:1:2)' },
  });
  assert.equal(prettyLine(failed), `${stamp} ERROR stopping serve failed\n    Error: boom\n        at x (y.ts:1:2)\n`);
  assert.equal(prettyLine('not json'), 'not json\n');
  // on a terminal the level is coloured
  assert.equal(prettyLine(JSON.stringify({ level: 30, time, msg: 'hi' }), true), `${stamp} \x1b[32mINFO \x1b[0m hi\n`);
});

test('LOG_FORMAT: json or pretty, anything else refused', () => {
  assert.equal(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
  assert.equal(loadConfig({ LOG_FORMAT: 'json' }).logFormat, 'json');
  assert.throws(() => loadConfig({ LOG_FORMAT: 'xml' }), /LOG_FORMAT must be json or pretty, got "xml"/);
});

test('hearth serve with LOG_FORMAT=pretty writes readable lines, to the last one', { timeout: 120_000 }, async (t) => {
  const server = await startHearth(t, {
    dataDir: tempDataDir(t),
    env: { LOG_FORMAT: 'pretty' },
    ready: (l) => / INFO {2}Server listening at /.test(l.msg),
  });
  const listening = server.lines.find((l) => / INFO {2}Server listening at /.test(l.msg))!;
  assert.match(listening.msg, new RegExp(`${TIME.source}INFO  Server listening at http://127\\.0\\.0\\.1:${server.port}$`));
  server.child.kill('SIGTERM');
  assert.deepEqual(await server.exited, { code: 0, signal: null });
  assert.match(
    server.lines.at(-2)!.msg,
    new RegExp(`${TIME.source}INFO  stopping serve: draining requests, git processes and the worker signal=SIGTERM timeoutMs=8000$`),
  );
  assert.match(server.lines.at(-1)!.msg, new RegExp(`${TIME.source}INFO  serve stopped durationMs=\\d+$`));
  // no JSON line anywhere
  assert.ok(
    server.lines.every((l) => l.level === 0 && !l.msg.startsWith('{')),
    server.output(),
  );
});
