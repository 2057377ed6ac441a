// python-gitlab against a running server: project.upload() and the file served back,
// gl.markdown(), user.impersonationtokens.create() without an expiry, gl.settings default_branch_name,
// and a request refused by the instance throttle whose error says `Retry later` (skipped without
// python-gitlab unless CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { addDays, todayDate } from '../../src/lib/time.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = `
import sys, json, gitlab
base, admin_token, user_token, throttled_token, pid, uid = sys.argv[1:7]
pid, uid = int(pid), int(uid)
admin = gitlab.Gitlab(base, private_token=admin_token)
gl = gitlab.Gitlab(base, private_token=user_token)
out = {}

project = gl.projects.get(pid)
up = project.upload('shot.png', filedata=b'\\x89PNG\\r\\n\\x1a\\nfake')
out['upload_keys'] = sorted(up.keys())
out['upload'] = [up['alt'], up['markdown'] == '![shot](%s)' % up['url'], up['url'].startswith('/uploads/')]
web = base + '/' + project.path_with_namespace + up['url']
r = gl.session.get(web, headers={'PRIVATE-TOKEN': user_token})
out['served'] = [r.status_code, r.headers.get('content-type'), r.content == b'\\x89PNG\\r\\n\\x1a\\nfake']
anon = gl.session.get(web)
out['anonymous'] = anon.status_code

out['markdown'] = gl.markdown('# Title\\n\\n- [x] done', gfm=True, project=project.path_with_namespace)
out['markdown_plain'] = gl.markdown('*hi* <b>x</b>')

user = admin.users.get(uid)
tok = user.impersonationtokens.create({'name': 'py-imp', 'scopes': ['api']})
out['impersonation'] = [tok.name, tok.scopes, tok.expires_at, tok.impersonation, tok.active]

s = admin.settings.get()
s.default_branch_name = 'trunk'
s.save()
out['default_branch_name'] = admin.settings.get().default_branch_name
created = gl.projects.create({'name': 'from-python'})
out['new_project_default_branch'] = created.default_branch

# the throttle: python-gitlab must not wait and retry, so that the 429 reaches us
throttled = gitlab.Gitlab(base, private_token=throttled_token)
err = None
for _ in range(20):
    try:
        throttled.projects.get(pid, obey_rate_limit=False)
    except gitlab.exceptions.GitlabError as e:
        err = e
        break
out['throttled'] = [err.response_code, str(err)] if err else None
print(json.dumps(out))
`;

test('python-gitlab: project.upload(), gl.markdown(), impersonation token without expiry, settings, throttled error', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const srv = await startTestServer(t, {}, { selfUrl: true });
  const { seed, c } = srv;
  const owner = await seed.user({ username: 'py-up-owner' });
  const project = await seed.project({ owner, path: 'py-uploads', visibility: 'private' });
  const { token } = await seed.token(owner, { scopes: ['api'] });
  const other = await seed.user({ username: 'py-throttled' });
  await seed.member({ project }, other, 30);
  const { token: otherToken } = await seed.token(other, { scopes: ['api'] });
  // the authenticated API throttle: 8 requests a minute per user; the owner and the administrator stay
  // below it, the throttled user's loop goes over it (within two windows at most)
  await c.settings.save({
    throttle_authenticated_api_enabled: true,
    throttle_authenticated_api_requests_per_period: 8,
    throttle_authenticated_api_period_in_seconds: 60,
  });
  const ownerRow = await c.db.kysely.selectFrom('users').select('id').where('username', '=', 'py-up-owner').executeTakeFirstOrThrow();

  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, srv.base, ROOT_TOKEN, token, otherToken, String(project.id), String(ownerRow.id)]).catch(
    (e) => e,
  );
  assert.equal(out.stderr ?? '', '', out.stdout);
  const got = JSON.parse(out.stdout);
  const ns = await c.db.kysely.selectFrom('namespaces').select('full_path').where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  const expires = addDays(todayDate(), 365);
  assert.deepEqual(got, {
    upload_keys: ['alt', 'markdown', 'url'], // what python-gitlab 3 keeps of the entity
    upload: ['shot', true, true],
    served: [200, 'image/png', true],
    anonymous: 404,
    markdown:
      '<h1 dir="auto"><a href="#title" aria-hidden="true" class="anchor" id="user-content-title"></a>Title</h1>\n' +
      '<ul class="task-list">\n<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" disabled checked> done</li>\n</ul>',
    markdown_plain: '<p><em>hi</em> &lt;b&gt;x&lt;/b&gt;</p>',
    impersonation: ['py-imp', ['api'], expires, true, true],
    default_branch_name: 'trunk',
    new_project_default_branch: 'trunk',
    throttled: [429, '429: Retry later\n'],
  });
  assert.equal(ns.full_path, 'py-up-owner');
  // the server's side: the upload row and the token row
  const uploads = await c.db.kysely.selectFrom('uploads').select(['filename', 'project_id']).execute();
  assert.deepEqual(uploads, [{ filename: 'shot.png', project_id: project.id }]);
  const imp = await c.db.kysely
    .selectFrom('personal_access_tokens')
    .select(['expires_at', 'impersonation'])
    .where('name', '=', 'py-imp')
    .executeTakeFirstOrThrow();
  assert.deepEqual(imp, { expires_at: expires, impersonation: 1 });
});
