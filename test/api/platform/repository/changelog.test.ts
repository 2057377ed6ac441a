// Changelog API (GitLab lib/api/repositories.rb, Repositories::ChangelogService): notes from the
// trailers of a commit range, the previous release's tag as the default start, the config file,
// every error body, commits into the changelog file and their push events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildTestApp, type TestApp } from '../../../helpers/build-app.ts';
import { eventsAfter } from '../../../helpers/outbox.ts';
import { bareGit, fixtureEnv, workTree, type WorkTree } from '../../../helpers/git.ts';
import { todayDate } from '../../../../src/lib/time.ts';

const T0 = 1_700_000_000;
const BOB = { name: 'Bob Outsider', email: 'bob@example.com' };
const CONFIG = `categories:
  added: Features
  fixed: Bug fixes
  removed: Removals
`;

interface Fixture {
  ta: TestApp;
  dir: string;
  wt: WorkTree;
  full: string;
  base: string;
  url: string;
  sha: Record<string, string>;
}

/**
 * main: c0 (tag v1.0.0) → config → c1 added (Ada, a Hearth user) → c2 fixed (Bob) → c3 no trailer
 * (tag v1.1.0-rc1) → c4 lowercase trailer → c5 added → c6 reverts c5 (removed) → c7 other.
 */
async function setup(t: Parameters<typeof buildTestApp>[0], opts: { visibility?: string; config?: string | null } = {}): Promise<Fixture> {
  const ta = await buildTestApp(t);
  const group = await ta.seed.group({ path: `grp-${Math.random().toString(36).slice(2, 7)}`, visibility: opts.visibility ?? 'private' });
  const { project, dir } = await ta.seed.repoProject({ namespace: group, path: 'proj', visibility: opts.visibility ?? 'private' });
  await ta.seed.user({ username: 'ada', email: 'Ada@Example.com', name: 'Ada' });
  const wt = workTree(t, dir);
  const sha: Record<string, string> = {};
  sha.c0 = wt.write('README.md', '# proj\n').commit('Initial commit', { time: T0 });
  wt.tag('v1.0.0');
  if (opts.config !== null) sha.config = wt.write('.service/changelog_config.yml', opts.config ?? CONFIG).commit('Add changelog config', { time: T0 + 10 });
  sha.c1 = wt.write('a.txt', 'a\n').commit('Add feature A\n\nSome details.\n\nChangelog: added', { time: T0 + 20 });
  sha.c2 = wt.write('b.txt', 'b\n').commit('Fix bug B\n\nChangelog: fixed', { time: T0 + 30, author: BOB });
  sha.c3 = wt.write('c.txt', 'c\n').commit('Refactor without a trailer', { time: T0 + 40 });
  wt.tag('v1.1.0-rc1', 'release candidate');
  sha.c4 = wt.write('d.txt', 'd\n').commit('Lowercase trailer\n\nchangelog: added', { time: T0 + 50 });
  sha.c5 = wt.write('e.txt', 'e\n').commit('Add feature C\n\nChangelog: added', { time: T0 + 60 });
  sha.c6 = wt.rm('e.txt').commit(`Revert "Add feature C"\n\nThis reverts commit ${sha.c5}.\n\nChangelog: removed`, { time: T0 + 70 });
  sha.c7 = wt.write('f.txt', 'f\n').commit('Add other thing\n\nChangelog: other', { time: T0 + 80 });
  wt.push();
  const full = `${group.full_path}/proj`;
  return {
    ta,
    dir,
    wt,
    full,
    base: `/api/v4/projects/${project.id}/repository/changelog`,
    url: `/api/v4/projects/${encodeURIComponent(full)}/repository/changelog`,
    sha,
  };
}

/** The section the fixture's range v1.0.0..main gives for 1.1.0 with CONFIG and the default template. */
function section(f: Fixture, version = '1.1.0', date = '2021-01-05'): string {
  const ref = (k: string) => `${f.full}@${f.sha[k]}`;
  return (
    `## ${version} (${date})\n\n` +
    `### Features (1 change)\n\n- [Add feature A](${ref('c1')})\n\n` +
    `### Bug fixes (1 change)\n\n- [Fix bug B](${ref('c2')})\n\n` +
    `### Removals (1 change)\n\n- [Revert "Add feature C"](${ref('c6')})\n\n` +
    `### other (1 change)\n\n- [Add other thing](${ref('c7')})\n`
  );
}

