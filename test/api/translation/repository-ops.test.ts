// Repository operations of translation components (reference §1.3): the local branch in the
// mirror (refs/heads/<branch>) ahead of the upstream (refs/remotes/origin/<branch>), commits of pending
// edits (one per author, the message template, the PO header), push into a project of this server as
// a push like any other, pull with fast-forward, rebase, merge and conflicts, reset, cleanup, file-sync,
// file-scan, the status, 423 while the lock is held, the order of checks and the worker's round.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { buildTestApp, ROOT_TOKEN, type TestApp } from '../../helpers/build-app.ts';
import { cloneUrl, startTestServer } from '../../helpers/server.ts';
import { bareGit, pushEvents } from '../../helpers/git.ts';
import { AS_ROOT, API, CS_PO, DE_PO, HOST, createComponent, createProject, getJson, poComponent, repoWith } from '../../helpers/translation.ts';

const REPO = '/api/components/hello/po/repository/';

function mirrorGit(ctx: TestApp, componentId: number, args: string[]): string {
  return bareGit(ctx.c.translation.vcs.mirrorDir(componentId), args).trim();
}

async function componentRow(ctx: TestApp) {
  return ctx.c.db.kysely.selectFrom('components').selectAll().where('slug', '=', 'po').executeTakeFirstOrThrow();
}

async function unitOf(ctx: TestApp, lang: string, source: string) {
  return ctx.c.db.kysely
    .selectFrom('units')
    .innerJoin('languages', 'languages.id', 'units.language_id')
    .selectAll('units')
    .where('languages.code', '=', lang)
    .where('units.source', '=', source)
    .executeTakeFirstOrThrow();
}

/** a pending edit as the unit edits leave it (target, state, pending, its author) */
async function pendingEdit(
  ctx: TestApp,
  lang: string,
  source: string,
  target: string,
  author: { name: string; email: string; id?: number | null },
  at = new Date().toISOString(),
) {
  const u = await unitOf(ctx, lang, source);
  await ctx.c.db.kysely
    .updateTable('units')
    .set({ target, state: 20, pending: 1, pending_author: `${author.name} <${author.email}>`, pending_author_id: author.id ?? null, last_updated: at })
    .where('id', '=', u.id)
    .execute();
  return u;
}

async function changes(ctx: TestApp, actions: number[]) {
  return ctx.c.db.kysely
    .selectFrom('translation_changes')
    .select(['action', 'target', 'user_id', 'author_id', 'translation_id'])
    .where('action', 'in', actions)
    .orderBy('id')
    .execute();
}

async function op(ctx: TestApp, operation: unknown, url = REPO, headers: Record<string, string> = AS_ROOT) {
  return ctx.app.inject({ method: 'POST', url, headers, payload: { operation } });
}

const HELLO = 'Hello, world!';

test('commitFiles: a commit on the local branch (translator as author, the server as committer), the rows follow; the upstream is untouched', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const component = await componentRow(ctx);
  const upstream = mirrorGit(ctx, component.id, ['rev-parse', 'refs/remotes/origin/main']);
  assert.equal(component.head, upstream);
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']), upstream);
  assert.equal(mirrorGit(ctx, component.id, ['symbolic-ref', 'HEAD']), 'refs/heads/main');

  const fr = DE_PO.replace('Language: de', 'Language: fr').replace('Hallo, Welt!', 'Bonjour, monde !');
  const sha = await ctx.c.translation.writes.repository.commitFiles(
    component,
    [
      { path: 'po/fr.po', content: Buffer.from(fr) },
      { path: 'po/de.po', content: null },
    ],
    { userId: null, name: 'Jane Translator', email: 'jane@example.com' },
    'Added translation using Hearth (French)\n\n',
  );
  assert.match(sha, /^[0-9a-f]{40}$/);
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']), sha);
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/remotes/origin/main']), upstream);
  assert.equal(
    mirrorGit(ctx, component.id, ['log', '-1', '--format=%an <%ae>|%cn <%ce>|%B', sha]),
    'Jane Translator <jane@example.com>|Hearth <noreply@hearth.test>|Added translation using Hearth (French)',
  );
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', `${sha}^`]), upstream);
  assert.equal(mirrorGit(ctx, component.id, ['show', `${sha}:po/fr.po`]), fr.trim());
  assert.equal(mirrorGit(ctx, component.id, ['ls-tree', '--name-only', `${sha}`, 'po/']), 'po/cs.po\npo/fr.po');
  // the rows: French is there, German gone, the head is the local head
  assert.equal((await componentRow(ctx)).head, sha);
  const langs = await ctx.c.db.kysely
    .selectFrom('translations')
    .innerJoin('languages', 'languages.id', 'translations.language_id')
    .select(['languages.code', 'translations.filename'])
    .where('translations.component_id', '=', component.id)
    .orderBy('languages.code')
    .execute();
  assert.deepEqual(langs, [
    { code: 'cs', filename: 'po/cs.po' },
    { code: 'en', filename: '' },
    { code: 'fr', filename: 'po/fr.po' },
  ]);
  assert.equal((await unitOf(ctx, 'fr', HELLO)).target, 'Bonjour, monde !');
  // nothing was pushed: the platform project is as it was
  assert.equal(bareGit(fixture.wt.git(['config', 'remote.origin.url']), ['rev-parse', 'main']).trim(), upstream);

  // the same bytes again: no commit
  assert.equal(
    await ctx.c.translation.writes.repository.commitFiles(
      await componentRow(ctx),
      [{ path: 'po/fr.po', content: Buffer.from(fr) }],
      { userId: null, name: 'J', email: 'j@x' },
      'again',
    ),
    sha,
  );
  // paths from callers never leave the tree
  for (const bad of ['../x.po', '/etc/passwd', 'po/../../x', '.git/config', '-x', 'po//x.po', 'a\\b']) {
    await assert.rejects(
      ctx.c.translation.writes.repository.commitFiles(
        await componentRow(ctx),
        [{ path: bad, content: Buffer.from('x') }],
        { userId: null, name: 'J', email: 'j@x' },
        'bad',
      ),
      (e: any) => e.status === 400,
      bad,
    );
  }
  // a file that does not parse: no commit stays, the rows are as they were
  await assert.rejects(
    ctx.c.translation.writes.repository.commitFiles(
      await componentRow(ctx),
      [{ path: 'po/it.po', content: Buffer.from('msgid "x"\nmsgstr "y\n') }],
      { userId: null, name: 'J', email: 'j@x' },
      'broken',
    ),
    (e: any) => e.status === 400,
  );
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']), sha);
  assert.equal((await componentRow(ctx)).head, sha);
});

