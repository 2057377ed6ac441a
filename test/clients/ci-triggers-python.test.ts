// The real python-gitlab client (3.12) through the trigger and schedule parts of its functional tests
// (tests/functional/api/test_projects.py: test_project_triggers; the pipeline schedule and trigger_pipeline
// use of test_pipelines_jobs and docs/gl_objects/pipelines_and_jobs.rst): triggers created, listed and
// deleted, a pipeline triggered with variables, schedules created, listed, updated, owned, played and given
// variables (skipped without python-gitlab).
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { pythonGitlab, runPythonGitlab } from '../helpers/python-gitlab.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const SCRIPT = String.raw`
import time

project = gl.projects.create({'name': 'triggered', 'initialize_with_readme': True})
project.files.create({'file_path': '.service-ci.yml', 'branch': 'main', 'content': 'build:\n  script: [echo hi]\n', 'commit_message': 'ci'})

# test_project_triggers
trigger = project.triggers.create({'description': 'trigger1'})
check('trigger listed', trigger in project.triggers.list(), True)
check('trigger token', trigger.token.startswith('glptt-'), True)
check('trigger get', project.triggers.get(trigger.id).description, 'trigger1')
trigger.description = 'renamed'
trigger.save()
check('trigger renamed', project.triggers.get(trigger.id).description, 'renamed')

# trigger_pipeline with variables
pipeline = project.trigger_pipeline('main', trigger.token, variables={'VAR1': 'value1'})
check('triggered source', pipeline.source, 'trigger')
variables = {v.key: v.value for v in pipeline.variables.list()}
check('triggered variable', variables['VAR1'], 'value1')
check('trigger last_used', project.triggers.get(trigger.id).last_used is not None, True)
try:
    project.trigger_pipeline('no-such-ref', trigger.token)
    check('bad ref refused', True, False)
except gitlab.exceptions.GitlabCreateError as e:
    check('bad ref status', e.response_code, 400)
try:
    project.trigger_pipeline('main', 'glptt-nope')
    check('bad token refused', True, False)
except gitlab.exceptions.GitlabCreateError as e:
    check('bad token status', e.response_code, 404)
trigger.delete()
check('trigger deleted', project.triggers.list(), [])

# pipeline schedules
schedule = project.pipelineschedules.create({'ref': 'main', 'description': 'Test pipeline schedule', 'cron': '0 1 * * *'})
check('schedule listed', [s.id for s in project.pipelineschedules.list()], [schedule.id])
check('schedule timezone', schedule.cron_timezone, 'UTC')
check('schedule active', schedule.active, True)
check('schedule next run', schedule.next_run_at.endswith('T01:00:00.000Z'), True)
schedule.cron = '1 2 * * *'
schedule.save()
got = project.pipelineschedules.get(schedule.id)
check('schedule updated', got.cron, '1 2 * * *')
check('schedule last pipeline', got.last_pipeline, None)
var = schedule.variables.create({'key': 'foo', 'value': 'bar'})
var.value = 'new_value'
var.save()
check('schedule variable', [(v['key'], v['value']) for v in project.pipelineschedules.get(schedule.id).attributes['variables']], [('foo', 'new_value')])
schedule.take_ownership()
check('schedule owner', schedule.owner['username'], 'root')
sid = schedule.id
# play answers GitLab's {"message": "201 Created"}, which replaces the object's attributes
schedule.play()
schedule = project.pipelineschedules.get(sid)
for _ in range(100):
    pipelines = project.pipelines.list(source='schedule')
    if pipelines:
        break
    time.sleep(0.1)
check('played pipeline', [p.source for p in pipelines], ['schedule'])
check('last pipeline', project.pipelineschedules.get(schedule.id).last_pipeline['id'], pipelines[0].id)
check('schedule pipelines', [p['id'] for p in gl.http_list(f'/projects/{project.id}/pipeline_schedules/{schedule.id}/pipelines')], [pipelines[0].id])
check('active scope', len(project.pipelineschedules.list(scope='active')), 1)
check('inactive scope', len(project.pipelineschedules.list(scope='inactive')), 0)
try:
    project.pipelineschedules.create({'ref': 'main', 'description': 'bad', 'cron': 'every day'})
    check('bad cron refused', True, False)
except gitlab.exceptions.GitlabCreateError as e:
    check('bad cron status', e.response_code, 400)
var.delete()
schedule.delete()
check('schedule deleted', project.pipelineschedules.list(), [])
print('all ok')
`;

test('python-gitlab: triggers and pipeline schedules as its functional tests use them', { skip: skipWithout(pythonGitlab, 'python-gitlab') }, async (t) => {
  assertTool(pythonGitlab, 'python-gitlab');
  const { base } = await startTestServer(t, {}, { selfUrl: true });
  await runPythonGitlab(SCRIPT, base, ROOT_TOKEN);
});