async function get(f: Fixture, query: string, headers: Record<string, string> = f.ta.root) {
  return f.ta.app.inject({ method: 'GET', url: `${f.base}?${query}`, headers });
}

async function post(f: Fixture, payload: Record<string, unknown>, headers: Record<string, string> = f.ta.root) {
  return f.ta.app.inject({ method: 'POST', url: f.base, headers, payload });
}

async function maxJobId(c: TestApp['c']): Promise<number> {
  const r = await c.db.kysely
    .selectFrom('jobs')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(r?.id ?? 0);
}

const head = (dir: string, ref = 'main') => bareGit(dir, ['rev-parse', `refs/heads/${ref}`]).trim();

test('GET: notes of the trailers since the previous stable tag, categories in config order, reverts dropped', async (t) => {
  const f = await setup(t);
  const res = await get(f, 'version=1.1.0&date=2021-01-05');
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json(), { notes: section(f) });
  // by path, and "v" versions are accepted as they are
  const v = await f.ta.app.inject({ method: 'GET', url: `${f.url}?version=v1.1.0&date=2021-01-05T23:30:00-05:00`, headers: f.ta.root });
  assert.deepEqual(v.json(), { notes: section(f, 'v1.1.0') });
});

test('GET: from (exclusive), to (inclusive), trailer (case-sensitive), default date today', async (t) => {
  const f = await setup(t);
  const ref = (k: string) => `${f.full}@${f.sha[k]}`;
  let res = await get(f, `version=2.0.0&from=${f.sha.c1}&to=${f.sha.c2}&date=2021-02-03`);
  assert.deepEqual(res.json(), { notes: `## 2.0.0 (2021-02-03)\n\n### Bug fixes (1 change)\n\n- [Fix bug B](${ref('c2')})\n` });
  // branch and tag names work as range ends
  res = await get(f, `version=2.0.0&from=v1.1.0-rc1&to=main&trailer=changelog&date=2021-02-03`);
  assert.deepEqual(res.json(), { notes: `## 2.0.0 (2021-02-03)\n\n### Features (1 change)\n\n- [Lowercase trailer](${ref('c4')})\n` });
  // nothing in the range
  res = await get(f, `version=2.0.0&from=${f.sha.c2}&to=${f.sha.c3}&date=2021-02-03`);
  assert.deepEqual(res.json(), { notes: '## 2.0.0 (2021-02-03)\n\nNo changes.\n' });
  res = await get(f, `version=2.0.0&from=${f.sha.c7}&to=${f.sha.c7}&date=2021-02-03`);
  assert.deepEqual(res.json(), { notes: '## 2.0.0 (2021-02-03)\n\nNo changes.\n' });
  const before = todayDate();
  res = await get(f, `version=2.0.0&from=${f.sha.c2}&to=${f.sha.c3}`);
  const after = todayDate();
  assert.ok(
    [before, after].some((d) => res.json().notes === `## 2.0.0 (${d})\n\nNo changes.\n`),
    res.body,
  );
});