test('commit: one commit per author and translation with the message template and PO header; rows committed; status ahead; translation-level commit', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const component = await componentRow(ctx);
  const upstream = component.head;
  const jane = await ctx.seed.user({ username: 'jane', name: 'Jane Doe', email: 'jane@example.com' });
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane Doe', email: 'jane@example.com', id: jane.id }, '2026-01-01T10:00:00.000Z');
  await pendingEdit(ctx, 'cs', HELLO, 'Nazdar, světe!', { name: 'Karel Novák', email: 'karel@example.com' }, '2026-01-01T10:01:00.000Z');
  await pendingEdit(ctx, 'de', 'Apple', 'Der Apfel', { name: 'Jane Doe', email: 'jane@example.com', id: jane.id }, '2026-01-01T10:02:00.000Z');

  const before = await getJson(ctx, `${API}/components/hello/po/repository/`.replace(API, '/api'));
  assert.equal(before.needs_commit, true);
  assert.deepEqual(before.pending_units, { total: 3, errors_skipped: 0, commit_policy_skipped: 0, eligible_for_commit: 3 });
  // a translation's own pending edits
  const deBefore = await getJson(ctx, '/api/translations/hello/po/de/repository/');
  assert.deepEqual([deBefore.needs_commit, deBefore.pending_units.total], [true, 1]);
  const enBefore = await getJson(ctx, '/api/translations/hello/po/en/repository/');
  assert.deepEqual([enBefore.needs_commit, enBefore.pending_units.total], [false, 0]);

  // the translation level commits that translation only
  const de = await op(ctx, 'commit', '/api/translations/hello/po/de/repository/');
  assert.equal(de.statusCode, 200, de.body);
  assert.deepEqual(de.json(), { result: true });
  const afterDe = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  assert.equal(mirrorGit(ctx, component.id, ['rev-list', '--count', `${upstream}..${afterDe}`]), '1');
  assert.equal((await unitOf(ctx, 'cs', 'Apple')).pending, 1);

  const res = await op(ctx, 'commit');
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { result: true });
  const head = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  const log = mirrorGit(ctx, component.id, ['log', '--format=%an <%ae>|%s', `${upstream}..${head}`]).split('\n');
  assert.deepEqual(log, [
    'Karel Novák <karel@example.com>|Translated using Hearth (Czech)',
    'Jane Doe <jane@example.com>|Translated using Hearth (Czech)',
    'Jane Doe <jane@example.com>|Translated using Hearth (German)',
  ]);
  const body = mirrorGit(ctx, component.id, ['log', '-1', '--format=%B', head]);
  // (the edits above went into the rows directly: the counters are the scan's, 2 of 4)
  assert.equal(
    body,
    'Translated using Hearth (Czech)\n\nCurrently translated at 50.0% (2 of 4 strings)\n\nTranslation: Hello/Po\nTranslate-URL: http://hearth.test/translate/hello/po/cs/',
  );
  // the file: the two msgstr changed, the header names the last translator, nothing else moved
  const cs = mirrorGit(ctx, component.id, ['show', `${head}:po/cs.po`]);
  const diff = mirrorGit(ctx, component.id, ['diff', '--unified=0', upstream, head, '--', 'po/cs.po'])
    .split('\n')
    .filter((l) => /^[-+][^-+]/.test(l));
  assert.deepEqual(
    diff.filter((l) => !/PO-Revision-Date|Last-Translator/.test(l)),
    ['-msgstr "Ahoj, světe!"', '+msgstr "Nazdar, světe!"', '-msgstr ""', '+msgstr "Jablko"'],
  );
  assert.match(cs, /"Last-Translator: Karel Novák <karel@example.com>\\n"/);
  assert.match(cs, /"PO-Revision-Date: \d{4}-\d\d-\d\d \d\d:\d\d\+0000\\n"/);
  // the objects made in memory are what git would have made: the repository checks strictly
  mirrorGit(ctx, component.id, ['fsck', '--strict', '--no-dangling', '--no-progress']);
  // rows: nothing pending, revisions and head follow the files
  const component2 = await componentRow(ctx);
  assert.equal(component2.head, head);
  const pending = await ctx.c.db.kysely.selectFrom('units').select('id').where('pending', '=', 1).execute();
  assert.deepEqual(pending, []);
  const csRow = await ctx.c.db.kysely.selectFrom('translations').select('revision').where('filename', '=', 'po/cs.po').executeTakeFirstOrThrow();
  assert.equal(csRow.revision, mirrorGit(ctx, component.id, ['rev-parse', `${head}:po/cs.po`]));
  assert.equal((await unitOf(ctx, 'cs', 'Apple')).pending_author, '');
  // change records: one per commit, target the commit, the translator as author
  const commits = await changes(ctx, [17]);
  assert.equal(commits.length, 3);
  assert.deepEqual(
    commits.map((c) => [c.author_id, c.user_id]),
    [
      [jane.id, 1],
      [jane.id, 1],
      [null, 1],
    ],
  );
  assert.deepEqual(
    commits.map((c) => c.target),
    mirrorGit(ctx, component.id, ['rev-list', '--reverse', `${upstream}..${head}`]).split('\n'),
  );
  // the status: ahead of the upstream by three
  const status = await getJson(ctx, REPO);
  assert.deepEqual(
    { ...status, remote_commit: status.remote_commit.revision, weblate_commit: status.weblate_commit.revision },
    {
      needs_commit: false,
      needs_merge: false,
      needs_push: true,
      url: `${API}/components/hello/po/repository/`,
      remote_commit: upstream,
      weblate_commit: head,
      status: `On branch main\nYour branch is ahead of 'origin/main' by 3 commits.\n  (use "git push" to publish your local commits)\n\nnothing to commit, working tree clean\n`,
      merge_failure: null,
      outgoing_commits: 3,
      missing_commits: 0,
      pending_units: { total: 0, errors_skipped: 0, commit_policy_skipped: 0, eligible_for_commit: 0 },
    },
  );
  assert.equal(status.weblate_commit.author, 'Karel Novák <karel@example.com>');
  assert.equal(status.weblate_commit.commit, 'Hearth <noreply@hearth.test>');
  // nothing pending: a commit is a no-op
  assert.deepEqual((await op(ctx, 'commit')).json(), { result: true });
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']), head);
});

