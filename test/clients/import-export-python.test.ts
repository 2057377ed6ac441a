// The round trip with the real python-gitlab: a project with history, merge requests, notes, issues,
// labels and milestones is exported (project.exports.create(), export.refresh() until finished,
// export.download() streamed to a file), then imported three ways — gl.projects.import_project() with
// the file, gl.projects.remote_import() from a local HTTP server (local requests allowed through the
// settings API first), gl.projects.remote_import_s3() from a real S3-compatible server (s3rver) — each
// polled through gl.projects.get(id).imports.get() until finished. Every copy is cloned over HTTP: its
// refs are the source's, names and object ids; its merge requests, issues, labels and milestones are
// the source's as python-gitlab lists them (issues, without an API here, as rows). Skipped without python-gitlab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { cloneUrl, startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { runGit, tmpDir } from '../helpers/git.ts';
import { repositoryRefs, seedLargeProject } from '../helpers/import-export-bulk.ts';
import { startS3 } from '../helpers/blob-store-s3rver.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const EXPORT_SCRIPT = `
import sys, json, time, hashlib, gitlab
base, token, pid, file = sys.argv[1:5]
gl = gitlab.Gitlab(base, private_token=token)
p = gl.projects.get(int(pid))
out = {'before': p.exports.get().export_status}
export = p.exports.create()
seen = []
for _ in range(1200):
    export.refresh()
    if not seen or seen[-1] != export.export_status:
        seen.append(export.export_status)
    if export.export_status in ('finished', 'failed'):
        break
    time.sleep(0.1)
out['statuses'] = seen
out['export'] = export.attributes
with open(file, 'wb') as f:
    export.download(streamed=True, action=f.write)
with open(file, 'rb') as f:
    data = f.read()
out['download'] = [len(data), hashlib.sha256(data).hexdigest(), data[:2].hex()]
print(json.dumps(out))
`;

const IMPORT_SCRIPT = `
import sys, json, time, gitlab
base, token, source_id, file, url, bucket, key, s3_key_id, s3_secret = sys.argv[1:10]
gl = gitlab.Gitlab(base, private_token=token)
out = {}

def wait(pid):
    seen = []
    for _ in range(1200):
        st = gl.projects.get(pid).imports.get()
        if not seen or seen[-1] != st.import_status:
            seen.append(st.import_status)
        if st.import_status in ('finished', 'failed'):
            break
        time.sleep(0.1)
    return seen, st.attributes

def contents(pid):
    p = gl.projects.get(pid)
    return {
        'default_branch': p.default_branch,
        'merge_requests': sorted([m.iid, m.title, m.state, m.source_branch, m.target_branch, m.upvotes, m.downvotes, m.user_notes_count, sorted(m.labels)] for m in p.mergerequests.list(get_all=True, state='all')),
        'labels': sorted([l.name, l.color] for l in p.labels.list(get_all=True)),
        'milestones': sorted([m.iid, m.title, m.state] for m in p.milestones.list(get_all=True)),
        'branches': sorted(b.name for b in p.branches.list(get_all=True)),
        'tags': sorted(t.name for t in p.tags.list(get_all=True)),
    }

out['source'] = contents(int(source_id))

with open(file, 'rb') as f:
    created = gl.projects.import_project(f, path='imported', name='Imported from file')
out['file'] = {'created': created}
out['file']['statuses'], out['file']['final'] = wait(created['id'])
out['file']['contents'] = contents(created['id'])

settings = gl.settings.get()
settings.allow_local_requests_from_web_hooks_and_services = True
settings.save()
out['local_allowed'] = gl.settings.get().allow_local_requests_from_web_hooks_and_services

created = gl.projects.remote_import(url, 'imported-remote', name='Imported from URL')
out['remote'] = {'created': created}
out['remote']['statuses'], out['remote']['final'] = wait(created['id'])
out['remote']['contents'] = contents(created['id'])