test('GET: the previous tag is the highest stable version below the requested one', async (t) => {
  const f = await setup(t);
  const ref = (k: string) => `${f.full}@${f.sha[k]}`;
  // v1.2.0 (annotated) at c2, 3.0.0 at c3: 1.5.0 starts after c2; a higher tag is not a start
  f.wt.git(['tag', '-a', 'v1.2.0', '-m', 'r', f.sha.c2], { GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x', GIT_COMMITTER_DATE: `@${T0} +0000` });
  f.wt.git(['tag', '3.0.0', f.sha.c3]);
  f.wt.git(['tag', 'not-a-version', f.sha.c6]);
  f.wt.push('--tags');
  let res = await get(f, 'version=1.5.0&date=2021-01-05');
  assert.deepEqual(res.json(), {
    notes:
      `## 1.5.0 (2021-01-05)\n\n### Removals (1 change)\n\n- [Revert "Add feature C"](${ref('c6')})\n\n` +
      `### other (1 change)\n\n- [Add other thing](${ref('c7')})\n`,
  });
  // the requested version itself is not its own start; pre-releases of the requested version neither
  res = await get(f, 'version=1.2.0&date=2021-01-05');
  assert.deepEqual(res.json(), { notes: section(f, '1.2.0') });
  res = await get(f, 'version=1.2.0-rc2&date=2021-01-05');
  assert.deepEqual(res.json(), { notes: section(f, '1.2.0-rc2') });
  // no version below 1.0.0
  res = await get(f, 'version=0.9.0');
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), {
    message: 'Failed to generate the changelog: The commit start range is unspecified, and no previous tag could be found to use instead',
  });
  // a custom tag format
  f.wt
    .write('.service/changelog_config.yml', `${CONFIG}tag_regex: '^release-(?P<major>\\d+)\\.(?P<minor>\\d+)\\.(?P<patch>\\d+)(?:-(?P<pre>\\w+))?$'\n`)
    .commit('Custom tags', { time: T0 + 90 });
  f.wt.git(['tag', 'release-1.0.0', f.sha.c5]);
  f.wt.git(['tag', 'release-1.1.0-beta', f.sha.c6]);
  f.wt.push();
  res = await get(f, 'version=1.1.0&date=2021-01-05');
  assert.deepEqual(res.json(), {
    notes: `## 1.1.0 (2021-01-05)\n\n### Removals (1 change)\n\n- [Revert "Add feature C"](${ref('c6')})\n\n### other (1 change)\n\n- [Add other thing](${ref('c7')})\n`,
  });
});

test('GET: authors are Hearth users by e-mail; include_groups members are credited', async (t) => {
  const f = await setup(t);
  const { seed } = f.ta;
  const ref = (k: string) => `${f.full}@${f.sha[k]}`;
  const team = await seed.group({ path: `team-${Math.random().toString(36).slice(2, 7)}`, visibility: 'private' });
  const ada = await f.ta.c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'ada').executeTakeFirstOrThrow();
  await seed.member({ group: team }, ada, 30);
  // an unconfirmed e-mail is nobody's
  const bob = await seed.user({ username: 'bob', email: BOB.email });
  await f.ta.c.db.kysely.updateTable('users').set({ confirmed_at: null }).where('id', '=', bob.id).execute();
  await seed.member({ group: team }, bob, 30);
  const template = `{% each categories %}{% each entries %}{{ title }}|{{ author.reference }}|{{ author.contributor }}|{{ author.credit }}|{{ commit.trailers.Changelog }}\n{% end %}{% end %}`;
  f.wt
    .write('.service/changelog_config.yml', `include_groups:\n  - ${team.full_path}\n  - missing/group\ntemplate: ${JSON.stringify(template)}\n`)
    .commit('Credit the team', { time: T0 + 90 });
  f.wt.push();
  const res = await get(f, 'version=1.1.0&date=2021-01-05');
  assert.deepEqual(res.json(), {
    notes:
      '## 1.1.0 (2021-01-05)\n\nAdd other thing|@ada|false|true|other\nRevert "Add feature C"|@ada|false|true|removed\nFix bug B||||fixed\nAdd feature A|@ada|false|true|added\n',
  });
  // with the default template, the credit shows as "by @ada"
  f.wt.write('.service/changelog_config.yml', `include_groups: ${team.full_path}\n`).commit('Default template', { time: T0 + 100 });
  f.wt.push();
  const credited = await get(f, `version=2.0.0&from=${f.sha.c0}&to=${f.sha.c1}&date=2021-01-05`);
  assert.deepEqual(credited.json(), { notes: `## 2.0.0 (2021-01-05)\n\n### added (1 change)\n\n- [Add feature A](${ref('c1')}) by @ada\n` });
  // a caller who cannot read the group credits no one
  const viewer = await seed.user();
  const project = await f.ta.c.db.kysely.selectFrom('projects').selectAll().where('path', '=', 'proj').executeTakeFirstOrThrow();
  await seed.member({ project }, viewer, 20);
  const { headers } = await seed.token(viewer);
  const uncredited = await get(f, `version=2.0.0&from=${f.sha.c0}&to=${f.sha.c1}&date=2021-01-05`, headers);
  assert.deepEqual(uncredited.json(), { notes: `## 2.0.0 (2021-01-05)\n\n### added (1 change)\n\n- [Add feature A](${ref('c1')})\n` });
});

