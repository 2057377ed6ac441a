// The CI file parser: YAML, includes, extends, every keyword normalised to JobOptions, every error
// message (GitLab's wording); rule expressions, durations, rules/only/except evaluation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCiConfig, mergedYaml } from '../../../src/domain/ci/config/parse.ts';
import { compileExpression, validExpression } from '../../../src/domain/ci/config/expressions.ts';
import { parseDuration } from '../../../src/lib/duration.ts';
import { evaluateJob, evaluateWorkflow, type EvalContext } from '../../../src/domain/ci/config/evaluate.ts';
import { anyMatch, globRegExp } from '../../../src/domain/ci/config/glob.ts';

const parse = (yaml: string, files: Record<string, string> = {}) =>
  parseCiConfig(yaml, async ({ path, project, ref }) => files[project ? `${project}@${ref}:${path}` : path] ?? null);
const errorsOf = async (yaml: string, files: Record<string, string> = {}) => (await parse(yaml, files)).errors;

test('a full file: defaults, global keywords, every job keyword normalised', async () => {
  const r = await parse(`
stages: [build, test, deploy]
variables:
  G: 1
  D: { value: two, description: d }
default:
  image: { name: ruby:3, entrypoint: [""] }
  before_script: [setup]
  after_script: teardown
  tags: [docker]
  retry: 1
  timeout: 1h 30m
services: [postgres]
.tmpl: &tmpl
  variables: { T: t }
build:
  <<: *tmpl
  stage: build
  script:
    - one
    - [two, [three]]
  services: [{ name: redis, alias: cache }]
  artifacts:
    name: out
    paths: [dist/]
    exclude: [dist/*.map]
    expire_in: 3 days
    when: always
    untracked: true
    reports: { junit: report.xml }
  coverage: '/Total: (\\d+)%/'
  environment: staging
test:
  stage: test
  image: node
  script: t
  needs: [build, { job: lint, artifacts: false, optional: true }]
  dependencies: [build]
  allow_failure: true
  when: manual
  retry: { max: 2, when: [script_failure] }
  inherit: { default: false, variables: [G] }
delayed:
  stage: deploy
  script: d
  when: delayed
  start_in: 10 minutes
  environment: { name: production, url: https://x.test, action: start }
  timeout: 600
child:
  stage: deploy
  trigger:
    include: [{ local: ci/child.yml }]
    strategy: depend
    forward: { pipeline_variables: true }
`);
  assert.deepEqual(r.errors, []);
  const cfg = r.config!;
  assert.deepEqual(cfg.stages, ['.pre', 'build', 'test', 'deploy', '.post']);
  assert.deepEqual(cfg.variables, { G: '1', D: 'two' });
  const [build, test, delayed, child] = cfg.jobs;
  assert.deepEqual(build, {
    name: 'build',
    stage: 'build',
    stageIdx: 1,
    type: 'build',
    options: {
      script: ['one', 'two', 'three'],
      before_script: ['setup'],
      after_script: ['teardown'],
      image: { name: 'ruby:3', entrypoint: [''] },
      services: [{ name: 'redis', alias: 'cache' }],
      artifacts: {
        name: 'out',
        untracked: true,
        paths: ['dist/'],
        exclude: ['dist/*.map'],
        when: 'always',
        expire_in: '3 days',
        reports: { junit: ['report.xml'] },
      },
      coverage: '/Total: (\\d+)%/',
      timeout: 5400,
      retry: { max: 1 },
      environment: { name: 'staging', action: 'start' },
    },
    when: 'on_success',
    allowFailure: null,
    tags: ['docker'],
    variables: { T: 't' },
    inheritVariables: true,
    environment: 'staging',
    rules: null,
    only: { refs: ['branches', 'tags'] },
    except: null,
    parallel: null,
  });
  assert.deepEqual(test.options, {
    script: ['t'],
    image: { name: 'node' },
    dependencies: ['build'],
    retry: { max: 2, when: ['script_failure'] },
    needs: [
      { job: 'build', artifacts: true },
      { job: 'lint', artifacts: false, optional: true },
    ],
  });
  assert.equal(test.when, 'manual');
  assert.equal(test.allowFailure, true);
  assert.deepEqual(test.tags, []);
  assert.deepEqual(test.inheritVariables, ['G']);
  assert.equal(delayed.options.start_in, '10 minutes');
  assert.equal(delayed.options.timeout, 600);
  assert.deepEqual(delayed.options.environment, { name: 'production', url: 'https://x.test', action: 'start' });
  assert.equal(child.type, 'bridge');
  assert.deepEqual(child.options, { trigger: { include: [{ local: 'ci/child.yml' }], strategy: 'depend', forward: { pipeline_variables: true } } });
});