test('push into a project of this server: the branch moves as a push (events), needs_push clears; a protected branch refuses a Developer (28)', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const bare = fixture.wt.git(['config', 'remote.origin.url']);
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane Doe', email: 'jane@example.com' });
  const eventsBefore = (await pushEvents(ctx.c)).length;
  const res = await op(ctx, 'push');
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { result: true });
  const component = await componentRow(ctx);
  const head = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), head);
  assert.match(bareGit(bare, ['show', 'main:po/cs.po']), /msgid "Apple"\nmsgstr "Jablko"/);
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/remotes/origin/main']), head);
  const events = (await pushEvents(ctx.c)).slice(eventsBefore);
  assert.deepEqual(
    events.map((e) => [e.event_name, e.after ?? e.changes?.[0]?.after, e.ref ?? e.refs?.[0]]),
    [
      ['push', head, 'refs/heads/main'],
      ['repository_update', head, 'refs/heads/main'],
    ],
  );
  const status = await getJson(ctx, REPO);
  assert.equal(status.needs_push, false);
  assert.equal(status.outgoing_commits, 0);
  assert.equal(status.status, "On branch main\nYour branch is up to date with 'origin/main'.\n\nnothing to commit, working tree clean\n");
  assert.deepEqual(await changes(ctx, [18]), [{ action: 18, target: head, user_id: 1, author_id: 1, translation_id: null }]);
  // nothing left to push: still true, no new record
  assert.deepEqual((await op(ctx, 'push')).json(), { result: true });
  assert.equal((await changes(ctx, [18])).length, 1);

  // a Developer of the forge project translates and commits, but main is protected: the push is refused
  const dev = await ctx.seed.user({ username: 'dev' });
  const source = await ctx.c.db.kysely.selectFrom('projects').selectAll().where('id', '=', component.platform_project_id!).executeTakeFirstOrThrow();
  await ctx.seed.member({ project: source }, dev, 30);
  const { headers } = await ctx.seed.token(dev);
  await pendingEdit(ctx, 'de', 'Apple', 'Der Apfel', { name: 'Dev', email: 'dev@example.com' });
  const asDev = { ...HOST, authorization: `Token ${headers['private-token']}` };
  const denied = await op(ctx, 'push', REPO, asDev);
  assert.equal(denied.statusCode, 403, denied.body);
  assert.deepEqual(denied.json(), { detail: 'You do not have permission to perform this action.' });
  const commit = await op(ctx, 'commit', REPO, asDev);
  assert.deepEqual(commit.json(), { result: true });
  // a Maintainer may push — unless the branch's protection lets no one push: then the push is refused (28)
  await ctx.c.db.kysely.updateTable('members').set({ access_level: 40 }).where('user_id', '=', dev.id).execute();
  const pushLevels = (level: number) =>
    ctx.c.db.kysely
      .updateTable('protected_ref_access_levels')
      .set({ access_level: level })
      .where('action', '=', 'push')
      .where(
        'protected_branch_id',
        'in',
        ctx.c.db.kysely.selectFrom('protected_branches').select('id').where('project_id', '=', source.id).where('name', '=', 'main'),
      )
      .execute();
  await pushLevels(0);
  const before = bareGit(bare, ['rev-parse', 'main']).trim();
  const refused = await op(ctx, 'push', REPO, asDev);
  assert.equal(refused.statusCode, 200);
  assert.equal(refused.json().result, false);
  assert.deepEqual(refused.json(), {
    result: false,
    detail: 'Could not push the repository: You are not allowed to push code to protected branches on this project.',
  });
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), before);
  assert.deepEqual(
    (await changes(ctx, [28])).map((c) => [c.target, c.user_id]),
    [[refused.json().detail, dev.id]],
  );
  assert.equal((await getJson(ctx, REPO)).merge_failure, refused.json().detail);
  await pushLevels(40);
  const pushed = await op(ctx, 'push', REPO, asDev);
  assert.deepEqual(pushed.json(), { result: true });
  assert.equal(bareGit(bare, ['rev-parse', 'main']).trim(), mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']));
  assert.equal((await getJson(ctx, REPO)).merge_failure, null);
});

