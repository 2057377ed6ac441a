// Component repositories fetched over http(s) are held to what the outbound rules checked: git follows
// no redirect (a 302 from an allowed address and port to another is a failed fetch, and the other
// never hears of it) and connects to the checked address only, never resolving the name itself.
// Real git against real local servers (dumb HTTP over a bare repository); loopback addresses only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { buildTestApp, type TestApp } from '../../helpers/build-app.ts';
import { fixtureEnv } from '../../helpers/git.ts';
import { AS_ROOT, CS_PO, DE_PO, createProject } from '../../helpers/translation.ts';

type After = { after(fn: () => unknown): void };

/** A bare repository holding po/cs.po and po/de.po on main, prepared for dumb HTTP. */
function bareRepo(t: After): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-remote-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (args: string[], cwd: string) =>
    execFileSync('git', args, {
      cwd,
      env: fixtureEnv({ GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@example.com' }),
      stdio: 'pipe',
    });
  const wt = path.join(dir, 'wt');
  fs.mkdirSync(path.join(wt, 'po'), { recursive: true });
  fs.writeFileSync(path.join(wt, 'po', 'cs.po'), CS_PO);
  fs.writeFileSync(path.join(wt, 'po', 'de.po'), DE_PO);
  run(['init', '-q', '-b', 'main'], wt);
  run(['add', '-A'], wt);
  run(['commit', '-q', '-m', 'Translations'], wt);
  run(['clone', '-q', '--bare', wt, path.join(dir, 'repo.git')], dir);
  run(['update-server-info'], path.join(dir, 'repo.git'));
  return path.join(dir, 'repo.git');
}

interface Hit {
  url: string;
  host: string;
}

async function listen(t: After, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const hits: Hit[] = [];
  const s = http.createServer((req, res) => {
    hits.push({ url: req.url!, host: req.headers.host! });
    handler(req, res);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return { port: (s.address() as { port: number }).port, hits };
}

/** Serves `bare` at /repo.git/ as dumb HTTP (static files). */
function dumbHttp(t: After, bare: string) {
  return listen(t, (req, res) => {
    const rel = decodeURIComponent(new URL(req.url!, 'http://x').pathname).replace(/^\/repo\.git\//, '');
    const file = path.join(bare, rel);
    if (!rel || rel.includes('..') || !fs.existsSync(file) || !fs.statSync(file).isFile()) return res.writeHead(404).end();
    res.end(fs.readFileSync(file));
  });
}

async function setRules(ctx: TestApp, allowlist: string[]) {
  const res = await ctx.app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: ctx.root,
    payload: { allow_local_requests_from_web_hooks_and_services: false, outbound_local_requests_whitelist: allowlist },
  });
  assert.equal(res.statusCode, 200, res.body);
}

const post = (ctx: TestApp, repo: string, slug = 'po') =>
  ctx.app.inject({
    method: 'POST',
    url: '/api/projects/hello/components/',
    headers: AS_ROOT,
    payload: { name: slug, slug, repo, file_format: 'po', filemask: 'po/*.po', branch: 'main' },
  });

const mirrors = (ctx: TestApp) => {
  const dir = path.join(ctx.dataDir, 'repositories', '@translation');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
};

test('a redirect from the allowed address and port to another port is not followed', async (t) => {
  const ctx = await buildTestApp(t);
  await createProject(ctx);
  const target = await dumbHttp(t, bareRepo(t));
  const redirector = await listen(t, (req, res) => res.writeHead(302, { location: `http://127.0.0.1:${target.port}${req.url}` }).end());
  // the allowlist names the redirector's port only: the repository server is the same address on another port
  await setRules(ctx, [`127.0.0.1:${redirector.port}`]);
  assert.equal((await post(ctx, `http://127.0.0.1:${target.port}/repo.git`)).json().repo[0], 'Requests to localhost are not allowed');

  const res = await post(ctx, `http://127.0.0.1:${redirector.port}/repo.git`);
  assert.equal(res.statusCode, 400, res.body);
  assert.match(res.json().repo[0], /^Could not fetch the repository: .*returned error: 302/);
  assert.ok(redirector.hits.length >= 1);
  assert.deepEqual(target.hits, []);
  assert.deepEqual(await ctx.c.db.kysely.selectFrom('components').select('id').execute(), []);
  assert.deepEqual(mirrors(ctx), []);

  // the same repository, allowed where it is, is fetched (so the refusal above was the redirect's)
  await setRules(ctx, [`127.0.0.1:${redirector.port}`, `127.0.0.1:${target.port}`]);
  const direct = await post(ctx, `http://127.0.0.1:${target.port}/repo.git`);
  assert.equal(direct.statusCode, 201, direct.body);
  assert.ok(target.hits.length >= 1);
  // a pull is held the same way
  const pull = await ctx.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'pull' } });
  assert.equal(pull.statusCode, 200, pull.body);
});

test('git connects to the address the check resolved, never resolving the name itself (DNS rebinding)', async (t) => {
  // `pinned.test` exists only for the check's lookup; the system resolver (git's own) does not know it
  const lookups: string[] = [];
  const ctx = await buildTestApp(t, {}, { resolve: async (host) => (lookups.push(host), host === 'pinned.test' ? ['127.0.0.1'] : []) });
  await createProject(ctx);
  const target = await dumbHttp(t, bareRepo(t));
  await setRules(ctx, [`127.0.0.1:${target.port}`]);
  const res = await post(ctx, `http://PINNED.test:${target.port}/repo.git`);
  assert.equal(res.statusCode, 201, res.body);
  assert.ok(lookups.includes('pinned.test'));
  assert.ok(target.hits.length >= 2);
  for (const hit of target.hits) assert.equal(hit.host, `pinned.test:${target.port}`);
  const files = await ctx.c.db.kysely.selectFrom('translations').select('filename').where('filename', '!=', '').orderBy('filename').execute();
  assert.deepEqual(
    files.map((f) => f.filename),
    ['po/cs.po', 'po/de.po'],
  );

  // a name the check resolves to a refused address never reaches git
  await setRules(ctx, []);
  const refused = await post(ctx, `http://pinned.test:${target.port}/repo.git`, 'other');
  assert.deepEqual([refused.statusCode, refused.json()], [400, { repo: ['Requests to localhost are not allowed'] }]);
});
