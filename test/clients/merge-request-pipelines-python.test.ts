// The real python-gitlab client on merge request pipelines and the CI file's path, as its docs show them
// (docs/gl_objects/merge_requests.rst "List MR pipelines" / "Create a pipeline for a merge request",
// projects.rst `ci_config_path`): a .gitlab-ci.yml committed through the files API, a merge request,
// mr.pipelines.create() and list(), head_pipeline, and a pipeline from a custom ci_config_path (skipped without
// python-gitlab).
import { test } from 'node:test';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { pythonGitlab, runPythonGitlab } from '../helpers/python-gitlab.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';

const SCRIPT = String.raw`
project = gl.projects.create({'name': 'mr-pipelines', 'initialize_with_readme': True})
ci = '''test:
  script: make test
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
'''
project.files.create({'file_path': '.gitlab-ci.yml', 'branch': 'main', 'content': ci, 'commit_message': 'CI'})
project.branches.create({'branch': 'feature', 'ref': 'main'})
project.files.create({'file_path': 'f.txt', 'branch': 'feature', 'content': 'f', 'commit_message': 'feature'})
mr = project.mergerequests.create({'source_branch': 'feature', 'target_branch': 'main', 'title': 'Feature'})

pipeline = mr.pipelines.create({'ref': mr.source_branch})
check('source', pipeline.source, 'merge_request_event')
check('ref', pipeline.ref, f'refs/merge-requests/{mr.iid}/head')
check('status', pipeline.status, 'pending')
pipelines = mr.pipelines.list()
check('listed', pipeline.id in [p.id for p in pipelines], True)
mr = project.mergerequests.get(mr.iid)
check('head_pipeline', mr.head_pipeline['id'], pipeline.id)
jobs = project.pipelines.get(pipeline.id).jobs.list()
check('jobs', [j.name for j in jobs], ['test'])

# a custom CI file path: its file is what a pipeline reads
project.ci_config_path = 'ci/pipeline.yml'
project.save()
check('ci_config_path', gl.projects.get(project.id).ci_config_path, 'ci/pipeline.yml')
project.files.create({'file_path': 'ci/pipeline.yml', 'branch': 'main', 'content': 'custom:\n  script: x\n', 'commit_message': 'custom CI'})
p = project.pipelines.create({'ref': 'main'})
check('custom jobs', [j.name for j in p.jobs.list()], ['custom'])
try:
    project.ci_config_path = '../outside.yml'
    project.save()
    print('no error'); sys.exit(1)
except gitlab.exceptions.GitlabUpdateError as e:
    check('traversal', e.response_code, 400)
print('all ok')
`;

test('python-gitlab: merge request pipelines and ci_config_path', { skip: skipWithout(pythonGitlab, 'python-gitlab') }, async (t) => {
  assertTool(pythonGitlab, 'python-gitlab');
  const { base } = await startTestServer(t, {}, { selfUrl: true });
  await runPythonGitlab(SCRIPT, base, ROOT_TOKEN);
});