test('pull: fast-forward (21, target the new revision, the committer as author), rebase of local commits, merge, conflicts (23/22, merge_failure)', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const ada = await ctx.seed.user({ username: 'ada', name: 'Ada Lovelace', email: 'ada@example.com' });
  let component = await componentRow(ctx);
  // upstream adds a string: fast-forward
  fixture.wt.write('po/cs.po', CS_PO + '\nmsgid "Pear"\nmsgstr "Hruška"\n').commit('Add pear');
  fixture.wt.push('main');
  const upstream1 = fixture.wt.git(['rev-parse', 'HEAD']);
  const missing = await getJson(ctx, REPO);
  assert.equal(missing.needs_merge, false); // not fetched yet: the status shows what was last fetched
  const res = await op(ctx, 'pull');
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { result: true });
  component = await componentRow(ctx);
  assert.equal(component.head, upstream1);
  assert.equal((await unitOf(ctx, 'cs', 'Pear')).target, 'Hruška');
  assert.deepEqual(await changes(ctx, [20, 21]), [{ action: 21, target: upstream1, user_id: 1, author_id: ada.id, translation_id: null }]);

  // a local commit and an upstream change elsewhere: rebased
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane', email: 'jane@example.com' });
  fixture.wt.write('po/de.po', DE_PO.replace('Hallo, Welt!', 'Hallo Welt!')).commit('German fix');
  fixture.wt.push('main');
  const upstream2 = fixture.wt.git(['rev-parse', 'HEAD']);
  assert.deepEqual((await op(ctx, 'pull')).json(), { result: true });
  component = await componentRow(ctx);
  const head2 = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  assert.equal(component.head, head2);
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', `${head2}^`]), upstream2);
  assert.equal(mirrorGit(ctx, component.id, ['log', '-1', '--format=%an|%cn', head2]), 'Jane|Hearth');
  assert.equal((await unitOf(ctx, 'cs', 'Apple')).target, 'Jablko');
  assert.equal((await unitOf(ctx, 'de', HELLO)).target, 'Hallo Welt!');
  // the rebase's record: the new local head, authored by the upstream commit's committer
  assert.deepEqual(
    (await changes(ctx, [21])).map((c) => [c.target, c.author_id, c.user_id]),
    [
      [upstream1, ada.id, 1],
      [head2, ada.id, 1],
    ],
  );
  // the pending edit was committed first, by whoever pulled
  assert.deepEqual(
    (await changes(ctx, [17])).map((c) => c.user_id),
    [1],
  );
  const status = await getJson(ctx, REPO);
  assert.equal(status.needs_push, true);
  assert.equal(status.outgoing_commits, 1);
  assert.equal(status.missing_commits, 0);

  // the same line changed upstream and locally: the rebase fails, nothing moves
  fixture.wt
    .write('po/cs.po', CS_PO.replace('msgstr ""\n\n#, c-format', 'msgstr "Jabko"\n\n#, c-format') + '\nmsgid "Pear"\nmsgstr "Hruška"\n')
    .commit('Czech apple');
  fixture.wt.push('main');
  const upstream3 = fixture.wt.git(['rev-parse', 'HEAD']);
  const failed = await op(ctx, 'pull');
  assert.equal(failed.statusCode, 200);
  const detail = 'Could not rebase local branch onto origin/main: conflict in po/cs.po';
  assert.deepEqual(failed.json(), { result: false, detail });
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']), head2);
  assert.equal((await componentRow(ctx)).head, head2);
  assert.deepEqual(
    (await changes(ctx, [22, 23])).map((c) => [c.action, c.target]),
    [[23, detail]],
  );
  const conflicted = await getJson(ctx, REPO);
  assert.equal(conflicted.merge_failure, detail);
  assert.equal(conflicted.needs_merge, true);
  assert.equal(conflicted.missing_commits, 1);
  assert.equal(conflicted.remote_commit.revision, upstream3);
  assert.equal(
    conflicted.status,
    `On branch main\nYour branch and 'origin/main' have diverged,\nand have 1 and 1 different commits each, respectively.\n  (use "git pull" to merge the remote branch into yours)\n\nnothing to commit, working tree clean\n`,
  );
  // merging fails the same way (22)
  assert.deepEqual((await op(ctx, 'pull-merge')).json(), { result: false, detail: 'Could not merge origin/main into the local branch: conflict in po/cs.po' });
  assert.deepEqual(
    (await changes(ctx, [22, 23])).map((c) => c.action),
    [23, 22],
  );

  // a reset drops the local commit; the upstream's Czech apple is what the rows say
  assert.deepEqual((await op(ctx, 'reset')).json(), { result: true });
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']), upstream3);
  assert.equal((await unitOf(ctx, 'cs', 'Apple')).target, 'Jabko');
  assert.deepEqual(
    (await changes(ctx, [19])).map((c) => c.target),
    [upstream3],
  );
  assert.equal((await getJson(ctx, REPO)).merge_failure, null);

  // a merge of diverged histories (pull-merge): a merge commit with both parents (20)
  await pendingEdit(ctx, 'de', 'Apple', 'Der Apfel', { name: 'Jane', email: 'jane@example.com' });
  assert.deepEqual((await op(ctx, 'commit')).json(), { result: true });
  const local = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  fixture.wt.write('README.md', 'readme\n').commit('Readme');
  fixture.wt.push('main');
  const upstream4 = fixture.wt.git(['rev-parse', 'HEAD']);
  assert.deepEqual((await op(ctx, 'pull-merge')).json(), { result: true });
  const merged = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  assert.equal(mirrorGit(ctx, component.id, ['log', '-1', '--format=%P|%s', merged]), `${local} ${upstream4}|Merge branch 'main' into Hearth.`);
  assert.deepEqual(
    (await changes(ctx, [20])).map((c) => c.target),
    [merged],
  );
  assert.equal((await componentRow(ctx)).head, merged);
});