test('include: local (string, list, nested) deep-merged under the file; extends', async () => {
  const files = {
    'ci/a.yml': 'include: ci/b.yml\n.base:\n  image: a\n  variables: { A: a }\nstages: [one, two]\n',
    'ci/b.yml': '.base:\n  tags: [b]\n  variables: { B: b }\n',
  };
  const r = await parse(
    'include:\n  - local: /ci/a.yml\n  - ci/b.yml\n.base:\n  variables: { C: c }\njob:\n  extends: .base\n  stage: two\n  script: x\n',
    files,
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.includes.map((i) => i.location),
    ['/ci/a.yml', 'ci/b.yml'],
  );
  const job = r.config!.jobs[0];
  assert.deepEqual(job.variables, { A: 'a', B: 'b', C: 'c' });
  assert.deepEqual(job.tags, ['b']);
  assert.deepEqual(job.options.image, { name: 'a' });
  assert.equal(job.stageIdx, 2);
  assert.match(mergedYaml(r.merged), /^---\n/);
  // multiple extends: later wins; chains
  const m = await parse('.a: { script: a, tags: [a] }\n.b: { extends: .a, tags: [b] }\njob: { extends: [.a, .b] }\n');
  assert.deepEqual(m.errors, []);
  assert.deepEqual(m.config!.jobs[0].tags, ['b']);
  assert.deepEqual(m.config!.jobs[0].options.script, ['a']);
});

test("include: project (a file or a list, at a ref or HEAD); local includes inside it are that project's", async () => {
  const files = {
    'tools/ci@v1:templates/build.yml': 'include: common.yml\n.build:\n  script: make\n',
    'tools/ci@v1:common.yml': 'variables: { FROM: tools }\n',
    'tools/ci@HEAD:lint.yml': 'lint:\n  script: lint\n',
    'common.yml': 'variables: { FROM: own }\n',
  };
  const r = await parse(
    'include:\n  - project: Tools/CI\n    ref: v1\n    file: /templates/build.yml\n  - project: tools/ci\n    file: [lint.yml]\njob:\n  extends: .build\n',
    files,
  );
  assert.deepEqual(r.errors, []);
  assert.deepEqual(
    r.includes.map((i) => [i.type, i.location, i.extra, i.context_project]),
    [
      ['file', 'templates/build.yml', { project: 'tools/ci', ref: 'v1' }, null],
      ['file', 'common.yml', { project: 'tools/ci', ref: 'v1' }, 'tools/ci'],
      ['file', 'lint.yml', { project: 'tools/ci', ref: 'HEAD' }, null],
    ],
  );
  assert.deepEqual(
    r.config!.jobs.map((j) => [j.name, j.options.script]),
    [
      ['lint', ['lint']],
      ['job', ['make']],
    ],
  );
  assert.deepEqual(r.config!.variables, { FROM: 'tools' });
});

test('YAML as Psych reads it: yes/on are booleans, y/n stay strings, duplicate keys keep the last', async () => {
  const r = await parse('job:\n  script: y\n  allow_failure: yes\n  stage: build\n  stage: test\n');
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.config!.jobs[0].options.script, ['y']);
  assert.equal(r.config!.jobs[0].allowFailure, true);
  assert.equal(r.config!.jobs[0].stage, 'test');
});

test('warnings: a last rule of only `when` without workflow:rules', async () => {
  const r = await parse('a:\n  script: x\n  rules:\n    - if: $X\n    - when: always\nb:\n  script: x\n  rules: [{ when: never }]\n');
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, [
    'jobs:a may allow multiple pipelines to run for a single action due to `rules:when` clause with no `workflow:rules` - read more: https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-warnings',
  ]);
  const w = await parse('workflow:\n  rules: [{ when: always }]\na:\n  script: x\n  rules: [{ when: always }]\n');
  assert.deepEqual(w.warnings, []);
});

