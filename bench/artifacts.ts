// npx tsx --expose-gc bench/artifacts.ts: a 100 MB artifact archive (BENCH_ARTIFACT_MB) uploaded through
// the runner's endpoint, then downloaded whole through GET /projects/:id/jobs/:job_id/artifacts and one
// 10 MB entry through …/artifacts/*path, on a listening server; speed (curl, a process of its own, and
// fetch in this process, which shares the CPU with the server) and the process's RSS (bar: ≥ 200 MB/s
// with flat memory: the peak stays near the start, far below the archive's size).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import yazl from 'yazl';
import { tokenDigest } from '../src/lib/secrets.ts';
import { benchContainer, median, publicProject, ROOT_TOKEN, serve } from './harness.ts';

const MB = Number(process.env.BENCH_ARTIFACT_MB ?? 100);
const { c, dataDir } = await benchContainer('hearth-bench-artifacts-');
const k = c.db.kysely;
await c.settings.save({ max_artifacts_size: MB * 2 });
const project = await publicProject(c, 'Artifacts', 'artifacts');
const now = new Date().toISOString();
const pipeline = await k
  .insertInto('ci_pipelines')
  .values({ iid: 1, project_id: project.id, ref: 'main', sha: 'a'.repeat(40), source: 'push', status: 'success', created_at: now, updated_at: now })
  .returning('id')
  .executeTakeFirstOrThrow();
const token = `glcbt-${crypto.randomBytes(20).toString('hex')}`;
const salt = (await k.selectFrom('instance_secrets').select('value').where('name', '=', 'token_salt').executeTakeFirstOrThrow()).value;
const job = await k
  .insertInto('ci_builds')
  .values({
    project_id: project.id,
    pipeline_id: pipeline.id,
    name: 'build',
    stage: 'build',
    status: 'running',
    ref: 'main',
    sha: 'a'.repeat(40),
    user_id: 1,
    token_digest: tokenDigest(salt, token),
    created_at: now,
    updated_at: now,
    started_at: now,
  })
  .returning('id')
  .executeTakeFirstOrThrow();

const zipPath = path.join(dataDir, 'bench.zip');
await new Promise<void>((resolve, reject) => {
  const zip = new yazl.ZipFile();
  const chunk = crypto.randomBytes(1024 * 1024);
  for (let i = 0; i < MB / 10; i++) zip.addBuffer(Buffer.concat(Array(10).fill(chunk)), `out/part-${i}.bin`, { compress: false });
  zip.end();
  zip.outputStream.pipe(fs.createWriteStream(zipPath)).on('finish', resolve).on('error', reject);
});
const size = fs.statSync(zipPath).size;

const { app, address } = await serve(c);
const headers = { 'private-token': ROOT_TOKEN };

function sampler() {
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  return () => {
    clearInterval(timer);
    return { rss0, peak };
  };
}

// upload (informative): the multipart body streamed from the file
{
  const boundary = `----bench${crypto.randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="artifacts.zip"\r\nContent-Type: application/zip\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = (async function* () {
    yield head;
    for await (const chunk of fs.createReadStream(zipPath, { highWaterMark: 1 << 20 })) yield chunk as Buffer;
    yield tail;
  })();
  const stop = sampler();
  const t = performance.now();
  const res = await fetch(`${address}/api/v4/jobs/${job.id}/artifacts?artifact_format=zip&artifact_type=archive&expire_in=never`, {
    method: 'POST',
    headers: { 'job-token': token, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    body: body as unknown as BodyInit,
    duplex: 'half',
  } as RequestInit);
  const ms = performance.now() - t;
  const m = stop();
  if (res.status !== 201) throw new Error(`upload → ${res.status} ${await res.text()}`);
  console.log(
    `upload ${(size / 1e6).toFixed(0)} MB: ${(size / 1e6 / (ms / 1000)).toFixed(0)} MB/s, ${ms.toFixed(0)} ms, RSS ${(m.rss0 / 1e6).toFixed(0)} → peak ${(m.peak / 1e6).toFixed(0)} MB`,
  );
}

async function download(url: string, expected: number) {
  const rounds: { mbps: number; ms: number; rss0: number; peak: number }[] = [];
  for (let r = 0; r < 5; r++) {
    const stop = sampler();
    const t = performance.now();
    const res = await fetch(`${address}${url}`, { headers });
    if (res.status !== 200) throw new Error(`${url} → ${res.status} ${await res.text()}`);
    let bytes = 0;
    for await (const part of res.body!) bytes += (part as Uint8Array).length;
    const ms = performance.now() - t;
    const m = stop();
    if (bytes !== expected) throw new Error(`${url}: ${bytes} bytes of ${expected}`);
    rounds.push({ mbps: bytes / 1e6 / (ms / 1000), ms, ...m });
  }
  const s = median(rounds, (x) => x.mbps);
  console.log(
    `${url}: ${s.mbps.toFixed(0)} MB/s (median of 5), ${s.ms.toFixed(0)} ms, RSS ${(s.rss0 / 1e6).toFixed(0)} → peak ${(s.peak / 1e6).toFixed(0)} MB`,
  );
  return s;
}

// the same with curl, a process of its own (the server's share alone): the speed the bar is about
let curlMbps = 0;
{
  const { execFile } = await import('node:child_process');
  const url = `${address}/api/v4/projects/${project.id}/jobs/${job.id}/artifacts`;
  const speeds: number[] = [];
  for (let r = 0; r < 5; r++) {
    const out = await new Promise<string>((resolve, reject) =>
      execFile('curl', ['-s', '-o', '/dev/null', '-H', `private-token: ${ROOT_TOKEN}`, '-w', '%{speed_download} %{size_download}', url], (err, stdout) =>
        err ? reject(err) : resolve(stdout),
      ),
    );
    const [speed, bytes] = out.split(' ').map(Number);
    if (bytes !== size) throw new Error(`curl: ${bytes} bytes of ${size}`);
    speeds.push(speed! / 1e6);
  }
  speeds.sort((a, b) => a - b);
  curlMbps = speeds[2]!;
  console.log(`curl ${url}: ${speeds[2]!.toFixed(0)} MB/s (median of 5)`);
}
const whole = await download(`/api/v4/projects/${project.id}/jobs/${job.id}/artifacts`, size);
await download(`/api/v4/projects/${project.id}/jobs/${job.id}/artifacts/out/part-3.bin`, 10 * 1024 * 1024);
// speed as curl sees it; memory from the in-process rounds (the client's share of RSS included)
const ok = curlMbps >= 200 && whole.peak - whole.rss0 < size / 2;
console.log(ok ? 'bar met (≥ 200 MB/s, flat memory)' : 'bar MISSED');
await app.close();
await c.close();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