test('reset-keep: local commits dropped, the translations kept as pending edits; file-scan, file-sync and cleanup record their changes', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const component = await componentRow(ctx);
  const upstream = component.head;
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane', email: 'jane@example.com' });
  assert.deepEqual((await op(ctx, 'commit')).json(), { result: true });
  await pendingEdit(ctx, 'de', 'Apple', 'Der Apfel', { name: 'Karel', email: 'karel@example.com' });
  assert.deepEqual((await op(ctx, 'reset-keep')).json(), { result: true });
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']), upstream);
  const cs = await unitOf(ctx, 'cs', 'Apple');
  assert.deepEqual([cs.target, cs.pending, cs.state], ['Jablko', 1, 20]);
  const de = await unitOf(ctx, 'de', 'Apple');
  assert.deepEqual([de.target, de.pending, de.pending_author], ['Der Apfel', 1, 'Karel <karel@example.com>']);
  const t1 = await ctx.c.db.kysely.selectFrom('translations').select(['translated']).where('filename', '=', 'po/cs.po').executeTakeFirstOrThrow();
  assert.equal(t1.translated, 3);
  // a plain reset drops them
  assert.deepEqual((await op(ctx, 'reset')).json(), { result: true });
  const cs2 = await unitOf(ctx, 'cs', 'Apple');
  assert.deepEqual([cs2.target, cs2.pending, cs2.state], ['', 0, 0]);

  assert.deepEqual((await op(ctx, 'file-scan')).json(), { result: true });
  assert.deepEqual((await op(ctx, 'cleanup')).json(), { result: true });
  // file-sync: every file written again from the rows, a commit per translation by the caller; the
  // strings are as they were (only the PO headers name the caller now)
  assert.deepEqual((await op(ctx, 'file-sync')).json(), { result: true });
  const root = await ctx.c.db.kysely.selectFrom('users').select(['name', 'email']).where('username', '=', 'root').executeTakeFirstOrThrow();
  const synced = mirrorGit(ctx, component.id, ['log', '--format=%an <%ae>|%s', `${upstream}..refs/heads/main`]).split('\n');
  assert.deepEqual(synced, [`${root.name} <${root.email}>|Translated using Hearth (German)`, `${root.name} <${root.email}>|Translated using Hearth (Czech)`]);
  const diff = mirrorGit(ctx, component.id, ['diff', '--unified=0', upstream, 'refs/heads/main'])
    .split('\n')
    .filter((l) => /^[-+][^-+]/.test(l) && !/PO-Revision-Date|Last-Translator/.test(l));
  assert.deepEqual(diff, []);
  assert.deepEqual(await ctx.c.db.kysely.selectFrom('units').select('id').where('pending', '=', 1).execute(), []);
  assert.deepEqual(
    (await changes(ctx, [83, 84, 88])).map((c) => [c.action, c.target]),
    [
      [84, upstream],
      [88, ''],
      [83, mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main'])],
    ],
  );
});