test('parallel: N copies or a matrix; needs and dependencies on them mean every instance', async () => {
  const r = await parse(`
unit:
  stage: test
  script: x
  parallel: 3
deploy:
  stage: deploy
  script: d
  parallel:
    matrix:
      - PROVIDER: aws
        STACK: [monitoring, app]
      - PROVIDER: gcp
report:
  stage: deploy
  script: r
  needs: [unit]
  dependencies: [unit]
`);
  assert.deepEqual(r.errors, []);
  const jobs = r.config!.jobs;
  assert.deepEqual(
    jobs.map((j) => j.name),
    ['unit 1/3', 'unit 2/3', 'unit 3/3', 'deploy: [aws, monitoring]', 'deploy: [aws, app]', 'deploy: [gcp]', 'report'],
  );
  assert.deepEqual(jobs[1].variables, { CI_NODE_INDEX: '2', CI_NODE_TOTAL: '3' });
  assert.deepEqual(jobs[4].variables, { PROVIDER: 'aws', STACK: 'app', CI_NODE_INDEX: '2', CI_NODE_TOTAL: '3' });
  assert.deepEqual(jobs[6].options.needs, [
    { job: 'unit 1/3', artifacts: true },
    { job: 'unit 2/3', artifacts: true },
    { job: 'unit 3/3', artifacts: true },
  ]);
  assert.deepEqual(jobs[6].options.dependencies, ['unit 1/3', 'unit 2/3', 'unit 3/3']);
  assert.deepEqual(await errorsOf('a:\n  script: x\n  parallel: 0\n'), ['jobs:a:parallel config must be greater than or equal to 1']);
  assert.deepEqual(await errorsOf('a:\n  script: x\n  parallel: 201\n'), ['jobs:a:parallel config must be less than or equal to 200']);
  assert.deepEqual(await errorsOf('a:\n  script: x\n  parallel: two\n'), ['jobs:a:parallel config should be an integer or a hash']);
  assert.deepEqual(await errorsOf('a:\n  script: x\n  parallel: { matrix: [], foo: 1 }\n'), [
    'jobs:a:parallel config contains unknown keys: foo',
    'jobs:a:parallel:matrix config should be an array of hashes',
  ]);
  assert.deepEqual(await errorsOf('a:\n  script: x\n  parallel: { matrix: [{ A: [[1]] }] }\n'), [
    'jobs:a:parallel:matrix:variables config should be a hash of key value pairs',
  ]);
  const big = Array.from({ length: 15 }, (_, i) => i).join(', ');
  assert.deepEqual(await errorsOf(`a:\n  script: x\n  parallel: { matrix: [{ A: [${big}], B: [${big}] }] }\n`), [
    'jobs:a:parallel:matrix config generates too many jobs (maximum is 200)',
  ]);
});

