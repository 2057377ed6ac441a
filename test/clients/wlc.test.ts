// The real Weblate client `wlc` against a running server (skipped where it is not installed:
// `apt-get install wlc`): lists, show, ls, stats, changes, lock status and downloads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestServer } from '../helpers/server.ts';
import { assertTool, skipWithout } from '../helpers/tools.ts';
import { ROOT_TOKEN } from '../helpers/build-app.ts';
import { CS_PO, DE_PO, repoWith } from '../helpers/translation.ts';

const available = spawnSync('wlc', ['--version'], { stdio: 'ignore' }).status === 0;

test('wlc: list-projects, list-components, list-translations, list-languages, show, ls, stats, changes, lock-status, download', {
  skip: skipWithout(available, 'wlc'),
}, async (t) => {
  assertTool(available, 'wlc');
  const ctx = await startTestServer(t, {}, { selfUrl: true });
  const { base } = ctx;
  const fixture = await repoWith(t, ctx, { 'po/cs.po': CS_PO, 'po/de.po': DE_PO });
  const auth = { authorization: `Token ${ROOT_TOKEN}`, 'content-type': 'application/json' };
  let res = await fetch(`${base}/api/projects/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'Hello', slug: 'hello', web: 'https://hello.example/' }),
  });
  assert.equal(res.status, 201);
  res = await fetch(`${base}/api/projects/hello/components/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'Po', slug: 'po', file_format: 'po', filemask: 'po/*.po', repo: `${base}/${fixture.fullPath}.git` }),
  });
  assert.equal(res.status, 201, await res.text());

  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-wlc-'));
  t.after(() => fs.rmSync(home, { recursive: true, force: true }));
  fs.mkdirSync(path.join(home, '.config'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'weblate'), `[weblate]\nurl = ${base}/api/\n\n[keys]\n${base}/api/ = ${ROOT_TOKEN}\n`);
  const wlc = async (...args: string[]) => {
    const r = await promisify(execFile)('wlc', args, { cwd: home, env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') } }).catch(
      (e) => e,
    );
    assert.equal(r.stderr ?? '', '', `wlc ${args.join(' ')}: ${r.stderr}\n${r.stdout}`);
    return String(r.stdout);
  };
  const outputs: Record<string, string> = {};
  for (const cmd of [
    ['list-projects'],
    ['list-components'],
    ['list-translations'],
    ['list-languages'],
    ['show', 'hello'],
    ['show', 'hello/po'],
    ['show', 'hello/po/cs'],
    ['ls', 'hello'],
    ['ls', 'hello/po'],
    ['stats', 'hello'],
    ['stats', 'hello/po'],
    ['stats', 'hello/po/cs'],
    ['changes', 'hello/po'],
    ['lock-status', 'hello/po'],
    ['repo', 'hello/po'],
    ['--format', 'json', 'stats', 'hello/po/cs'],
    ['--format', 'json', 'show', 'hello/po'],
  ]) {
    outputs[cmd.join(' ')] = await wlc(...cmd);
  }
  const has = (cmd: string, ...lines: string[]) => {
    for (const l of lines) assert.ok(outputs[cmd].split('\n').includes(l), `${cmd}: missing ${JSON.stringify(l)} in\n${outputs[cmd]}`);
  };
  has('list-projects', 'name: Hello', 'slug: hello', `url: ${base}/api/projects/hello/`, 'web: https://hello.example/');
  has('list-components', 'name: Po', 'project: hello', 'file_format: po', 'filemask: po/*.po', 'branch: main', `git_export: ${base}/git/hello/po/`);
  assert.equal(outputs['list-translations'].split('\n\n').filter(Boolean).length, 3);
  has('list-translations', 'language: cs', 'filename: po/cs.po', 'translated_percent: 50.0', 'fuzzy: 1');
  has('list-languages', 'code: cs', 'name: Czech');
  has('show hello', 'name: Hello', 'web: https://hello.example/');
  has('show hello/po', 'slug: po', 'vcs: git');
  has('show hello/po/cs', 'total: 4', 'translated: 2', 'total_words: 8', 'translated_words: 6', 'fuzzy_percent: 25.0', 'last_author: ');
  assert.equal(outputs['ls hello'], outputs['list-components']);
  assert.equal(outputs['ls hello/po'], outputs['list-translations']);
  has('stats hello', 'total: 12', 'translated: 10', 'translated_percent: 83.3', 'failing: 1', 'name: Hello');
  has('stats hello/po', 'code: en', 'code: cs', 'code: de', 'failing_percent: 25.0');
  has('stats hello/po/cs', 'code: cs', 'translated_percent: 50.0', 'total: 4');
  has('changes hello/po', 'action_name: Created component', 'action_name: New source string', 'target: Apple', 'translation: en');
  assert.equal(outputs['lock-status hello/po'], 'locked: False\n');
  has('repo hello/po', 'needs_commit: False', 'needs_push: False', `url: ${base}/api/components/hello/po/repository/`);
  const stats = JSON.parse(outputs['--format json stats hello/po/cs']);
  assert.deepEqual([stats.translated_percent, stats.total, stats.code], [50, 4, 'cs']);
  assert.equal(JSON.parse(outputs['--format json show hello/po']).project.slug, 'hello');
  const out = path.join(home, 'cs.po');
  await wlc('download', 'hello/po/cs', '--output', out);
  assert.equal(fs.readFileSync(out, 'utf8'), CS_PO);
});