test('POST repository/: the operation is validated before the permission (400, then 401/403), 423 while the lock is held, project level acts on every component', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const stranger = await ctx.seed.user({ username: 'stranger' });
  const { headers } = await ctx.seed.token(stranger);
  const asStranger = { ...HOST, authorization: `Token ${headers['private-token']}` };
  for (const [payload, msg] of [
    [{ operation: 'invalid' }, '"invalid" is not a valid choice.'],
    [{ operation: 7 }, '"7" is not a valid choice.'],
    [{}, 'This field is required.'],
  ] as const) {
    for (const h of [AS_ROOT, asStranger]) {
      const res = await ctx.app.inject({ method: 'POST', url: REPO, headers: h, payload });
      assert.equal(res.statusCode, 400, res.body);
      assert.deepEqual(res.json(), { operation: [msg] });
    }
  }
  // anonymous writes stop at DRF's permission class, before the body and the lookup
  for (const [operation, url] of [
    ['commit', REPO],
    ['invalid', REPO],
    ['commit', '/api/components/hello/nope/repository/'],
  ]) {
    const anon = await op(ctx, operation, url, HOST);
    assert.equal(anon.statusCode, 401);
    assert.equal(anon.headers['www-authenticate'], 'Token');
    assert.deepEqual(anon.json(), { detail: 'Authentication credentials were not provided.' });
  }
  const denied = await op(ctx, 'pull', REPO, asStranger);
  assert.equal(denied.statusCode, 403);
  assert.deepEqual(denied.json(), { detail: 'You do not have permission to perform this action.' });
  // reading the status: the view's PermissionDenied, 403 for anonymous callers too; 404 first
  for (const h of [asStranger, HOST]) {
    const res = await ctx.app.inject({ method: 'GET', url: REPO, headers: h });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { detail: 'You do not have permission to perform this action.' });
  }
  assert.equal((await ctx.app.inject({ method: 'GET', url: '/api/components/hello/nope/repository/', headers: HOST })).statusCode, 404);
  assert.equal((await op(ctx, 'commit', '/api/components/hello/nope/repository/')).statusCode, 404);

  // the lock held by another operation
  const repository = ctx.c.translation.writes.repository;
  repository.lockTimeoutMs = 50;
  const component = await componentRow(ctx);
  let release!: () => void;
  const holding = repository.locked(component, () => new Promise<void>((r) => (release = r)));
  const locked = await op(ctx, 'commit');
  assert.equal(locked.statusCode, 423, locked.body);
  assert.deepEqual(locked.json(), {
    type: 'client_error',
    errors: [{ code: 'repository-locked', detail: 'Could not obtain the repository lock for hello/po to perform the operation.', attr: null }],
  });
  release();
  await holding;
  assert.deepEqual((await op(ctx, 'commit')).json(), { result: true });

  // project level: every component, the status sums them
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane', email: 'jane@example.com' });
  const project = await getJson(ctx, '/api/projects/hello/repository/');
  assert.deepEqual(project, {
    needs_commit: true,
    needs_merge: false,
    needs_push: false,
    url: `${API}/projects/hello/repository/`,
    remote_commit: null,
    weblate_commit: null,
    status: null,
    merge_failure: null,
    outgoing_commits: null,
    missing_commits: null,
    pending_units: { total: 1, errors_skipped: 0, commit_policy_skipped: 0, eligible_for_commit: 1 },
  });
  assert.deepEqual((await op(ctx, 'commit', '/api/projects/hello/repository/')).json(), { result: true });
  const after = await getJson(ctx, '/api/projects/hello/repository/');
  assert.deepEqual([after.needs_commit, after.needs_push], [false, true]);
  // the translation level shows its component's status at its own URL
  const tr = await getJson(ctx, '/api/translations/hello/po/cs/repository/');
  assert.equal(tr.url, `${API}/translations/hello/po/cs/repository/`);
  assert.equal(tr.outgoing_commits, 1);

  // another process (a worker) moves the branch while this one commits: update-ref's compare-and-swap
  // refuses, the answer is the lock's, nothing is recorded and the edit stays pending
  await pendingEdit(ctx, 'de', 'Apple', 'Der Apfel', { name: 'Jane', email: 'jane@example.com' });
  const files = ctx.c.translation.writes.files;
  const render = files.render.bind(files);
  const mirror = ctx.c.translation.vcs.mirrorDir(component.id);
  t.after(() => {
    files.render = render;
  });
  files.render = async (...args: Parameters<typeof render>) => {
    const out = await render(...args);
    const head = bareGit(mirror, ['rev-parse', 'refs/heads/main']).trim();
    const moved = bareGit(mirror, [
      '-c',
      'user.name=Worker',
      '-c',
      'user.email=worker@example.com',
      'commit-tree',
      '-p',
      head,
      '-m',
      'elsewhere',
      `${head}^{tree}`,
    ]).trim();
    bareGit(mirror, ['update-ref', 'refs/heads/main', moved]);
    return out;
  };
  const commitsBefore = (await changes(ctx, [17])).length;
  const raced = await op(ctx, 'commit');
  assert.equal(raced.statusCode, 423, raced.body);
  files.render = render;
  assert.equal((await unitOf(ctx, 'de', 'Apple')).pending, 1);
  assert.equal((await changes(ctx, [17])).length, commitsBefore);
  assert.deepEqual((await op(ctx, 'commit')).json(), { result: true });
  assert.equal((await unitOf(ctx, 'de', 'Apple')).pending, 0);
});