test('every error message', async () => {
  const cases: [string, string[], Record<string, string>?][] = [
    ['a: b\n c: d\n', ['(<unknown>): did not find expected key while parsing a block mapping at line 1 column 4']],
    ['just text', ['Invalid configuration format']],
    ['.hidden:\n  script: x\n', ['jobs config should contain at least one visible job']],
    ['stages: [a]\n', ['jobs config should contain at least one visible job']],
    ['job:\n  image: x\n', ['jobs job config should implement the script:, run:, or trigger: keyword']],
    ['job: 1\n', ['jobs job config should implement the script:, run:, or trigger: keyword']],
    ['job:\n  script: x\n  foo: 1\n  bar: 2\n', ['jobs:job config contains unknown keys: foo, bar']],
    ['job:\n  script: 1\n', ['jobs:job:script config should be a string or a nested array of strings up to 10 levels deep']],
    ['job:\n  script: [[[[[[[[[[[x]]]]]]]]]]]\n', ['jobs:job:script config should be a string or a nested array of strings up to 10 levels deep']],
    ['job:\n  script: x\n  before_script: { a: 1 }\n', ['jobs:job:before_script config should be a string or a nested array of strings up to 10 levels deep']],
    ['before_script: 5\njob:\n  script: x\n', ['before_script config should be a string or a nested array of strings up to 10 levels deep']],
    [
      'default:\n  after_script: 5\n  foo: 1\njob:\n  script: x\n',
      ['default config contains unknown keys: foo', 'default:after_script config should be a string or a nested array of strings up to 10 levels deep'],
    ],
    ['job:\n  script: x\n  stage: nope\n', ['job job: chosen stage does not exist; available stages are .pre, build, test, deploy, .post']],
    ['stages: [a, b]\njob:\n  script: x\n', ['job job: chosen stage does not exist; available stages are .pre, a, b, .post']],
    ['stages: a\njob:\n  script: x\n', ['stages config should be an array of strings']],
    ['job:\n  script: x\n  stage: [a]\n', ['jobs:job:stage config should be a string']],
    ['job:\n  script: x\n  when: later\n', ['jobs:job when should be one of: on_success, on_failure, always, manual, delayed']],
    ['job:\n  script: x\n  allow_failure: maybe\n', ['jobs:job allow_failure should be a hash or a boolean value']],
    ['job:\n  script: x\n  tags: a\n', ['jobs:job:tags config should be an array of strings']],
    ['job:\n  script: x\n  variables: [a]\n', ['jobs:job:variables config should be a hash of key value pairs, value can be a hash']],
    ['variables: { A: [1] }\njob:\n  script: x\n', ['variables config should be a hash of key value pairs, value can be a hash']],
    ['job:\n  script: x\n  image: 5\n', ['jobs:job:image config should be a hash or a string']],
    ['job:\n  script: x\n  services: redis\n', ['jobs:job:services config should be a array']],
    ['job:\n  script: x\n  dependencies: a\n', ['jobs:job dependencies should be an array of strings']],
    ['job:\n  script: x\n  dependencies: [nope]\n', ['job job: undefined dependency: nope']],
    [
      'a:\n  script: x\n  stage: deploy\nb:\n  script: x\n  stage: build\n  dependencies: [a]\n',
      ['b job: dependency a is not defined in current or prior stages'],
    ],
    ['job:\n  script: x\n  needs: [nope]\n', ['job job: undefined need: nope']],
    ['a:\n  script: x\n  stage: deploy\nb:\n  script: x\n  stage: build\n  needs: [a]\n', ['b job: need a is not defined in current or prior stages']],
    ['a:\n  script: x\nb:\n  script: x\n  needs: [a]\n  dependencies: [c]\nc:\n  script: x\n', ['jobs:b dependencies the c should be part of needs']],
    ['job:\n  script: x\n  needs: [{ project: a/b, job: x, ref: main }]\n', ['jobs:job:needs:need cross-pipeline needs are not supported']],
    [
      'job:\n  script: x\n  artifacts: { paths: a, when: sometimes, expire_in: soon, foo: 1 }\n',
      [
        'jobs:job:artifacts config contains unknown keys: foo',
        'jobs:job:artifacts paths should be an array of strings',
        'jobs:job:artifacts when should be on_success, on_failure or always',
        'jobs:job:artifacts expire in should be a duration',
      ],
    ],
    ['job:\n  script: x\n  environment: { url: x }\n', ["jobs:job:environment name can't be blank"]],
    ['job:\n  script: x\n  environment: { name: p, action: go }\n', ['jobs:job:environment action should be start, stop, prepare, verify, or access']],
    ['job:\n  script: x\n  environment: 5\n', ['jobs:job:environment config should be a hash or a string']],
    ['job:\n  script: x\n  coverage: "Total"\n', ['jobs:job:coverage config must be a regular expression']],
    ['job:\n  script: x\n  timeout: forever\n', ['jobs:job:timeout config should be a duration']],
    ['job:\n  script: x\n  retry: 3\n', ['jobs:job:retry config must be a non negative integer less than or equal to 2']],
    [
      'job:\n  script: x\n  retry: { max: 1, when: [bad] }\n',
      [
        `jobs:job:retry when should be one of: always, unknown_failure, script_failure, api_failure, stuck_or_timeout_failure, runner_system_failure, runner_unsupported, stale_schedule, job_execution_timeout, archived_failure, unmet_prerequisites, scheduler_failure, data_integrity_failure`,
      ],
    ],
    ['job:\n  script: x\n  retry: a\n', ['jobs:job:retry config has to be either an integer or a hash']],
    ['job:\n  script: x\n  when: delayed\n', ['jobs:job start in should be a duration']],
    ['job:\n  script: x\n  when: delayed\n  start_in: 2 weeks\n', ['jobs:job start in should not exceed the limit']],
    ['job:\n  script: x\n  start_in: 1 minute\n', ['jobs:job start in must be blank']],
    ['job:\n  script: x\n  rules: [{ if: $A }]\n  only: [main]\n', ['jobs:job config key may not be used with `rules`: only']],
    ['job:\n  script: x\n  rules: { if: $A }\n', ['jobs:job:rules config should be an array of hashes']],
    [
      'job:\n  script: x\n  rules: [{ if: "$A ==", when: sometimes, foo: 1 }]\n',
      [
        'jobs:job:rules:rule config contains unknown keys: foo',
        'jobs:job:rules:rule if invalid expression syntax',
        'jobs:job:rules:rule when unknown value: sometimes',
      ],
    ],
    [
      'job:\n  script: x\n  only: { refs: 1, foo: 2 }\n',
      ['jobs:job:only config contains unknown keys: foo', 'jobs:job:only:refs config should be an array of strings or regular expressions'],
    ],
    ['job:\n  script: x\n  except: 5\n', ['jobs:job:except has to be either an array of conditions or a hash']],
    ['job:\n  script: x\n  only: { variables: ["$A =="] }\n', ['jobs:job:only:variables config should be an array of valid expressions']],
    [
      'workflow:\n  rules: [{ when: maybe }]\n  foo: 1\njob:\n  script: x\n',
      ['workflow config contains unknown keys: foo', 'workflow:rules:rule when unknown value: maybe'],
    ],
    ['job:\n  trigger: a/b\n', ['jobs:job:trigger multi-project pipelines are not supported (trigger: a/b)']],
    ['job:\n  trigger: { include: c.yml, strategy: wait }\n', ['jobs:job:trigger strategy should be depend']],
    ['job:\n  trigger: { include: [{ template: x.yml }] }\n', ['jobs:job:trigger:include only local includes are supported']],
    ['job:\n  trigger: { strategy: depend }\n', ['jobs:job:trigger config must specify either project or include']],
    ['job:\n  trigger: { include: c.yml }\n  script: x\n', ['jobs:job config contains unknown keys: trigger']],
    ['job:\n  trigger: { include: c.yml }\n  image: x\n', ['jobs:job config contains unknown keys: image']],
    ['job:\n  extends: .nope\n  script: x\n', ['job: unknown keys in `extends` (.nope)']],
    ['.a: { extends: .b }\n.b: { extends: .a }\njob: { extends: .a, script: x }\n', ['.a: circular dependency detected in `extends`']],
    ['job:\n  extends: 5\n  script: x\n', ['job: invalid extends']],
    ['.a: 5\njob:\n  extends: .a\n  script: x\n', ['job: invalid base hash in `extends`']],
    [
      'include: https://example.com/ci.yml\njob:\n  script: x\n',
      ['Remote file `https://example.com/ci.yml` could not be included: only local and project includes are supported'],
    ],
    [
      'include: { template: Auto-DevOps.gitlab-ci.yml }\njob:\n  script: x\n',
      ['Include `template` is not supported: only local and project includes are supported'],
    ],
    ['include: { project: a/b, file: c.yml }\njob:\n  script: x\n', ['Project `a/b` file `c.yml` does not exist!']],
    ['include: { project: a/b, file: c.yml }\njob:\n  script: x\n', ['Project `a/b` file `c.yml` is empty!'], { 'a/b@HEAD:c.yml': ' \n' }],
    ['include: { project: a/b, file: c.txt }\njob:\n  script: x\n', ['Included file `c.txt` does not have YAML extension!']],
    ['include: { project: a/b, file: ../c.yml }\njob:\n  script: x\n', ['Project `a/b` file `../c.yml` does not exist!']],
    ['include: { project: a/b }\njob:\n  script: x\n', ['Include `{"project":"a/b"}` needs to match exactly one accessor!']],
    [
      'include: { local: a.yml, remote: https://x/y.yml }\njob:\n  script: x\n',
      ['Include `{"local":"a.yml","remote":"https://x/y.yml"}` needs to match exactly one accessor!'],
    ],
    ['include: missing.yml\njob:\n  script: x\n', ['Local file `missing.yml` does not exist!']],
    ['include: ../etc/passwd.yml\njob:\n  script: x\n', ['Local file `../etc/passwd.yml` does not exist!']],
    ['include: notes.txt\njob:\n  script: x\n', ['Included file `notes.txt` does not have YAML extension!']],
    ['include: bad.yml\njob:\n  script: x\n', ['Local file `bad.yml` does not have valid YAML syntax!'], { 'bad.yml': 'a: b\n c: d\n' }],
  ];
  const more: [string, string[]][] = [
    [`${'j'.repeat(256)}:\n  script: x\n`, [`jobs:${'j'.repeat(256)} name is too long (maximum is 255 characters)`]],
    ['job:\n  script: []\n', ["jobs:job script can't be blank"]],
    [
      'job:\n  script: x\n  image: { name: a, entrypoint: b, foo: 1 }\n',
      ['jobs:job:image config contains unknown keys: foo', 'jobs:job:image entrypoint should be an array of strings'],
    ],
    ['job:\n  script: x\n  image: { entrypoint: [a] }\n', ['jobs:job:image config should be a hash or a string']],
    [
      'job:\n  script: x\n  services: [5, { name: a, foo: 1 }]\n',
      ['jobs:job:services:service config should be a hash or a string (item 0)', 'jobs:job:services:service config contains unknown keys: foo'],
    ],
    [
      'job:\n  script: x\n  artifacts: { name: 5, untracked: maybe, reports: { junit: 5 } }\n',
      [
        'jobs:job:artifacts name should be a string',
        'jobs:job:artifacts untracked should be a boolean value',
        'jobs:job:artifacts:reports junit should be an array of strings or a string',
      ],
    ],
    ['job:\n  script: x\n  artifacts: [a]\n', ['jobs:job:artifacts config should be a hash']],
    ['job:\n  script: x\n  artifacts: { reports: [a] }\n', ['jobs:job:artifacts:reports config should be a hash']],
    ['job:\n  script: x\n  environment: { name: p, url: 5 }\n', ['jobs:job:environment url should be a string']],
    ['job:\n  script: x\n  environment: " "\n', ["jobs:job:environment name can't be blank"]],
    [
      'a:\n  script: x\njob:\n  script: x\n  needs: [{ job: 5 }, { job: a, artifacts: 1, optional: 2 }, 7]\n',
      [
        'jobs:job:needs:need job should be a string',
        'jobs:job:needs:need artifacts should be a boolean value',
        'jobs:job:needs:need optional should be a boolean value',
        'jobs:job:needs:need has an unsupported type',
      ],
    ],
    [
      'job:\n  script: x\n  rules: [5, { if: 5, exists: 5, start_in: soon, allow_failure: 1 }]\n',
      [
        'jobs:job:rules:rule config should be a hash',
        'jobs:job:rules:rule if should be a string',
        'jobs:job:rules:rule:exists config should be an array of strings',
        'jobs:job:rules:rule start in should be a duration',
        'jobs:job:rules:rule allow_failure should be a boolean value',
      ],
    ],
    ['job:\n  trigger: 5\n', ['jobs:job:trigger config should be a hash or a string']],
    [
      'job:\n  trigger: { include: [5, a.yml, b.yml, c.yml, d.yml] }\n',
      [
        'jobs:job:trigger:include config must be a string, an array of strings or hashes with local',
        'jobs:job:trigger:include config must be less than or equal to 3',
      ],
    ],
    ['job:\n  trigger: { project: a/b }\n', ['jobs:job:trigger multi-project pipelines are not supported (trigger: project)']],
    ['job:\n  trigger: { include: a.yml, forward: { yaml_variables: true, foo: 1 } }\n', ['jobs:job:trigger:forward config contains unknown keys: foo']],
    ['job:\n  trigger: { include: a.yml, forward: 1 }\n', ['jobs:job:trigger:forward config should be a hash']],
    [
      'job:\n  script: x\n  retry: { max: 5, foo: 1 }\n',
      ['jobs:job:retry config contains unknown keys: foo', 'jobs:job:retry max config must be a non negative integer less than or equal to 2'],
    ],
    [
      'job:\n  script: x\n  inherit: { default: 1, foo: 1 }\n',
      ['jobs:job:inherit config contains unknown keys: foo', 'jobs:job:inherit:default config should be a boolean value or an array of strings'],
    ],
    ['job:\n  script: x\n  inherit: 1\n', ['jobs:job:inherit config should be a hash']],
    ['job:\n  script: x\n  timeout: 2 months\n', ['jobs:job:timeout config should not exceed the limit']],
    ['job:\n  script: x\n  coverage: "/(/"\n', ['jobs:job:coverage config must be a regular expression']],
    ['job:\n  script: x\n  resource_group: [a]\n', ['jobs:job resource group should be a string']],
    ['workflow: 1\njob:\n  script: x\n', ['workflow config should be a hash']],
    ['workflow: { name: [a] }\njob:\n  script: x\n', ['workflow name should be a string of at most 255 characters']],
    ['default: 1\njob:\n  script: x\n', ['default config should be a hash']],
    ['image: 5\njob:\n  script: x\n', ['image config should be a hash or a string']],
    ['job:\n  script: x\n  variables: { A: { value: [1] } }\n', ['jobs:job:variables config should be a hash of key value pairs, value can be a hash']],
  ];
  for (const [yaml, expected] of more) assert.deepEqual(await errorsOf(yaml), expected, yaml);
  // includes nested beyond ci_max_includes (150): counted before the 151st is read
  const chain: Record<string, string> = {};
  for (let i = 0; i < 152; i++) chain[`c${i}.yml`] = `include: c${i + 1}.yml\n`;
  assert.deepEqual(await errorsOf('include: c0.yml\njob:\n  script: x\n', chain), ['Maximum of 150 nested includes are allowed!']);
  for (const [yaml, expected, files] of cases) {
    assert.deepEqual(await errorsOf(yaml, files ?? {}), expected, yaml);
  }
});

