// Editing, pausing, resuming and deleting runners from the lists that show them: a project's CI/CD settings, a
// group's, the admin area's. Who may is the API's `/runners/:id` rule (a project runner: Maintainers of a project it
// serves; a group runner: the group's Owners; an instance runner: administrators; a runner serving several projects
// is deleted by administrators only); a runner the place's list does not show is the 404 page there; the form's
// attributes are PUT /runners/:id's, refused values are named in words and write nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { seedRunner } from '../helpers/ci.ts';
import { elementOf, mainOf, webGet, webPost, webSignIn } from '../helpers/web.ts';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const env = await buildTestApp(t);
  const { seed, c, app } = env;
  const mia = await seed.user({ username: 'mia' });
  await seed.user({ username: 'dev' });
  await seed.user({ username: 'otto' });
  const group = await seed.group({ path: 'grp', name: 'Grp', visibility: 'private' });
  const project = await seed.project({ namespace: group, path: 'app', visibility: 'private' });
  const other = await seed.project({ namespace: group, path: 'other', visibility: 'private' });
  await seed.member({ project }, mia, 40);
  await seed.member({ project }, (await c.users.byUsername('dev'))!, 30);
  const { runner: own } = await seedRunner(c, { projects: [project], description: 'own box', tag_list: ['linux'] });
  const { runner: shared } = await seedRunner(c, { description: 'shared box' });
  const { runner: elsewhere } = await seedRunner(c, { projects: [other], description: 'other box' });
  const row = (id: number) => c.db.kysely.selectFrom('ci_runners').selectAll().where('id', '=', id).executeTakeFirst();
  const s = {
    mia: await webSignIn(app, 'mia'),
    dev: await webSignIn(app, 'dev'),
    otto: await webSignIn(app, 'otto'),
    root: await webSignIn(app, 'root', 'root-password-1'),
  };
  return { ...env, group, project, other, own, shared, elsewhere, row, s };
}