created = gl.projects.remote_import_s3('imported-s3', 'us-east-1', bucket, key, s3_key_id, s3_secret, name='Imported from S3')
out['s3'] = {'created': created}
out['s3']['statuses'], out['s3']['final'] = wait(created['id'])
out['s3']['contents'] = contents(created['id'])
print(json.dumps(out))
`;

const run = async (script: string, args: string[]) => {
  const res = await promisify(execFile)(PYTHON, ['-c', script, ...args], { maxBuffer: 64 * 1024 * 1024 }).catch((e) => e);
  assert.equal(res.stderr ?? '', '', res.stdout ?? String(res));
  return JSON.parse(res.stdout);
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

test('python-gitlab: export, download, then import from the file, a remote URL and S3; every copy has the source’s refs and rows', {
  skip: skipWithout(available, 'python-gitlab'),
  timeout: 300_000,
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const s3 = await startS3('imports');
  t.after(() => s3.stop());
  const srv = await startTestServer(t, { importS3: { endpoint: s3.endpoint, forcePathStyle: true } }, { selfUrl: true });
  const { c } = srv;
  const seeded = await seedLargeProject(c, {
    commits: 300,
    branches: 3,
    mergeRequests: 40,
    notes: 150,
    issues: 25,
    labels: 6,
    milestones: 4,
    members: 5,
    path: 'py-source',
  });
  const source = seeded.project;
  const work = tmpDir(t);
  const archive = path.join(work, 'export.tar.gz');

  // --- export and download ---
  const exp = await run(EXPORT_SCRIPT, [srv.base, ROOT_TOKEN, String(source.id), archive]);
  assert.equal(exp.before, 'none');
  assert.equal(exp.statuses.at(-1), 'finished');
  assert.ok(
    exp.statuses.every((s: string) => ['queued', 'started', 'finished'].includes(s)),
    JSON.stringify(exp.statuses),
  );
  const api = `${srv.base}/api/v4/projects/${source.id}/export/download`;
  assert.deepEqual(exp.export, {
    project_id: String(source.id), // python-gitlab's own: the parent's id
    id: source.id,
    description: source.description,
    name: source.name,
    name_with_namespace: `Administrator / ${source.name}`,
    path: 'py-source',
    path_with_namespace: 'root/py-source',
    created_at: exp.export.created_at,
    export_status: 'finished',
    _links: { api_url: api, web_url: `${srv.base}/root/py-source/download_export` },
  });
  assert.match(exp.export.created_at, ISO);
  const bytes = fs.readFileSync(archive);
  const sha = crypto.createHash('sha256').update(bytes).digest('hex');
  assert.deepEqual(exp.download, [bytes.length, sha, '1f8b']);
  // the same archive as the API serves it
  const direct = await fetch(api, { headers: { 'private-token': ROOT_TOKEN } });
  assert.equal(direct.status, 200);
  assert.equal(
    crypto
      .createHash('sha256')
      .update(Buffer.from(await direct.arrayBuffer()))
      .digest('hex'),
    sha,
  );

  // --- the archive served by a local HTTP server (remote import) and put on S3 ---
  const hits: string[] = [];
  const files = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (req.url !== '/exports/project.tar.gz') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(bytes.length) });
    if (req.method === 'HEAD') return res.end();
    fs.createReadStream(archive).pipe(res);
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        files.closeAllConnections();
        files.close(() => r());
      }),
  );
  const remoteUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}/exports/project.tar.gz`;
  const cfg = s3.config();
  const creds = { region: cfg.region ?? 'us-east-1', accessKeyId: cfg.accessKeyId ?? '', secretAccessKey: cfg.secretAccessKey ?? '' };
  const client = new S3Client({
    region: creds.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey },
  });
  await client.send(new PutObjectCommand({ Bucket: 'imports', Key: 'exports/project.tar.gz', Body: bytes, ContentType: 'application/gzip' }));
  client.destroy();

  // --- the three imports ---
  const got = await run(IMPORT_SCRIPT, [
    srv.base,
    ROOT_TOKEN,
    String(source.id),
    archive,
    remoteUrl,
    'imports',
    'exports/project.tar.gz',
    creds.accessKeyId,
    creds.secretAccessKey,
  ]);
  assert.equal(got.local_allowed, true);
  const src = got.source;
  assert.equal(src.merge_requests.length, 40);
  assert.deepEqual([src.labels.length, src.milestones.length, src.default_branch], [6, 4, 'main']);
  assert.deepEqual(src.branches, ['feature-0', 'feature-1', 'feature-2', 'main']);
  assert.deepEqual(src.tags, ['v1.0.0']);

  const sourceRefs = await repositoryRefs(c.repos.pathOf(source));
  const issuesOf = async (projectId: number) => {
    const rows = await c.db.kysely
      .selectFrom('issues')
      .select(['id', 'iid', 'title', 'description', 'state', 'confidential', 'closed_at', 'created_at'])
      .where('project_id', '=', projectId)
      .orderBy('iid')
      .execute();
    const labels = await c.db.kysely
      .selectFrom('issue_labels')
      .innerJoin('labels', 'labels.id', 'issue_labels.label_id')
      .innerJoin('issues', 'issues.id', 'issue_labels.issue_id')
      .select(['issue_labels.issue_id', 'labels.title'])
      .where('issues.project_id', '=', projectId)
      .orderBy('labels.title')
      .execute();
    return rows.map(({ id, ...r }) => ({ ...r, labels: labels.filter((l) => l.issue_id === id).map((l) => l.title) }));
  };
  const sourceIssues = await issuesOf(source.id);
  assert.equal(sourceIssues.length, 25);
  for (const [kind, projectPath, name] of [
    ['file', 'imported', 'Imported from file'],
    ['remote', 'imported-remote', 'Imported from URL'],
    ['s3', 'imported-s3', 'Imported from S3'],
  ] as const) {
    const r = got[kind];
    const row = await c.db.kysely.selectFrom('projects').selectAll().where('path', '=', projectPath).executeTakeFirstOrThrow();
    // the description comes with the archive's project.json: none until the import ran
    const entity = (status: string, description: string | null) => ({
      id: row.id,
      description,
      name,
      name_with_namespace: `Administrator / ${name}`,
      path: projectPath,
      path_with_namespace: `root/${projectPath}`,
      created_at: r.created.created_at,
      import_status: status,
      import_type: 'gitlab_project',
      correlation_id: r.created.correlation_id,
      failed_relations: [],
      import_error: null,
    });
    const { stats: createdStats, ...created } = r.created;
    assert.deepEqual(created, entity(r.created.import_status, null), kind);
    assert.ok(['scheduled', 'started', 'none'].includes(r.created.import_status), `${kind}: ${r.created.import_status}`);
    assert.ok(createdStats === null || typeof createdStats === 'object', kind);
    assert.match(r.created.created_at, ISO, kind);
    assert.ok(typeof r.created.correlation_id === 'string' && r.created.correlation_id.length > 0, kind);
    assert.equal(r.statuses.at(-1), 'finished', `${kind}: ${JSON.stringify(r.final)}`);
    const { stats: finalStats, ...final } = r.final;
    assert.deepEqual(final, { project_id: String(row.id), ...entity('finished', source.description) }, kind); // project_id: python-gitlab's parent id
    assert.ok(finalStats === null || typeof finalStats === 'object', kind);
    // the rows as python-gitlab lists them; issues (no API of their own here) as rows
    assert.deepEqual(r.contents, src, kind);
    assert.deepEqual(await issuesOf(row.id), sourceIssues, kind);
    // the repository, cloned over HTTP
    const mirror = path.join(work, `${kind}.git`);
    await runGit(work, ['clone', '-q', '--mirror', cloneUrl(srv.base, `root/${projectPath}`, 'root', ROOT_TOKEN), mirror]);
    assert.deepEqual(await repositoryRefs(mirror), sourceRefs, kind);
    const all = (await runGit(mirror, ['rev-parse', '--all'])).stdout.trim().split('\n').sort();
    assert.deepEqual(all, Object.values(sourceRefs).sort(), kind);
    const count = (await runGit(mirror, ['rev-list', '--all', '--count'])).stdout.trim();
    assert.equal(Number(count), seeded.counts.commits, kind);
  }
  // the remote import fetched the archive (GitLab checks it with a HEAD first)
  assert.ok(hits.includes('GET /exports/project.tar.gz'), JSON.stringify(hits));
  assert.ok(
    hits.every((h) => h.endsWith(' /exports/project.tar.gz')),
    JSON.stringify(hits),
  );
});
