// The real python-gitlab client through python-gitlab's own functional test of deploy tokens (tests/functional/
// api/test_deploy_tokens.py: a project's token with a username and today's expiry, a group's token, each in the
// instance list, read back and deleted), then the project and group access tokens it wraps (create, list, delete,
// and the bot's token used as a client's credential); a deploy token made through it clones over HTTP (skipped
// without python-gitlab).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { cloneUrl, startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { runGit, tmpDir, WorkTree } from '../helpers/git.ts';

const PYTHON = '/usr/bin/python3';
const available = spawnSync(PYTHON, ['-c', 'import gitlab'], { stdio: 'ignore' }).status === 0;

const SCRIPT = `
import sys, json, datetime, gitlab
base, token = sys.argv[1:3]
gl = gitlab.Gitlab(base, private_token=token)
def check(what, got, want):
    if got != want:
        print(f'{what}: got {got!r}, want {want!r}')
        sys.exit(1)

group = gl.groups.create({'name': 'tokens-py', 'path': 'tokens-py'})
project = gl.projects.create({'name': 'deployed', 'namespace_id': group.id})
out = {'project': project.path_with_namespace}

# test_project_deploy_tokens
today = datetime.date.today().isoformat()
deploy_token = project.deploytokens.create({'name': 'foo', 'username': 'bar', 'expires_at': today, 'scopes': ['read_registry']})
check('in list', deploy_token in project.deploytokens.list(), True)
check('subset of all', set(project.deploytokens.list()) <= set(gl.deploytokens.list()), True)
deploy_token = project.deploytokens.get(deploy_token.id)
check('name', deploy_token.name, 'foo')
check('expires_at', deploy_token.expires_at, f'{today}T00:00:00.000Z')
check('scopes', deploy_token.scopes, ['read_registry'])
check('username', deploy_token.username, 'bar')
deploy_token.delete()
check('deleted', deploy_token in project.deploytokens.list(), False)

# test_group_deploy_tokens
deploy_token = group.deploytokens.create({'name': 'foo', 'scopes': ['read_registry']})
check('group in list', deploy_token in group.deploytokens.list(), True)
check('group subset of all', set(group.deploytokens.list()) <= set(gl.deploytokens.list()), True)
deploy_token = group.deploytokens.get(deploy_token.id)
check('group name', deploy_token.name, 'foo')
check('group scopes', deploy_token.scopes, ['read_registry'])
deploy_token.delete()

# refusals as python-gitlab raises them
try:
    project.deploytokens.create({'name': 'bad', 'scopes': ['write_repository']})
    check('unknown scope refused', True, False)
except gitlab.exceptions.GitlabCreateError as e:
    check('unknown scope', (e.response_code, e.error_message), (400, 'scopes does not have a valid value'))

# a token for git, kept for the clone below
reader = project.deploytokens.create({'name': 'reader', 'scopes': ['read_repository']})
out['deploy'] = [reader.username, reader.token]

# project access tokens (ProjectAccessTokenManager: create, list, delete)
expires = (datetime.date.today() + datetime.timedelta(days=30)).isoformat()
pat = project.access_tokens.create({'name': 'project bot', 'scopes': ['api'], 'expires_at': expires})
check('pat level', pat.access_level, 40)
check('pat listed', [t.id for t in project.access_tokens.list()], [pat.id])
check('pat fields', (pat.name, pat.scopes, pat.expires_at, pat.active, pat.revoked), ('project bot', ['api'], expires, True, False))
bot = gitlab.Gitlab(base, private_token=pat.token)
bot.auth()
check('bot user', (bot.user.username.startswith(f'project_{project.id}_bot_'), bot.user.bot), (True, True))
check('bot sees the project', bot.projects.get(project.id).id, project.id)
try:
    project.access_tokens.create({'name': 'x', 'scopes': ['read_user']})
    check('read_user refused', True, False)
except gitlab.exceptions.GitlabCreateError as e:
    check('read_user', (e.response_code, e.error_message), (400, 'scopes does not have a valid value'))
project.access_tokens.delete(pat.id)
check('pat deleted', project.access_tokens.list(), [])
try:
    bot.projects.get(project.id)
    check('revoked token refused', True, False)
except gitlab.exceptions.GitlabAuthenticationError as e:
    check('revoked token', e.response_code, 401)

# group access tokens
gat = group.access_tokens.create({'name': 'group bot', 'scopes': ['read_api'], 'access_level': 20, 'expires_at': expires})
check('gat listed', [(t.id, t.access_level) for t in group.access_tokens.list()], [(gat.id, 20)])
gbot = gitlab.Gitlab(base, private_token=gat.token)
check('group bot reads the project', gbot.projects.get(project.id).id, project.id)
gat.delete()
check('gat deleted', group.access_tokens.list(), [])
print(json.dumps(out))
`;

test('python-gitlab: its functional test of deploy tokens, project and group access tokens; the deploy token clones', {
  skip: skipWithout(available, 'python-gitlab'),
}, async (t) => {
  assertTool(available, 'python-gitlab');
  const { base, c } = await startTestServer(t, {}, { selfUrl: true });
  const out = await promisify(execFile)(PYTHON, ['-c', SCRIPT, base, ROOT_TOKEN]).catch((e) => e);
  assert.equal(out.stderr ?? '', '', out.stdout);
  const result = JSON.parse(out.stdout);

  // what is left: the reader token only, and no bot users or their memberships
  const rows = await c.db.kysely.selectFrom('deploy_tokens').select(['name', 'username', 'scopes', 'revoked']).execute();
  assert.deepEqual(rows, [{ name: 'reader', username: null, scopes: '["read_repository"]', revoked: 0 }]);
  assert.deepEqual(await c.db.kysely.selectFrom('users').select('id').where('user_type', '=', 'project_bot').execute(), []);

  // the token python-gitlab made clones the project (after a first commit lands in it)
  const project = await c.db.kysely.selectFrom('projects').selectAll().where('path', '=', 'deployed').executeTakeFirstOrThrow();
  const seedDir = tmpDir(t);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: seedDir });
  const wt = new WorkTree(seedDir);
  wt.write('README.md', 'deployed\n').commit('first');
  wt.git(['push', '-q', c.repos.pathOf(project), 'main']);
  c.repos.repository(project).touchRefs();
  const [username, secret] = result.deploy;
  const dir = tmpDir(t);
  await runGit(dir, ['clone', '-q', cloneUrl(base, result.project, username, secret), 'w']);
  assert.equal(execFileSync('git', ['-C', `${dir}/w`, 'show', 'HEAD:README.md']).toString(), 'deployed\n');
});