test('the worker commits pending edits older than commit_pending_age hours', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const component = await componentRow(ctx);
  const repository = ctx.c.translation.writes.repository;
  const hour = 3600_000;
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane', email: 'jane@example.com' }, new Date(Date.now() - 2 * hour).toISOString());
  assert.equal(await repository.commitDue({ force: true }), 0); // 24 hours by default
  await ctx.c.db.kysely.updateTable('components').set({ commit_pending_age: 1 }).where('id', '=', component.id).execute();
  // the worker's own calls look once a minute at most
  assert.equal(await repository.commitDue(), 0);
  assert.equal(await repository.commitDue({ force: true }), 1);
  assert.equal((await unitOf(ctx, 'cs', 'Apple')).pending, 0);
  assert.equal(mirrorGit(ctx, component.id, ['log', '-1', '--format=%an', 'refs/heads/main']), 'Jane');
  assert.equal(await repository.commitDue({ force: true }), 0);
  // the worker's round runs it: a due edit is committed without anyone asking
  await pendingEdit(ctx, 'de', 'Apple', 'Der Apfel', { name: 'Karel', email: 'karel@example.com' }, new Date(Date.now() - 2 * hour).toISOString());
  assert.equal(await repository.commitDue({ now: Date.now() + 120_000 }), 1);
  assert.equal((await unitOf(ctx, 'de', 'Apple')).pending, 0);
});

test('push to a URL: push and push_branch, failures recorded (28)', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const component = await componentRow(ctx);
  // an administrator may point `push` at a local path
  const target = execFileSync('mktemp', ['-d']).toString().trim();
  t.after(() => execFileSync('rm', ['-rf', target]));
  execFileSync('git', ['init', '--bare', '-q', target]);
  await ctx.c.db.kysely.updateTable('components').set({ push: target, push_branch: 'translations' }).where('id', '=', component.id).execute();
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane', email: 'jane@example.com' });
  assert.deepEqual((await op(ctx, 'push')).json(), { result: true });
  const head = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  assert.equal(bareGit(target, ['rev-parse', 'translations']).trim(), head);
  assert.deepEqual(
    (await changes(ctx, [18])).map((c) => c.target),
    [head],
  );
  // a push URL that does not answer
  await ctx.c.db.kysely.updateTable('components').set({ push: '/nonexistent/repo.git' }).where('id', '=', component.id).execute();
  const failed = await op(ctx, 'push');
  assert.equal(failed.json().result, false);
  assert.match(failed.json().detail, /^Could not push the repository: /);
  assert.deepEqual((await changes(ctx, [28])).length, 1);
});

// fixtures used only through helpers above
void createComponent;
void createProject;
void repoWith;