test('GET: date_format, custom template, custom config_file, no config file', async (t) => {
  const f = await setup(t, { config: null });
  const ref = (k: string) => `${f.full}@${f.sha[k]}`;
  // without a config: categories are the raw trailer values in commit order (newest first)
  let res = await get(f, 'version=1.1.0&date=2021-01-05');
  assert.deepEqual(res.json(), {
    notes:
      `## 1.1.0 (2021-01-05)\n\n### other (1 change)\n\n- [Add other thing](${ref('c7')})\n\n` +
      `### removed (1 change)\n\n- [Revert "Add feature C"](${ref('c6')})\n\n` +
      `### fixed (1 change)\n\n- [Fix bug B](${ref('c2')})\n\n` +
      `### added (1 change)\n\n- [Add feature A](${ref('c1')})\n`,
  });
  f.wt
    .write(
      'ci/changelog.yml',
      [
        "date_format: '%B %-d, %Y (%a) %H:%M %z'",
        'categories:',
        '  added: New',
        '  deprecated: Never used',
        'template: |',
        '  {% each categories %}',
        '  * {{ title }}: {{ count }}{% if single_change %} (single){% end %}:',
        '  {% each entries %}',
        '    - {{ title }} \\',
        '  [{{ commit.reference }}]',
        '  {% end %}',
        '  {% end %}',
        '',
      ].join('\n'),
    )
    .commit('Config elsewhere', { time: T0 + 90 });
  f.wt.push();
  res = await get(f, `version=1.1.0&date=2021-03-04T05:06:07%2B02:00&config_file=ci/changelog.yml&from=${f.sha.c0}&to=${f.sha.c2}`);
  assert.deepEqual(res.json(), {
    notes: `## 1.1.0 (March 4, 2021 (Thu) 05:06 +0200)\n\n* New: 1 (single):\n  - Add feature A [${ref('c1')}]\n* fixed: 1 (single):\n  - Fix bug B [${ref('c2')}]\n`,
  });
  // a config file that is missing, or not a file, means the defaults
  res = await get(f, `version=1.1.0&date=2021-01-05&config_file=nope.yml&from=${f.sha.c1}&to=${f.sha.c2}`);
  assert.deepEqual(res.json(), { notes: `## 1.1.0 (2021-01-05)\n\n### fixed (1 change)\n\n- [Fix bug B](${ref('c2')})\n` });
  res = await get(f, `version=1.1.0&date=2021-01-05&config_file=ci&from=${f.sha.c1}&to=${f.sha.c2}`);
  assert.equal(res.statusCode, 200);
  res = await get(f, `version=1.1.0&date=2021-01-05&config_file=../../etc/passwd&from=${f.sha.c1}&to=${f.sha.c2}`);
  assert.equal(res.statusCode, 200);
});

test('GET: parameter errors are Grape 400s', async (t) => {
  const f = await setup(t);
  const cases: [string, string][] = [
    ['', 'version is missing'],
    ['version=1.0', 'version is invalid'],
    ['version=', 'version is invalid'],
    ['version=1.0.0&date=yesterday', 'date is invalid'],
    ['version=1.0.0&date=2021-02-30', 'date is invalid'],
    ['version=abc&date=nope', 'version is invalid, date is invalid'],
    ['date=nope', 'version is missing, date is invalid'],
    ['version=1.0.0&from[]=a', 'from is invalid'],
  ];
  for (const [q, error] of cases) {
    const res = await get(f, q);
    assert.equal(res.statusCode, 400, q);
    assert.deepEqual(res.json(), { error }, q);
  }
});

