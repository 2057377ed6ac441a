// The forms grey out the visibility levels the server would refuse, and a refused level comes back
// with GitLab's message and what was typed — never a "successfully created" with another visibility.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { webGet, webPost, webSignIn } from '../helpers/web.ts';

/** The radio of a level: its disabled flag and whether it is checked. */
function radio(body: string, kind: string, value: string): { disabled: boolean; checked: boolean } {
  const tag = new RegExp(`<input type="radio" id="${kind}_visibility_${value}"[^>]*>`).exec(body)?.[0];
  assert.ok(tag, `${kind} ${value} radio`);
  return { disabled: / disabled[ />]/.test(tag), checked: / checked[ />]/.test(tag) };
}

test('new project: levels above the chosen group are disabled; posting one is refused with the message and the input kept', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const g = await seed.group({ path: 'secret', visibility: 'private' });
  await seed.member({ group: g }, alice, 40);
  await c.settings.save({ default_project_visibility: 'public' });
  const s = await webSignIn(app, 'alice');

  // her own namespace: every level; the default is public
  let form = await webGet(app, '/projects/new', s);
  assert.equal(form.statusCode, 200);
  assert.deepEqual(radio(form.body, 'project', 'public'), { disabled: false, checked: true });
  assert.match(form.body, new RegExp(`<option value="${g.id}" data-max-visibility="private">secret</option>`));
  // in the private group: internal and public greyed out with the reason, private chosen
  form = await webGet(app, `/projects/new?namespace_id=${g.id}`, s);
  assert.deepEqual(
    ['private', 'internal', 'public'].map((v) => radio(form.body, 'project', v)),
    [
      { disabled: false, checked: true },
      { disabled: true, checked: false },
      { disabled: true, checked: false },
    ],
  );
  assert.match(form.body, /Not available: public is not allowed in a private group\./);

  const res = await webPost(app, '/projects', s, { name: 'Leak', path: 'leak', namespace_id: String(g.id), visibility: 'public' });
  assert.equal(res.statusCode, 422);
  assert.match(res.body, /<div class="flash flash-error mb-3" role="alert">[\s\S]*Visibility level public is not allowed in a private group\./);
  assert.doesNotMatch(res.body, /successfully created/);
  assert.match(res.body, /id="project_name" name="name" value="Leak"/);
  assert.match(res.body, /id="project_path" name="path" value="leak"/);
  assert.equal((await c.db.kysely.selectFrom('projects').select('id').where('namespace_id', '=', g.id).execute()).length, 0);
});

test('new subgroup and project settings: levels above the parent group or restricted are disabled; a refused change keeps the project', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  const alice = await seed.user({ username: 'alice' });
  const g = await seed.group({ path: 'inner', visibility: 'internal' });
  await seed.member({ group: g }, alice, 50);
  await c.settings.save({ restricted_visibility_levels: ['private'] });
  const s = await webSignIn(app, 'alice');

  const form = await webGet(app, `/groups/new?parent_id=${g.id}`, s);
  assert.equal(form.statusCode, 200);
  assert.deepEqual(
    ['private', 'internal', 'public'].map((v) => radio(form.body, 'group', v).disabled),
    [true, false, true],
  );
  assert.match(form.body, /Not available: public is not allowed since the parent group has a internal visibility\./);
  assert.match(form.body, /Not available: private has been restricted by your GitLab administrator/);
  const sub = await webPost(app, '/groups', s, { name: 'Sub', path: 'sub', parent_id: String(g.id), visibility: 'public' });
  assert.equal(sub.statusCode, 422);
  assert.match(sub.body, /public is not allowed since the parent group has a internal visibility\./);
  assert.match(sub.body, /id="group_name" name="name" value="Sub"/);

  const p = await seed.project({ namespace: g, path: 'app', visibility: 'internal' });
  const edit = await webGet(app, '/inner/app/-/edit', s);
  assert.equal(edit.statusCode, 200);
  const options = [...edit.body.matchAll(/<option value="(private|internal|public)"([^>]*)>/g)].map((m) => [m[1], /disabled/.test(m[2])]);
  assert.deepEqual(options, [
    ['private', true],
    ['internal', false],
    ['public', true],
  ]);
  const res = await webPost(app, `/-/p/${p.id}/edit`, s, { name: 'app', description: 'changed', visibility: 'public' });
  assert.equal(res.statusCode, 422);
  assert.match(res.body, /public is not allowed in a internal group\./);
  assert.match(res.body, /<option value="public" selected disabled>/);
  const row = await c.db.kysely.selectFrom('projects').select(['visibility', 'description']).where('id', '=', p.id).executeTakeFirstOrThrow();
  assert.deepEqual(row, { visibility: 'internal', description: null });
});