test('expressions: variables, strings, null, ==, !=, =~, !~, &&, ||, parentheses', () => {
  const vars = { CI_COMMIT_BRANCH: 'main', EMPTY: '', RE: '/^ma/', CI_COMMIT_REF_NAME: 'feature/x' };
  const t = (e: string) => compileExpression(e)(vars);
  assert.equal(t('$CI_COMMIT_BRANCH == "main"'), true);
  assert.equal(t("$CI_COMMIT_BRANCH == 'dev'"), false);
  assert.equal(t('$CI_COMMIT_BRANCH != "dev"'), true);
  assert.equal(t('$CI_COMMIT_BRANCH'), true);
  assert.equal(t('$EMPTY'), false);
  assert.equal(t('$MISSING'), false);
  assert.equal(t('$MISSING == null'), true);
  assert.equal(t('$CI_COMMIT_REF_NAME =~ /^feature\\//'), true);
  assert.equal(t('$CI_COMMIT_REF_NAME !~ /^feature/'), false);
  assert.equal(t('$CI_COMMIT_BRANCH =~ /MAIN/i'), true);
  assert.equal(t('$CI_COMMIT_BRANCH =~ $RE'), true);
  assert.equal(t('$MISSING || $CI_COMMIT_BRANCH == "main" && $EMPTY'), false);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the CI syntax ${VAR}
  assert.equal(t('($MISSING || $CI_COMMIT_BRANCH == "main") && ${CI_COMMIT_BRANCH}'), true);
  for (const bad of ['$A ==', '== $A', '$A = "b"', '"open', '($A', 'foo']) assert.equal(validExpression(bad), false, bad);
});