test('GET: generation errors are 422 with GitLab messages', async (t) => {
  const f = await setup(t);
  const fail = (message: string) => ({ message: `Failed to generate the changelog: ${message}` });
  const expect422 = async (query: string, message: string) => {
    const res = await get(f, query);
    assert.equal(res.statusCode, 422, `${query}: ${res.body}`);
    assert.deepEqual(res.json(), fail(message), query);
  };
  const invalidRange = 'Invalid or not found commit value in the given range';
  await expect422(`version=2.0.0&from=${'1'.repeat(40)}`, invalidRange);
  await expect422(`version=2.0.0&from=${f.sha.c1}&to=nope`, invalidRange);
  await expect422('version=2.0.0&from=--all', invalidRange);
  await expect422(`version=2.0.0&from=${f.sha.c1}&to=main:README.md`, invalidRange);
  await expect422(`version=2.0.0&from=${f.sha.c1}&to=`, invalidRange);
  // passes the API's unanchored semver check, not the tag finder's
  await expect422('version=release-1.2.3-final!', 'The requested `version` attribute format is not correct. Use formats such as `1.0.0` or `v1.0.0`.');

  const setConfig = (content: string, file = '.service/changelog_config.yml') => {
    f.wt.write(file, content).commit(`config ${content.length}`);
    f.wt.push();
  };
  setConfig('categories: [added: Added\n');
  await expect422('version=2.0.0', '.service/changelog_config.yml does not contain valid YAML');
  setConfig('a: &x 1\nb: *x\n', 'other.yml');
  await expect422('version=2.0.0&config_file=other.yml', 'other.yml does not contain valid YAML');
  setConfig('categories:\n  - added\n');
  await expect422('version=2.0.0', 'The "categories" configuration key must be a Hash');
  setConfig('categories: Added\n');
  await expect422('version=2.0.0', 'The "categories" configuration key must be a Hash');
  setConfig('template: "{% if categories %}oops"\n');
  await expect422('version=2.0.0', 'Failed to parse the template: Extra input after last repetition at line 1 char 1.');
  setConfig('template: "ok\\n{% each categories %}{{ title }"\n');
  await expect422('version=2.0.0', 'Failed to parse the template: Extra input after last repetition at line 2 char 1.');
  // categories → a category's [key, value] pairs → their elements → the entries list → an entry: five loops
  setConfig('template: "{% each categories %}{% each it %}{% each it %}{% each it %}{% each it %}x{% end %}{% end %}{% end %}{% end %}{% end %}"\n');
  await expect422('version=2.0.0', 'You can only nest up to 4 loops');
  // a fifth loop over something that is not a collection never runs
  setConfig('template: "{% each categories %}{% each it %}{% each it %}{% each it %}{% each title %}x{% end %}{% end %}{% end %}{% end %}{% end %}"\n');
  assert.equal((await get(f, 'version=2.0.0')).statusCode, 200);
  setConfig("tag_regex: '^v(?P<major>\\d+'\n");
  const res = await get(f, 'version=2.0.0');
  assert.equal(res.statusCode, 422);
  assert.match(res.json().message, /^Failed to generate the changelog: The regular expression to use for finding the previous tag for a version is invalid: /);
  // with from given, the tag regex is not used
  assert.equal((await get(f, `version=2.0.0&from=${f.sha.c1}`)).statusCode, 200);
});

test('GET: no more than 15000 commits in the range', async (t) => {
  const f = await setup(t);
  const lines: string[] = [];
  for (let i = 0; i < 15_001; i++) {
    lines.push('commit refs/heads/big', `committer Bulk <bulk@example.com> ${T0 + i} +0000`, 'data 2', 'x', '');
    if (i === 0) lines.splice(lines.length - 1, 0, `from ${f.sha.c7}`);
  }
  execFileSync('git', ['--git-dir', f.dir, 'fast-import', '--quiet'], { input: lines.join('\n') + '\n', env: fixtureEnv() });
  fs.writeFileSync(path.join(f.dir, 'hearth-refs-stamp'), String(process.hrtime.bigint()));
  assert.equal(bareGit(f.dir, ['rev-list', '--count', `${f.sha.c7}..big`]).trim(), '15001');
  let res = await get(f, `version=2.0.0&from=${f.sha.c7}&to=big`);
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), { message: 'Failed to generate the changelog: The commits range exceeds 15000 elements.' });
  const c1 = bareGit(f.dir, ['rev-list', '--reverse', `${f.sha.c7}..big`]).split('\n')[0];
  res = await get(f, `version=2.0.0&from=${c1}&to=big&date=2021-01-05`);
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { notes: '## 2.0.0 (2021-01-05)\n\nNo changes.\n' });
});

