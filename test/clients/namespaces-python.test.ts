// python-gitlab against a running server: gl.namespaces.list/get/exists,
// project.groups.list(), project.customattributes, group.customattributes, group.transfer(),
// user.ban()/unban(), user.identityproviders.delete(), and a user created with an `avatar` file whose
// avatar_url serves the image (skipped without python-gitlab unless CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

/** A 1×1 PNG. */
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const SCRIPT = `
import sys, json, base64, io, urllib.request, gitlab
base, admin_token, user_token, png_b64 = sys.argv[1:5]
png = base64.b64decode(png_b64)
admin = gitlab.Gitlab(base, private_token=admin_token)
gl = gitlab.Gitlab(base, private_token=user_token)
out = {}

out['namespaces'] = [[n.full_path, n.kind] for n in gl.namespaces.list(get_all=True)]
ns = gl.namespaces.get('py-top')
out['namespace'] = [ns.id, ns.full_path, ns.members_count_with_descendants, ns.projects_count]
out['exists'] = gl.namespaces.exists('py-top').suggests

project = gl.projects.get('py-top/py-sub/py-app')
out['project_groups'] = [g.full_path for g in project.groups.list(get_all=True)]

ap = admin.projects.get(project.id)
ap.customattributes.set('env', 'prod')
out['project_attr'] = ap.customattributes.get('env').value
out['project_attrs'] = [[a.key, a.value] for a in ap.customattributes.list()]
ap.customattributes.delete('env')
out['project_attrs_after'] = len(ap.customattributes.list())

ag = admin.groups.get('py-top')
ag.customattributes.set('tier', 'gold')
out['group_attrs'] = [[a.key, a.value] for a in ag.customattributes.list()]

sub = gl.groups.get('py-top/py-sub')
sub.transfer(gl.groups.get('py-dest').id)
out['after_transfer'] = gl.groups.get(sub.id).full_path
sub.transfer()
out['after_top_level'] = gl.groups.get(sub.id).full_path
try:
    gl.groups.get(sub.id).transfer()
    out['transfer_error'] = None
except gitlab.exceptions.GitlabGroupTransferError as e:
    out['transfer_error'] = [e.response_code, e.error_message]

u = admin.users.create({'email': 'pyav@example.com', 'username': 'pyav', 'name': 'Py Av', 'password': 'password-123',
                        'provider': 'github', 'extern_uid': 'gh-42', 'avatar': io.BytesIO(png)})
out['avatar_url'] = u.avatar_url
with urllib.request.urlopen(u.avatar_url) as r:
    out['avatar'] = [r.status, r.headers['Content-Type'], r.read() == png]
out['identities'] = [i['provider'] for i in admin.users.get(u.id).identities]
u.identityproviders.delete('github')
out['identities_after'] = admin.users.get(u.id).identities

out['ban'] = u.ban()
out['state_banned'] = admin.users.get(u.id).state
out['unban'] = u.unban()
out['state_unbanned'] = admin.users.get(u.id).state
try:
    u.unban()
except gitlab.exceptions.GitlabUnbanError as e:
    out['unban_error'] = [e.response_code, e.error_message]
print(json.dumps(out))
`;

test('python-gitlab: namespaces, project groups, custom attributes, group transfer, bans, identities, avatars', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const srv = await startTestServer(t, {}, { selfUrl: true });
  const { seed, c } = srv;
  const owner = await seed.user({ username: 'py-owner', name: 'Py Owner' });
  const top = await seed.group({ path: 'py-top' });
  const sub = await seed.group({ path: 'py-sub', parent: top });
  const dest = await seed.group({ path: 'py-dest' });
  await seed.project({ namespace: sub, path: 'py-app' });
  await seed.member({ group: top }, owner, 50);
  await seed.member({ group: dest }, owner, 50);
  const { token } = await seed.token(owner, { scopes: ['api'] });

  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, srv.base, ROOT_TOKEN, token, PNG_B64]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  const got = JSON.parse(out.stdout);
  const user = (await c.users.byUsername('pyav'))!;
  assert.deepEqual(got, {
    namespaces: [
      ['py-owner', 'user'],
      ['py-top', 'group'],
      ['py-dest', 'group'],
    ],
    namespace: [top.id, 'py-top', 1, 1],
    exists: ['py-top1'],
    project_groups: ['py-top/py-sub', 'py-top'],
    project_attr: 'prod',
    project_attrs: [['env', 'prod']],
    project_attrs_after: 0,
    group_attrs: [['tier', 'gold']],
    after_transfer: 'py-dest/py-sub',
    after_top_level: 'py-sub',
    transfer_error: [400, 'Transfer failed: Group is already a root group.'],
    avatar_url: `${srv.base}/uploads/-/system/user/avatar/${user.id}/avatar.png`,
    avatar: [200, 'image/png', true],
    identities: ['github'],
    identities_after: [],
    ban: true,
    state_banned: 'banned',
    unban: true,
    state_unbanned: 'active',
    unban_error: [403, 'You cannot unban active users.'],
  });
  assert.equal(user.state, 'active');
});
