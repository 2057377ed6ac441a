// One version: what `hearth --version` says (package.json) is what every outbound request names in its
// User-Agent — hook deliveries and remote imports alike —, while the API keeps answering the GitLab version
// that clients choose features by.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp } from '../helpers/build-app.ts';
import { startSink } from '../helpers/sink.ts';

const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };

test('outbound requests say User-Agent: Hearth/<package version>; /api/v4/version stays the GitLab version', async (t) => {
  const { app, c, root } = await buildTestApp(t);
  const sink = await startSink(t);
  assert.equal(c.config.version, pkg.version);

  const settings = await app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: root,
    payload: { allow_local_requests_from_web_hooks_and_services: true },
  });
  assert.equal(settings.statusCode, 200, settings.body);
  const hook = await app.inject({ method: 'POST', url: '/api/v4/hooks', headers: root, payload: { url: `${sink.url}/system` } });
  assert.equal(hook.statusCode, 201, hook.body);
  const group = await app.inject({ method: 'POST', url: '/api/v4/groups', headers: root, payload: { name: 'Agent', path: 'agent' } });
  assert.equal(group.statusCode, 201, group.body);
  await c.worker.drain();
  const delivery = sink.received.find((r) => r.json?.event_name === 'group_create');
  assert.ok(delivery, JSON.stringify(sink.received.map((r) => r.url)));
  assert.equal(delivery.headers['user-agent'], `Hearth/${pkg.version}`);

  // a remote import's HEAD (the sink answers text/plain, so the import is refused after it)
  const imported = await app.inject({
    method: 'POST',
    url: '/api/v4/projects/remote-import',
    headers: root,
    payload: { url: `${sink.url}/archive.tar.gz`, path: 'imported' },
  });
  assert.equal(imported.statusCode, 400, imported.body);
  const head = sink.received.find((r) => r.url === '/archive.tar.gz');
  assert.ok(head, JSON.stringify(sink.received.map((r) => r.url)));
  assert.equal(head.method, 'HEAD');
  assert.equal(head.headers['user-agent'], `Hearth/${pkg.version}`);

  const version = await app.inject({ method: 'GET', url: '/api/v4/version', headers: root });
  assert.deepEqual(version.json(), { version: '17.0.0', revision: 'hearth' });
});