test('a project runner: Edit from the CI/CD settings (every field), refused values named and nothing written, Pause, Resume, Delete', async (t) => {
  const { app, project, own, shared, elsewhere, row, s } = await setup(t);
  const settings = mainOf((await webGet(app, '/grp/app/-/settings/ci_cd', s.mia)).body);
  const table = elementOf(settings, '<table class="width-full ci-table mb-3"><caption class="sr-only">Runners available to this project</caption>');
  // the project's runner has its buttons, the instance's none (a Maintainer may not change it)
  assert.match(
    table,
    new RegExp(
      `<tr id="runner_${own.id}">.*<a class="btn btn-sm" href="/grp/app/-/runners/${own.id}/edit" aria-label="Edit runner #${own.id}">Edit</a><form method="post" action="/-/runners/${own.id}/pause" accept-charset="UTF-8"><input type="hidden" name="place" value="project:${project.id}"><button type="submit" class="btn btn-sm" aria-label="Pause runner #${own.id}">Pause</button></form><form method="post" action="/-/runners/${own.id}/delete"`,
    ),
  );
  assert.match(
    table,
    new RegExp(`<tr id="runner_${shared.id}">.*?<td>Instance</td><td class="text-mono">—</td><td><span class="color-fg-muted">never</span></td><td></td></tr>`),
  );

  const edit = await webGet(app, `/grp/app/-/runners/${own.id}/edit`, s.mia);
  assert.equal(edit.statusCode, 200);
  const form = mainOf(edit.body);
  assert.match(form, new RegExp(`<h1 class="h2 mb-3">Edit runner #${own.id}</h1><p class="color-fg-muted mb-3">Project runner</p>`));
  assert.match(form, /<input class="form-control width-full" id="runner_description" name="description" type="text" value="own box" autocomplete="off">/);
  assert.match(form, /<input type="checkbox" id="runner_locked" name="locked" value="1"> Lock to current projects<\/label>/);
  assert.match(form, /<input class="form-control width-full" id="runner_tags" name="tag_list" type="text" value="linux"/);
  assert.match(form, /<a class="btn" href="\/grp\/app\/-\/settings\/ci_cd">Cancel<\/a>/);

  const before = await row(own.id);
  const post = (f: Record<string, unknown>) =>
    webPost(app, `/-/runners/${own.id}/update`, s.mia, {
      place: `project:${project.id}`,
      description: 'own box',
      maintenance_note: '',
      paused: '0',
      protected: '0',
      run_untagged: ['0', '1'],
      locked: '0',
      maximum_timeout: '',
      tag_list: 'linux',
      ...f,
    });
  const refused: [Record<string, unknown>, string, string][] = [
    [{ maximum_timeout: '300' }, 'Maximum job timeout needs to be at least 10 minutes', 'runner_maximum_timeout_error">needs to be at least 10 minutes'],
    [{ maximum_timeout: 'soon' }, 'Maximum job timeout must be a whole number of seconds', 'runner_maximum_timeout_error">must be a whole number of seconds'],
    [
      { run_untagged: '0', tag_list: ' , ' },
      'Tags can not be empty when runner is not allowed to pick untagged jobs',
      'runner_tags_error">can not be empty when runner is not allowed to pick untagged jobs',
    ],
    [{ maintenance_note: 'x'.repeat(1025) }, 'Maintenance note is too long (maximum is 1024 characters)', 'runner_maintenance_note_error">is too long'],
  ];
  for (const [fields, summary, beside] of refused) {
    const res = await post(fields);
    assert.equal(res.statusCode, 422, JSON.stringify(fields));
    assert.ok(res.body.includes(`<li>${summary}</li>`), summary);
    assert.ok(res.body.includes(beside), beside);
    assert.deepEqual(await row(own.id), before);
  }

  const saved = await post({
    description: 'renamed box',
    maintenance_note: 'disk is small',
    paused: ['0', '1'],
    protected: ['0', '1'],
    run_untagged: '0',
    locked: ['0', '1'],
    maximum_timeout: '3600',
    tag_list: 'docker, linux, docker',
  });
  assert.equal(saved.statusCode, 303);
  assert.equal(saved.headers.location, '/grp/app/-/settings/ci_cd');
  const after = (await row(own.id))!;
  assert.deepEqual(
    {
      description: after.description,
      maintenance_note: after.maintenance_note,
      active: after.active,
      access_level: after.access_level,
      run_untagged: after.run_untagged,
      locked: after.locked,
      maximum_timeout: after.maximum_timeout,
      tag_list: after.tag_list,
    },
    {
      description: 'renamed box',
      maintenance_note: 'disk is small',
      active: 0,
      access_level: 'ref_protected',
      run_untagged: 0,
      locked: 1,
      maximum_timeout: 3600,
      tag_list: '["docker","linux"]',
    },
  );
  // the list says so, and offers Resume
  const listed = mainOf((await webGet(app, '/grp/app/-/settings/ci_cd', s.mia)).body);
  assert.match(
    listed,
    new RegExp(
      `<tr id="runner_${own.id}"><td><span><span class="Label Label--secondary runner-status-never_contacted">never contacted</span><span class="Label ml-1">paused</span></span></td><td>#${own.id} renamed box</td><td>Project</td><td class="text-mono">docker, linux</td>`,
    ),
  );
  assert.match(listed, new RegExp(`aria-label="Resume runner #${own.id}">Resume</button>`));

  const resume = await webPost(app, `/-/runners/${own.id}/resume`, s.mia, { place: `project:${project.id}` });
  assert.equal(resume.statusCode, 303);
  assert.equal((await row(own.id))!.active, 1);
  assert.equal((await webPost(app, `/-/runners/${own.id}/pause`, s.mia, { place: `project:${project.id}` })).statusCode, 303);
  assert.equal((await row(own.id))!.active, 0);

  // the instance's runner and another project's: not this Maintainer's
  assert.equal((await webGet(app, `/grp/app/-/runners/${shared.id}/edit`, s.mia)).statusCode, 403);
  assert.equal((await webPost(app, `/-/runners/${shared.id}/pause`, s.mia, { place: `project:${project.id}` })).statusCode, 403);
  assert.equal((await row(shared.id))!.active, 1);
  assert.equal((await webGet(app, `/grp/app/-/runners/${elsewhere.id}/edit`, s.mia)).statusCode, 404);
  assert.equal((await webPost(app, `/-/runners/${elsewhere.id}/delete`, s.mia, { place: `project:${project.id}` })).statusCode, 404);
  assert.ok(await row(elsewhere.id));
  // a Developer: the 403 page, nothing changed; an outsider: the 404 page
  assert.equal((await webGet(app, `/grp/app/-/runners/${own.id}/edit`, s.dev)).statusCode, 403);
  const devPost = await webPost(app, `/-/runners/${own.id}/delete`, s.dev, { place: `project:${project.id}` });
  assert.equal(devPost.statusCode, 403);
  assert.match(devPost.body, /<h1 class="blankslate-heading">Access denied<\/h1>/);
  assert.equal((await webPost(app, `/-/runners/${own.id}/update`, s.otto, { place: `project:${project.id}`, description: 'x' })).statusCode, 404);
  assert.equal((await webGet(app, `/grp/app/-/runners/${own.id}/edit`, s.otto)).statusCode, 404);
  assert.equal((await row(own.id))!.description, 'renamed box');
  // a place that names nothing: the 404 page
  assert.equal((await webPost(app, `/-/runners/${own.id}/pause`, s.mia, { place: 'somewhere' })).statusCode, 404);
  assert.equal((await webPost(app, `/-/runners/${own.id}/pause`, s.mia, { place: 'admin' })).statusCode, 404);

  const del = await webPost(app, `/-/runners/${own.id}/delete`, s.mia, { place: `project:${project.id}` });
  assert.equal(del.statusCode, 303);
  assert.equal(del.headers.location, '/grp/app/-/settings/ci_cd');
  assert.equal(await row(own.id), undefined);
});