test('repository settings through the component API: push_branch, message templates, merge_style, commit_pending_age, push_on_commit (push after each commit)', async (t) => {
  const ctx = await buildTestApp(t);
  const { fixture } = await poComponent(t, ctx);
  const url = '/api/components/hello/po/';
  const bad = await ctx.app.inject({
    method: 'PATCH',
    url,
    headers: AS_ROOT,
    payload: { push_branch: '-x', merge_style: 'squash', commit_pending_age: 0, push_on_commit: 'maybe' },
  });
  assert.equal(bad.statusCode, 400, bad.body);
  assert.deepEqual(bad.json(), {
    push_branch: ['Enter a valid branch name.'],
    merge_style: ['"squash" is not a valid choice.'],
    commit_pending_age: ['Ensure this value is greater than or equal to 1.'],
    push_on_commit: ['Must be a valid boolean.'],
  });
  const ok = await ctx.app.inject({
    method: 'PATCH',
    url,
    headers: AS_ROOT,
    payload: {
      push_branch: 'weblate',
      merge_style: 'merge',
      commit_pending_age: 2,
      push_on_commit: true,
      commit_message: '{{ language_code }}: {{ component_name }} by {{ author }}',
    },
  });
  assert.equal(ok.statusCode, 200, ok.body);
  const row = await componentRow(ctx);
  assert.deepEqual(
    [row.push_branch, row.merge_style, row.commit_pending_age, row.push_on_commit, row.commit_message],
    ['weblate', 'merge', 2, 1, '{{ language_code }}: {{ component_name }} by {{ author }}'],
  );
  // push_on_commit: the commit goes on to the push branch of the project at once
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane', email: 'jane@example.com' });
  assert.deepEqual((await op(ctx, 'commit')).json(), { result: true });
  const head = mirrorGit(ctx, row.id, ['rev-parse', 'refs/heads/main']);
  const bare = fixture.wt.git(['config', 'remote.origin.url']);
  assert.equal(bareGit(bare, ['rev-parse', 'weblate']).trim(), head);
  assert.equal(mirrorGit(ctx, row.id, ['log', '-1', '--format=%B', head]), 'cs: Po by Jane <jane@example.com>');
  const status = await getJson(ctx, REPO);
  assert.deepEqual([status.needs_push, status.outgoing_commits], [false, 0]);
});

test('push to an http(s) URL goes through git held to the outbound rules: refused for a local address unless allowed; pushed over smart HTTP', async (t) => {
  const ctx = await startTestServer(t);
  const { fixture } = await poComponent(t, ctx);
  const component = await componentRow(ctx);
  const target = await ctx.seed.repoProject({ visibility: 'private' });
  const ns = await ctx.c.resolve.namespaceById(target.project.namespace_id);
  const pushUrl = cloneUrl(ctx.base, `${ns!.full_path}/${target.project.path}`, 'root', ROOT_TOKEN);
  await ctx.c.db.kysely.updateTable('components').set({ push: pushUrl }).where('id', '=', component.id).execute();
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane', email: 'jane@example.com' });
  const refused = await op(ctx, 'push');
  assert.equal(refused.json().result, false);
  assert.match(refused.json().detail, /^Could not push the repository: .*(local|not allowed)/i);
  assert.equal(bareGit(target.dir, ['for-each-ref']).trim(), '');
  const rules = await ctx.app.inject({
    method: 'PUT',
    url: '/api/v4/application/settings',
    headers: ctx.root,
    payload: { allow_local_requests_from_web_hooks_and_services: false, outbound_local_requests_whitelist: ['127.0.0.1'] },
  });
  assert.equal(rules.statusCode, 200, rules.body);
  const pushed = await op(ctx, 'push');
  assert.deepEqual(pushed.json(), { result: true });
  const head = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  assert.equal(bareGit(target.dir, ['rev-parse', 'main']).trim(), head);
  // the origin itself was not pushed to
  assert.notEqual(bareGit(fixture.wt.git(['config', 'remote.origin.url']), ['rev-parse', 'main']).trim(), head);
  // the component API never shows the credentials
  const shown = await getJson(ctx, '/api/components/hello/po/');
  assert.equal(shown.push.includes(ROOT_TOKEN), false);
});

test('a mirror that is gone: the status says what it can; the next operation fetches it again and commits the pending edits', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const component = await componentRow(ctx);
  const upstream = component.head;
  await pendingEdit(ctx, 'cs', 'Apple', 'Jablko', { name: 'Jane', email: 'jane@example.com' });
  const dir = ctx.c.translation.vcs.mirrorDir(component.id);
  fs.rmSync(dir, { recursive: true, force: true });
  ctx.c.repos.pool.drop(dir);
  const status = await getJson(ctx, REPO);
  assert.deepEqual(
    [status.needs_commit, status.needs_push, status.needs_merge, status.remote_commit, status.weblate_commit, status.outgoing_commits],
    [true, false, false, null, null, 0],
  );
  assert.deepEqual((await op(ctx, 'commit')).json(), { result: true });
  const head = mirrorGit(ctx, component.id, ['rev-parse', 'refs/heads/main']);
  assert.equal(mirrorGit(ctx, component.id, ['rev-parse', `${head}^`]), upstream);
  assert.match(mirrorGit(ctx, component.id, ['show', `${head}:po/cs.po`]), /msgid "Apple"\nmsgstr "Jablko"/);
  assert.equal((await getJson(ctx, REPO)).outgoing_commits, 1);
});