test('GET: visibility and access', async (t) => {
  const f = await setup(t, { visibility: 'public' });
  const anon = await f.ta.app.inject({ method: 'GET', url: `${f.base}?version=1.1.0&date=2021-01-05` });
  assert.equal(anon.statusCode, 200);
  assert.deepEqual(anon.json(), { notes: section(f) });
  const priv = await setup(t);
  const hidden = await priv.ta.app.inject({ method: 'GET', url: `${priv.base}?version=1.1.0` });
  assert.equal(hidden.statusCode, 404);
  assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });
});

test('POST: commits the section into CHANGELOG.md, with push events; the same version again commits nothing', async (t) => {
  const f = await setup(t);
  const { c } = f.ta;
  const root = await c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
  const before = head(f.dir);
  const jobs = await maxJobId(c);
  const res = await post(f, { version: '1.1.0', date: '2021-01-05' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '');
  assert.equal(res.headers['content-type'], undefined);
  const after = head(f.dir);
  assert.notEqual(after, before);
  assert.equal(bareGit(f.dir, ['rev-parse', `${after}^`]).trim(), before);
  assert.equal(bareGit(f.dir, ['show', 'main:CHANGELOG.md']), section(f));
  assert.equal(
    bareGit(f.dir, ['log', '-1', '--format=%an <%ae>%n%cn <%ce>%n%B', 'main']),
    `${root.name} <${root.email}>\n${root.name} <${root.email}>\nAdd changelog for version 1.1.0\n\n`,
  );
  assert.equal(bareGit(f.dir, ['diff-tree', '--no-commit-id', '--name-status', '-r', 'main']), 'A\tCHANGELOG.md\n');
  const events = await eventsAfter(c, jobs);
  assert.deepEqual(
    events.map((e) => e.event_name),
    ['push', 'repository_update'],
  );
  assert.equal(events[0].before, before);
  assert.equal(events[0].after, after);
  assert.equal(events[0].ref, 'refs/heads/main');
  assert.equal(events[0].total_commits_count, 1);
  assert.equal(events[0].user_username, 'root');
  assert.deepEqual(events[1].changes, [{ before, after, ref: 'refs/heads/main' }]);
  const jobsAfter = await maxJobId(c);

  // GET now has the same section; POST of the same version leaves everything as it is
  const again = await post(f, { version: '1.1.0', date: '2022-02-02' });
  assert.equal(again.statusCode, 200);
  assert.equal(again.body, '');
  assert.equal(head(f.dir), after);
  assert.deepEqual(await eventsAfter(c, jobsAfter), []);
});

test('POST: sections go before the next lower version, or at the end', async (t) => {
  const f = await setup(t);
  const ref = (k: string) => `${f.full}@${f.sha[k]}`;
  f.wt.write('CHANGELOG.md', '# Changelog\n\n## 1.0.0 (2020-01-01)\n\n- first\n').commit('Start a changelog', { time: T0 + 85 });
  f.wt.push();
  const prefix = '# Changelog\n\n';
  const v100 = '## 1.0.0 (2020-01-01)\n\n- first\n';
  let res = await post(f, { version: '1.1.0', date: '2021-01-05', from: f.sha.c1, to: f.sha.c2 });
  assert.equal(res.statusCode, 200);
  const v110 = `## 1.1.0 (2021-01-05)\n\n### Bug fixes (1 change)\n\n- [Fix bug B](${ref('c2')})\n\n`;
  assert.equal(bareGit(f.dir, ['show', 'main:CHANGELOG.md']), prefix + v110 + v100);
  // higher than all: before the highest header
  res = await post(f, { version: '2.0.0', date: '2021-02-01', from: f.sha.c6, to: f.sha.c7 });
  const v200 = `## 2.0.0 (2021-02-01)\n\n### other (1 change)\n\n- [Add other thing](${ref('c7')})\n\n`;
  assert.equal(bareGit(f.dir, ['show', 'main:CHANGELOG.md']), prefix + v200 + v110 + v100);
  // between two versions
  res = await post(f, { version: '1.5.0', date: '2021-01-15', from: f.sha.c5, to: f.sha.c6 });
  const v150 = `## 1.5.0 (2021-01-15)\n\n### Removals (1 change)\n\n- [Revert "Add feature C"](${ref('c6')})\n\n`;
  assert.equal(bareGit(f.dir, ['show', 'main:CHANGELOG.md']), prefix + v200 + v150 + v110 + v100);
  // lower than all: appended after an empty line
  res = await post(f, { version: '0.1.0', date: '2019-01-01', from: f.sha.c2, to: f.sha.c3 });
  assert.equal(res.statusCode, 200);
  assert.equal(bareGit(f.dir, ['show', 'main:CHANGELOG.md']), prefix + v200 + v150 + v110 + v100 + '\n## 0.1.0 (2019-01-01)\n\nNo changes.\n');
  assert.equal(bareGit(f.dir, ['rev-list', '--count', `${f.sha.c7}..main`]).trim(), '5');
});

test('POST: branch, file, message, to; a missing branch; concurrent releases', async (t) => {
  const f = await setup(t);
  const ref = (k: string) => `${f.full}@${f.sha[k]}`;
  f.wt.checkout('release', true);
  const r1 = f.wt.write('r.txt', 'r\n').commit('Release fix\n\nChangelog: fixed', { time: T0 + 95 });
  f.wt.push();
  const mainBefore = head(f.dir);
  let res = await post(f, {
    version: '1.1.0',
    branch: 'release',
    file: 'docs/CHANGES.md',
    message: 'Release notes\n\nfor 1.1.0',
    date: '2021-01-05',
    from: f.sha.c7,
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(head(f.dir), mainBefore);
  assert.equal(bareGit(f.dir, ['show', 'release:docs/CHANGES.md']), `## 1.1.0 (2021-01-05)\n\n### Bug fixes (1 change)\n\n- [Release fix](${f.full}@${r1})\n`);
  assert.equal(bareGit(f.dir, ['log', '-1', '--format=%B', 'release']), 'Release notes\n\nfor 1.1.0\n\n');
  // `to` other than the branch
  res = await post(f, { version: '1.2.0', branch: 'release', file: 'docs/CHANGES.md', date: '2021-01-06', from: f.sha.c1, to: f.sha.c2 });
  assert.equal(res.statusCode, 200);
  assert.equal(
    bareGit(f.dir, ['show', 'release:docs/CHANGES.md']),
    `## 1.2.0 (2021-01-06)\n\n### Bug fixes (1 change)\n\n- [Fix bug B](${ref('c2')})\n\n## 1.1.0 (2021-01-05)\n\n### Bug fixes (1 change)\n\n- [Release fix](${f.full}@${r1})\n`,
  );
  // a branch that does not exist
  res = await post(f, { version: '1.1.0', branch: 'nope', from: f.sha.c1, to: f.sha.c2 });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: 'You can only create or edit files when you are on a branch' });
  res = await post(f, { version: '1.1.0', branch: 'nope', from: f.sha.c1 });
  assert.equal(res.statusCode, 422);
  assert.deepEqual(res.json(), { message: 'Failed to generate the changelog: Invalid or not found commit value in the given range' });
  // a path that is a directory, a path out of the tree
  res = await post(f, { version: '1.3.0', file: 'docs', branch: 'release', from: f.sha.c1 });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { message: 'A directory with this name already exists' });
  for (const file of ['../x.md', '/abs.md', '', 'a/./b.md']) {
    res = await post(f, { version: '1.3.0', file, from: f.sha.c1 });
    assert.equal(res.statusCode, 400, file);
    assert.deepEqual(res.json(), { error: 'file is invalid' }, file);
  }
  // two releases at once: both sections end up in the file (the loser of the race retries)
  const [a, b] = await Promise.all([
    post(f, { version: '3.0.0', date: '2021-03-01', from: f.sha.c1, to: f.sha.c2 }),
    post(f, { version: '3.1.0', date: '2021-03-02', from: f.sha.c6, to: f.sha.c7 }),
  ]);
  assert.deepEqual([a.statusCode, b.statusCode], [200, 200]);
  const file = bareGit(f.dir, ['show', 'main:CHANGELOG.md']);
  assert.equal(
    file,
    `## 3.1.0 (2021-03-02)\n\n### other (1 change)\n\n- [Add other thing](${ref('c7')})\n\n## 3.0.0 (2021-03-01)\n\n### Bug fixes (1 change)\n\n- [Fix bug B](${ref('c2')})\n`,
  );
  assert.equal(bareGit(f.dir, ['rev-list', '--count', `${mainBefore}..main`]).trim(), '2');
});