test('a runner serving two projects: its Maintainers edit it, only administrators delete it; the admin area edits any runner', async (t) => {
  const { app, c, project, other, own, shared, row, s } = await setup(t);
  await c.db.kysely.insertInto('ci_runner_projects').values({ runner_id: own.id, project_id: other.id, created_at: new Date().toISOString() }).execute();
  const listed = mainOf((await webGet(app, '/grp/app/-/settings/ci_cd', s.mia)).body);
  assert.match(listed, new RegExp(`aria-label="Pause runner #${own.id}"`));
  assert.doesNotMatch(listed, new RegExp(`aria-label="Delete runner #${own.id}"`));
  const refused = await webPost(app, `/-/runners/${own.id}/delete`, s.mia, { place: `project:${project.id}` });
  assert.equal(refused.statusCode, 403);
  assert.match(refused.body, /Runner associated with more than one project/);
  assert.ok(await row(own.id));

  // the admin area: every runner with its buttons; edit an instance runner, then delete the shared one
  const admin = mainOf((await webGet(app, '/admin/runners', s.root)).body);
  assert.match(admin, new RegExp(`<a class="btn btn-sm" href="/admin/runners/${shared.id}/edit" aria-label="Edit runner #${shared.id}">Edit</a>`));
  assert.match(
    admin,
    new RegExp(
      `<input type="hidden" name="place" value="admin"><button type="submit" class="btn btn-sm btn-danger" aria-label="Delete runner #${own.id}">Delete</button>`,
    ),
  );
  const edit = await webGet(app, `/admin/runners/${shared.id}/edit`, s.root);
  assert.equal(edit.statusCode, 200);
  const page = mainOf(edit.body);
  assert.match(page, /<p class="color-fg-muted mb-3">Instance runner<\/p>/);
  // only a project runner can be locked
  assert.doesNotMatch(page, /runner_locked/);
  assert.match(page, /<a class="btn" href="\/admin\/runners">Cancel<\/a>/);
  const saved = await webPost(app, `/-/runners/${shared.id}/update`, s.root, {
    place: 'admin',
    description: 'shared, slow',
    paused: '0',
    protected: '0',
    run_untagged: '1',
    maximum_timeout: '600',
    tag_list: '',
  });
  assert.equal(saved.statusCode, 303);
  assert.equal(saved.headers.location, '/admin/runners');
  const r = (await row(shared.id))!;
  assert.deepEqual([r.description, r.maximum_timeout, r.active, r.locked], ['shared, slow', 600, 1, 0]);
  // not an administrator: the admin pages are 404
  assert.equal((await webGet(app, `/admin/runners/${shared.id}/edit`, s.mia)).statusCode, 404);
  assert.equal((await webGet(app, `/admin/runners/${shared.id}/edit`, s.root)).statusCode, 200);
  assert.equal((await webGet(app, '/admin/runners/99999/edit', s.root)).statusCode, 404);
  const del = await webPost(app, `/-/runners/${own.id}/delete`, s.root, { place: 'admin' });
  assert.equal(del.statusCode, 303);
  assert.equal(del.headers.location, '/admin/runners');
  assert.equal(await row(own.id), undefined);
  assert.deepEqual(await c.db.kysely.selectFrom('ci_runner_projects').select('project_id').where('runner_id', '=', own.id).execute(), []);
});

test('a group runner: the group’s Owner edits it from the group’s CI/CD settings; a Maintainer may not', async (t) => {
  const { app, c, seed, group, row, s } = await setup(t);
  const owner = await seed.user({ username: 'gina' });
  await seed.member({ group }, owner, 50);
  await seed.member({ group }, (await c.users.byUsername('mia'))!, 40);
  const { runner } = await seedRunner(c, { groups: [group.id], description: 'group box', tag_list: ['arm'] });
  const gs = await webSignIn(app, 'gina');
  const edit = await webGet(app, `/groups/grp/-/runners/${runner.id}/edit`, gs);
  assert.equal(edit.statusCode, 200);
  assert.match(mainOf(edit.body), /<nav class="UnderlineNav mb-3" aria-label="Group settings">/);
  assert.equal((await webGet(app, `/groups/grp/-/runners/${runner.id}/edit`, s.mia)).statusCode, 403);
  const saved = await webPost(app, `/-/runners/${runner.id}/update`, gs, {
    place: `group:${group.id}`,
    description: 'group box 2',
    paused: '0',
    protected: ['0', '1'],
    run_untagged: '0',
    tag_list: 'arm',
  });
  assert.equal(saved.statusCode, 303);
  assert.equal(saved.headers.location, '/groups/grp/-/settings/ci_cd');
  const r = (await row(runner.id))!;
  assert.deepEqual([r.description, r.access_level, r.run_untagged, r.tag_list], ['group box 2', 'ref_protected', 0, '["arm"]']);
  assert.equal((await webPost(app, `/-/runners/${runner.id}/pause`, s.mia, { place: `group:${group.id}` })).statusCode, 403);
  assert.equal((await row(runner.id))!.active, 1);
  assert.equal((await webPost(app, `/-/runners/${runner.id}/delete`, gs, { place: `group:${group.id}` })).statusCode, 303);
  assert.equal(await row(runner.id), undefined);
});