test('durations as ChronicDuration reads them', () => {
  assert.equal(parseDuration('3600'), 3600);
  assert.equal(parseDuration(90), 90);
  assert.equal(parseDuration('1h 30m'), 5400);
  assert.equal(parseDuration('3 days 4 hrs'), 273_600);
  assert.equal(parseDuration('1 week'), 604_800);
  assert.equal(parseDuration('2 minutes and 10 seconds'), 130);
  assert.equal(parseDuration('01:30:00'), 5400);
  assert.equal(parseDuration('soon'), null);
  assert.equal(parseDuration('5 parsecs'), null);
  assert.equal(parseDuration(''), null);
});

test('rules, only/except and workflow:rules decide the jobs of a ref and source', async () => {
  const r = await parse(`
workflow:
  rules:
    - if: $CI_COMMIT_TAG
      variables: { KIND: tag }
    - if: $CI_PIPELINE_SOURCE == "push"
    - when: never
a:
  script: x
  rules:
    - if: $CI_COMMIT_BRANCH == "main"
      when: manual
      allow_failure: true
      variables: { R: 1 }
    - if: $CI_COMMIT_TAG
      when: never
    - when: on_success
b:
  script: x
  only: [/^rel-/, tags, api]
  except: [rel-old]
c:
  script: x
  only: { refs: [branches], variables: ['$DEPLOY == "yes"'] }
d:
  script: x
  rules:
    - exists: [Dockerfile]
`);
  assert.deepEqual(r.errors, []);
  const [a, b, c, d] = r.config!.jobs;
  const ctx = (ref: string, tag: boolean, source: string, variables: Record<string, string> = {}): EvalContext => ({
    ref,
    tag,
    source,
    variables: { ...(tag ? { CI_COMMIT_TAG: ref } : { CI_COMMIT_BRANCH: ref }), CI_PIPELINE_SOURCE: source, ...variables },
    files: async () => (ref === 'main' ? ['Dockerfile', 'src/a.ts'] : ['src/a.ts']),
  });
  assert.deepEqual(await evaluateWorkflow(r.config!.workflowRules, ctx('v1', true, 'push')), { run: true, variables: { KIND: 'tag' } });
  assert.deepEqual(await evaluateWorkflow(r.config!.workflowRules, ctx('main', false, 'push')), { run: true, variables: {} });
  assert.deepEqual(await evaluateWorkflow(r.config!.workflowRules, ctx('main', false, 'web')), { run: false, variables: {} });
  assert.deepEqual(await evaluateJob(a, ctx('main', false, 'push')), { when: 'manual', allowFailure: true, variables: { R: '1' }, startIn: undefined });
  assert.equal(await evaluateJob(a, ctx('v1', true, 'push')), null);
  assert.deepEqual(await evaluateJob(a, ctx('dev', false, 'push')), { when: 'on_success', allowFailure: undefined, variables: undefined, startIn: undefined });
  assert.deepEqual(await evaluateJob(b, ctx('rel-1', false, 'push')), { when: 'on_success' });
  assert.equal(await evaluateJob(b, ctx('rel-old', false, 'push')), null);
  assert.equal(await evaluateJob(b, ctx('main', false, 'push')), null);
  assert.deepEqual(await evaluateJob(b, ctx('main', false, 'api')), { when: 'on_success' });
  assert.deepEqual(await evaluateJob(b, ctx('v2', true, 'push')), { when: 'on_success' });
  assert.equal(await evaluateJob(c, ctx('main', false, 'push')), null);
  assert.deepEqual(await evaluateJob(c, ctx('main', false, 'push', { DEPLOY: 'yes' })), { when: 'on_success' });
  assert.equal(await evaluateJob(c, ctx('v1', true, 'push', { DEPLOY: 'yes' })), null);
  assert.deepEqual(await evaluateJob(d, ctx('main', false, 'push')), { when: 'on_success', allowFailure: undefined, variables: undefined, startIn: undefined });
  assert.equal(await evaluateJob(d, ctx('dev', false, 'push')), null);
});

