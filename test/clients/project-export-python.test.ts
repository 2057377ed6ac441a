// The real python-gitlab client on project exports: project.exports.create() (with a description, and
// with upload[url] to a local receiver), export.refresh() until finished, export.download() (a tar.gz
// holding VERSION, tree/project.json and project.bundle). Skipped without python-gitlab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = String.raw`
import io, sys, tarfile, time, gitlab
base, token, pid, upload = sys.argv[1:5]
gl = gitlab.Gitlab(base, private_token=token)
p = gl.projects.get(int(pid))
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)
def wait(export):
    deadline = time.monotonic() + 120  # bounds a hang only: a loaded machine exports slowly
    while time.monotonic() < deadline:
        export.refresh()
        if export.export_status in ('finished', 'failed'):
            return export
        time.sleep(0.1)
    return export
check('before', p.exports.get().export_status, 'none')
export = p.exports.create({'description': 'From python'})
export = wait(export)
check('status', export.export_status, 'finished')
check('links', export._links['api_url'], base + '/api/v4/projects/' + pid + '/export/download')
data = export.download()
check('gzip', data[:2], b'\x1f\x8b')
with tarfile.open(fileobj=io.BytesIO(data), mode='r:gz') as t:
    names = t.getnames()
    check('VERSION', t.extractfile('VERSION').read(), b'0.2.4')
    check('description', b'From python' in t.extractfile('tree/project.json').read(), True)
for n in ('VERSION', 'GITLAB_VERSION', 'GITLAB_REVISION', 'tree/project.json', 'project.bundle'):
    check(n, n in names, True)
export = p.exports.create({'upload': {'url': upload, 'http_method': 'POST'}})
export = wait(export)
check('uploaded', export.export_status, 'finished')
try:
    p.exports.create({'upload': {'http_method': 'GET'}})
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('400', e.response_code, 400)
print('all ok')
`;

test('python-gitlab: exports.create, refresh, download, upload', { skip: skipWithout(available, 'python-gitlab') }, async (t) => {
  assertTool(available, 'python-gitlab');
  const { seed, base, app, root } = await startTestServer(t, {}, { selfUrl: true });
  const group = await seed.group();
  const { project } = await seed.repoProject({ namespace: group, visibility: 'private' });
  const commit = await app.inject({
    method: 'POST',
    url: `/api/v4/projects/${project.id}/repository/files/README.md`,
    headers: root,
    payload: { branch: 'main', content: '# Readme\n', commit_message: 'Initial' },
  });
  assert.equal(commit.statusCode, 201, commit.body);
  const settings = await app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: root,
    payload: { allow_local_requests_from_web_hooks_and_services: true },
  });
  assert.equal(settings.statusCode, 200);

  const got: { method: string; type: string | undefined; size: number }[] = [];
  const receiver = http.createServer((req, res) => {
    let size = 0;
    req.on('data', (c: Buffer) => (size += c.length));
    req.on('end', () => {
      got.push({ method: req.method!, type: req.headers['content-type'], size });
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => receiver.close(() => r())));
  const upload = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/upload`;

  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, base, ROOT_TOKEN, String(project.id), upload]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  assert.match(out.stdout, /all ok\n$/, out.stdout);
  assert.equal(got.length, 1);
  assert.deepEqual([got[0]!.method, got[0]!.type], ['POST', 'application/gzip']);
  assert.ok(got[0]!.size > 100);
});
