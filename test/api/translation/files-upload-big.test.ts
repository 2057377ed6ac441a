// A big upload does not stop the server: a 300,000-unit PO file (9 MB) is parsed in a worker thread
// and its units come back in batches, so the event loop keeps turning — /-/health answers while the
// upload runs and no turn of the loop is long — and the answer is the one a small file would get. A turn's
// length is the main thread's own CPU between two ticks of a timer (thread-cpu.ts), which a busy machine does
// not stretch as it stretches wall-clock delays.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildTestApp } from '../../helpers/build-app.ts';
import { busiestStretch } from '../../helpers/thread-cpu.ts';
import { multipart, unitsOf } from '../../helpers/files.ts';
import { AS_ROOT, poComponent } from '../../helpers/translation.ts';

const UNITS = 300_000;

function bigPo(): Buffer {
  const parts = [
    'msgid ""\nmsgstr ""\n"Language: cs\\n"\n"Plural-Forms: nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;\\n"\n\nmsgid "Apple"\nmsgstr "Jablko"\n',
  ];
  for (let i = 1; i < UNITS; i++) parts.push(`\nmsgid "s${i}"\nmsgstr "t${i}"\n`);
  return Buffer.from(parts.join(''));
}

test('a 300,000-unit PO upload: /-/health answers during it, no turn of the event loop is long, the answer is exact', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const file = bigPo();
  assert.ok(file.length < 10 * 1024 * 1024, 'under the upload limit');
  const m = multipart({ file, method: 'translate' });

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  // the histogram records from its second tick on: a stall right at the start would go unseen
  while (delay.count < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  const turns = busiestStretch();
  const ticking = setInterval(() => turns.mark(), 10);
  let finished = false;
  const uploading = ctx.app.inject({ method: 'POST', url: '/api/translations/hello/po/cs/file/', headers: { ...AS_ROOT, ...m.headers }, payload: m.payload });
  void uploading.finally(() => {
    finished = true;
  });
  // health checks for as long as the upload runs, one per timer tick (an injected request may complete
  // within one turn of the loop: a loop of them alone would never let the upload on, and one on every
  // turn would keep a core busy beside the parsing thread)
  let answeredDuring = 0;
  while (!finished) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const health = await ctx.app.inject({ method: 'GET', url: '/-/health' });
    assert.equal(health.statusCode, 200);
    if (!finished) answeredDuring++;
  }
  const res = await uploading;
  turns.mark();
  clearInterval(ticking);
  delay.disable();
  const maxMs = delay.max / 1e6;
  t.diagnostic(
    `event loop: longest turn ${turns.maxMs} ms (${turns.unit}), max delay ${maxMs.toFixed(0)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms; /-/health answered ${answeredDuring} times during the upload`,
  );

  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { not_found: UNITS - 1, skipped: 0, accepted: 1, total: UNITS, result: true, count: UNITS });
  assert.deepEqual(
    (await unitsOf(ctx, 'cs')).filter((u) => u.source === 'Apple').map((u) => [u.target, u.state]),
    [['Jablko', 20]],
  );
  assert.ok(answeredDuring >= 10, `/-/health answered ${answeredDuring} times during the upload`);
  // parsed in the server's thread, the file stalls the loop for seconds (2.7 s on a quiet machine)
  assert.ok(turns.maxMs < 500, `a turn of the event loop took ${turns.maxMs} ms (${turns.unit}; the longest delay: ${maxMs.toFixed(0)} ms)`);
});

test("a big file that does not parse: the format's message from the parsing thread, as for a small file, and nothing changes", async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const before = await unitsOf(ctx, 'cs');
  const broken = (body: Buffer) => Buffer.concat([body, Buffer.from('\nmsgid "Orange"\nmsgstr "Pomeranč\n')]);
  const answers = [];
  for (const file of [broken(bigPo()), broken(Buffer.from('msgid "Apple"\nmsgstr "Jablko"\n'))]) {
    const m = multipart({ file, method: 'translate' });
    const res = await ctx.app.inject({ method: 'POST', url: '/api/translations/hello/po/cs/file/', headers: { ...AS_ROOT, ...m.headers }, payload: m.payload });
    answers.push([res.statusCode, res.json()]);
  }
  const message = (line: number) => ({ file: `unexpected PO syntax at line ${line}, column 1: "msgstr \\"Pomeranč"` });
  assert.deepEqual(answers, [
    [400, message(900_007)], // the header and "Apple": 7 lines, 3 lines each for the others, then the broken entry
    [400, message(5)],
  ]);
  assert.deepEqual(await unitsOf(ctx, 'cs'), before);
});