test('rules:changes and only/except:changes against the files a push changed; exists globs; except matches on any key', async () => {
  const r = await parse(`
docs:
  script: x
  rules:
    - changes: ['docs/**/*.md', README.md]
src:
  script: x
  rules:
    - changes: { paths: ['src/{a,b}/*.ts'] }
legacy:
  script: x
  only: { refs: [branches], changes: [src/**/*] }
skip_docs:
  script: x
  except: { refs: [nope], changes: ['docs/*'] }
docker:
  script: x
  rules:
    - exists: ['**/Dockerfile']
`);
  assert.deepEqual(r.errors, []);
  const jobs = Object.fromEntries(r.config!.jobs.map((j) => [j.name, j]));
  const ctx = (changed: string[] | null, files: string[] = []): EvalContext => ({
    ref: 'main',
    tag: false,
    source: 'push',
    variables: { CI_COMMIT_BRANCH: 'main' },
    changed: async () => changed,
    files: async () => files,
  });
  const picked = async (c: EvalContext) => {
    const out: string[] = [];
    for (const [name, j] of Object.entries(jobs)) if (await evaluateJob(j, c)) out.push(name);
    return out;
  };
  assert.deepEqual(await picked(ctx(['docs/guide/x.md'])), ['docs', 'skip_docs']);
  assert.deepEqual(await picked(ctx(['README.md', 'src/a/x.ts'])), ['docs', 'src', 'legacy', 'skip_docs']);
  assert.deepEqual(await picked(ctx(['src/c/x.ts'])), ['legacy', 'skip_docs']);
  assert.deepEqual(await picked(ctx(['docs/a.md'], ['build/Dockerfile'])), ['docs', 'docker']);
  // no push diff (a new branch, the API): every changes matches
  assert.deepEqual(await picked(ctx(null)), ['docs', 'src', 'legacy']);
  assert.equal(globRegExp('**/*.md').test('a/b/c.md'), true);
  assert.equal(globRegExp('**/*.md').test('c.md'), true);
  assert.equal(globRegExp('*.md').test('a/c.md'), false);
  assert.equal(globRegExp('src/**').test('src/a/b'), true);
  assert.equal(globRegExp('file?.[tj]s').test('file1.ts'), true);
  assert.equal(anyMatch(['{a,b}/x'], ['c/x', 'b/x']), true);
});
