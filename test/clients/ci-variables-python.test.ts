// The real python-gitlab client (3.12) through python-gitlab's own functional test of CI/CD variables
// (tests/functional/api/test_variables.py: instance, group and project variables, and the hidden ones its later
// versions add), plus what its docs/gl_objects/variables.rst shows: attributes, scopes with filter, a variable's
// delete, and the errors a script sees (skipped without python-gitlab).
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { pythonGitlab, runPythonGitlab } from '../helpers/python-gitlab.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const SCRIPT = String.raw`
group = gl.groups.create({'name': 'vars-py', 'path': 'vars-py'})
project = gl.projects.create({'name': 'vars', 'namespace_id': group.id})

# test_instance_variables
variable = gl.variables.create({'key': 'key1', 'value': 'value1'})
check('instance value', variable.value, 'value1')
check('instance listed', variable in gl.variables.list(), True)
variable.value = 'new_value1'
variable.save()
variable = gl.variables.get(variable.key)
check('instance updated', variable.value, 'new_value1')
variable.delete()

# test_group_variables, test_project_variables
for owner in (group, project):
    variable = owner.variables.create({'key': 'key1', 'value': 'value1'})
    check('value', variable.value, 'value1')
    check('listed', variable in owner.variables.list(), True)
    variable.value = 'new_value1'
    variable.save()
    variable = owner.variables.get(variable.key)
    check('updated', variable.value, 'new_value1')
    variable.delete()

# test_hidden_instance_variables: instance variables are never hidden
variable = gl.variables.create({'key': 'key1', 'value': 'secret_value', 'masked_and_hidden': True})
check('instance hidden value', variable.value, 'secret_value')
check('instance description', variable.description, None)
check('instance hidden listed', variable in gl.variables.list(), True)
variable.description = 'new_description'
variable.save()
variable = gl.variables.get(variable.key)
check('instance new description', variable.description, 'new_description')
variable.delete()

# test_hidden_group_variables, test_hidden_project_variables
for owner in (group, project):
    variable = owner.variables.create({'key': 'key1', 'value': 'secret_value', 'masked_and_hidden': True})
    check('hidden value', variable.value, None)
    check('hidden description', variable.description, None)
    check('hidden listed', variable in owner.variables.list(), True)
    variable.description = 'new_description'
    variable.save()
    variable = owner.variables.get(variable.key)
    check('hidden new description', variable.description, 'new_description')
    check('hidden still', (variable.value, variable.hidden, variable.masked), (None, True, True))
    variable.delete()

# docs/gl_objects/variables.rst: attributes, environment scopes and filter
v = project.variables.create({'key': 'DEPLOY', 'value': 'a-masked-value', 'protected': True, 'masked': True,
                              'variable_type': 'file', 'environment_scope': 'production', 'raw': True})
check('attributes', (v.protected, v.masked, v.variable_type, v.environment_scope, v.raw), (True, True, 'file', 'production', True))
project.variables.create({'key': 'DEPLOY', 'value': 'any-environment'})
try:
    project.variables.get('DEPLOY')
    print('no conflict'); sys.exit(1)
except gitlab.exceptions.GitlabGetError as e:
    check('ambiguous key', e.response_code, 409)
got = project.variables.get('DEPLOY', filter={'environment_scope': 'production'})
check('filtered', got.value, 'a-masked-value')
check('all listed', sorted(x.environment_scope for x in project.variables.list(get_all=True)), ['*', 'production'])
project.variables.delete('DEPLOY', filter={'environment_scope': '*'})
check('one left', [x.environment_scope for x in project.variables.list()], ['production'])

# errors a script sees
try:
    project.variables.create({'key': 'short', 'value': 'abc', 'masked': True})
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('unmaskable', (e.response_code, str(e.error_message)), (400, "{'value': ['is invalid']}"))
try:
    project.variables.create({'key': 'DEPLOY', 'value': 'again', 'environment_scope': 'production'})
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabCreateError as e:
    check('duplicate', (e.response_code, str(e.error_message)), (400, "{'key': ['(DEPLOY) has already been taken']}"))
print('all ok')
`;

test('python-gitlab: its functional test of CI/CD variables, and the variables API its docs show', {
  skip: skipWithout(pythonGitlab, 'python-gitlab'),
}, async (t) => {
  assertTool(pythonGitlab, 'python-gitlab');
  const { base } = await startTestServer(t, {}, { selfUrl: true });
  await runPythonGitlab(SCRIPT, base, ROOT_TOKEN);
});