test('POST: permissions and parameter errors', async (t) => {
  const f = await setup(t);
  const { seed, c } = f.ta;
  const project = await c.db.kysely.selectFrom('projects').selectAll().where('path', '=', 'proj').executeTakeFirstOrThrow();
  const reporter = await seed.user();
  const developer = await seed.user();
  await seed.member({ project }, reporter, 20);
  await seed.member({ project }, developer, 30);
  const rep = await seed.token(reporter);
  const dev = await seed.token(developer);
  const before = head(f.dir);
  const forbidden = { message: '403 Forbidden - You are not allowed to commit a changelog on this branch' };

  let res = await post(f, { version: '1.1.0' }, rep.headers);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), forbidden);
  // main is protected (maintainers push)
  res = await post(f, { version: '1.1.0' }, dev.headers);
  assert.equal(res.statusCode, 403);
  assert.deepEqual(res.json(), forbidden);
  assert.equal(head(f.dir), before);
  // …other branches are not
  f.wt.checkout('dev', true);
  f.wt.push();
  res = await post(f, { version: '1.1.0', branch: 'dev', date: '2021-01-05' }, dev.headers);
  assert.equal(res.statusCode, 200);
  assert.equal(bareGit(f.dir, ['show', 'dev:CHANGELOG.md']), section(f));
  assert.equal(bareGit(f.dir, ['log', '-1', '--format=%ae', 'dev']).trim(), developer.email);

  res = await f.ta.app.inject({ method: 'POST', url: f.base, payload: { version: '1.1.0' } });
  assert.equal(res.statusCode, 401);
  assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  const readOnly = await seed.token(developer, { scopes: ['read_api'] });
  res = await post(f, { version: '1.1.0', branch: 'dev' }, readOnly.headers);
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().error, 'insufficient_scope');

  // Grape validation before the permission check; query parameters count as well
  res = await post(f, {}, rep.headers);
  assert.equal(res.statusCode, 400);
  assert.deepEqual(res.json(), { error: 'version is missing' });
  res = await f.ta.app.inject({ method: 'POST', url: `${f.base}?version=x&date=soon`, headers: f.ta.root });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'version is invalid, date is invalid' }]);
  res = await post(f, { version: '1.1.0', message: ['a'], branch: { a: 1 } });
  assert.deepEqual([res.statusCode, res.json()], [400, { error: 'branch is invalid, message is invalid' }]);
  // generation errors of a POST
  res = await post(f, { version: '0.0.1' });
  assert.deepEqual(
    [res.statusCode, res.json()],
    [422, { message: 'Failed to generate the changelog: The commit start range is unspecified, and no previous tag could be found to use instead' }],
  );
  assert.equal(head(f.dir), before);
});

test('POST: an archived project takes no changelog commit, not even from an administrator (push_code is prevented)', async (t) => {
  const f = await setup(t);
  const { c } = f.ta;
  const before = head(f.dir);
  const jobs = await maxJobId(c);
  await c.db.kysely.updateTable('projects').set({ archived: 1 }).where('path', '=', 'proj').execute();
  const res = await post(f, { version: '1.1.0', date: '2021-01-05' });
  assert.deepEqual([res.statusCode, res.json()], [403, { message: '403 Forbidden - You are not allowed to commit a changelog on this branch' }]);
  assert.equal(head(f.dir), before);
  assert.deepEqual(await eventsAfter(c, jobs), []);
  // the notes can still be read
  const notes = await get(f, 'version=1.1.0&date=2021-01-05');
  assert.equal(notes.statusCode, 200);
});
