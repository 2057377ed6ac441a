// The runner's side of the protocol against the real server: jobs/request (201 with the job, 204 with
// X-GitLab-Last-Update sent back as last_update), the log by PATCH with Content-Range — a range the
// server does not expect (416 + Range) makes the runner go on from where the server is — masking, and
// the final PUT with the log's checksum.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { startTestServer } from '../helpers/server.ts';
import { seedPipeline, seedRunner } from '../helpers/ci.ts';
import { RunnerClient } from '../../src/runner/protocol.ts';
import { JobTrace } from '../../src/runner/trace.ts';
import { versionInfo } from '../../src/runner/runner.ts';

test('request, trace with a range mismatch, masking, final update', async (t) => {
  const srv = await startTestServer(t, { jobRequestTimeoutMs: 200 });
  const { c, seed } = srv;
  const owner = await seed.user();
  const { project } = await seed.repoProject({ owner, namespace: await seed.namespaceOf(owner) });
  await seed.member({ project }, owner, 50);
  const { headers } = await seed.token(owner);
  const { token, runner } = await seedRunner(c, { projects: [project] });
  const client = new RunnerClient(srv.base, token, versionInfo(), 's_0123456789ab');

  // nothing to do: 204, and the server's X-GitLab-Last-Update is what the next request carries
  assert.equal(await client.requestJob(), null);
  const lastUpdate = (client as unknown as { lastUpdate: string }).lastUpdate;
  assert.notEqual(lastUpdate, '');

  const { jobs } = await seedPipeline(c, project, { ref: 'main', status: 'pending', user_id: owner.id }, [{ name: 'j' }]);
  c.ci.jobs.jobsQueued();
  const job = await client.requestJob();
  assert.ok(job);
  assert.equal(job.id, jobs[0]!.id);
  const row = await c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
  assert.deepEqual([row.status, row.runner_id, row.runner_system_id], ['running', runner.id, 's_0123456789ab']);

  // someone else's bytes reached the server first: it has 3, the runner thinks 0
  const other = await client.patchTrace(job.id, job.token, Buffer.from('abc'), 0);
  assert.deepEqual([other.status, other.remoteEnd, other.jobStatus], [202, 3, 'running']);
  const trace = new JobTrace(client, job.id, job.token, ['secret-value-123', 'second-secret'], 1000);
  trace.write('hello secret-value-123\n');
  await trace.flush();
  const log = await srv.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${job.id}/trace`, headers });
  // the server's 416 said Range 0-3: the runner went on from byte 3 of its own log
  assert.equal(log.body, 'abclo [MASKED]\n');
  // a secret split between two writes, the log sent between them: the first chunk ends before the secret
  // began, and the second masks it whole
  trace.write('now: second-se');
  await trace.flush();
  const split = await srv.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${job.id}/trace`, headers });
  assert.equal(split.body, 'abclo [MASKED]\nnow: ');
  trace.write('cret and second-');
  trace.write('sec, no secret\n');
  trace.end();
  await trace.flush();
  const whole = await srv.app.inject({ method: 'GET', url: `/api/v4/projects/${project.id}/jobs/${job.id}/trace`, headers });
  assert.equal(whole.body, 'abclo [MASKED]\nnow: [MASKED] and second-sec, no secret\n');
  assert.ok(!whole.body.includes('second-secret'));
  assert.equal(trace.aborted, false);

  // a PATCH starting past the end: 416 with the server's range
  const bad = await client.patchTrace(job.id, job.token, Buffer.from('zzz'), 100);
  assert.deepEqual([bad.status, bad.remoteEnd], [416, whole.body.length]);

  // the final state with the checksum of the runner's log
  const out = trace.output();
  const all = Buffer.from('hello [MASKED]\nnow: [MASKED] and second-sec, no secret\n');
  assert.deepEqual(out, { checksum: `crc32:${zlib.crc32(all).toString(16).padStart(8, '0')}`, bytesize: all.length });
  const put = await client.updateJob(job.id, { token: job.token, state: 'success', output: out, exit_code: 0 });
  assert.equal(put.status, 200);
  const done = await c.db.kysely.selectFrom('ci_builds').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
  assert.equal(done.status, 'success');
  // the token ends with the job: the log is closed to it
  const after = await client.patchTrace(job.id, job.token, Buffer.from('x'), whole.body.length);
  assert.deepEqual([after.status, after.jobStatus], [403, 'success']);
  // this process's keep-alive sockets go now, not at the server's keep-alive timeout when the app closes
  srv.app.server.closeAllConnections();
});
