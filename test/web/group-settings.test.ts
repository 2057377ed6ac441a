// A group's settings as web pages: CI/CD (group variables, the group's runners, New group runner), Access tokens and
// Deploy tokens. Who may open which is the API's (Owners all three, Maintainers CI/CD and deploy tokens, Developers
// the 403 page, outsiders and the anonymous the 404 page), the group's Settings tab shows to those who may open one;
// forms write what the API writes, and refused input (a bad key, an unmaskable masked value, a duplicate key and
// scope, someone without the right) is a page error that writes nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addDays, todayDate } from '../../src/lib/time.ts';
import { buildTestApp } from '../helpers/build-app.ts';
import { seedRunner } from '../helpers/ci.ts';
import { elementOf, mainOf, webGet, webPost, webSignIn } from '../helpers/web.ts';

async function setup(t: Parameters<typeof buildTestApp>[0]) {
  const env = await buildTestApp(t);
  const { seed, c, app } = env;
  const olga = await seed.user({ username: 'olga' });
  const max = await seed.user({ username: 'max' });
  const devi = await seed.user({ username: 'devi' });
  await seed.user({ username: 'otto' });
  const group = await seed.group({ path: 'grp', name: 'Grp', visibility: 'private' });
  await seed.member({ group }, olga, 50);
  await seed.member({ group }, max, 40);
  await seed.member({ group }, devi, 30);
  const vars = () =>
    c.db.kysely
      .selectFrom('ci_variables')
      .select(['key', 'protected', 'masked', 'hidden', 'raw', 'environment_scope', 'description', 'variable_type', 'project_id'])
      .where('group_id', '=', group.id)
      .orderBy('id')
      .execute();
  const s = {
    olga: await webSignIn(app, 'olga'),
    max: await webSignIn(app, 'max'),
    devi: await webSignIn(app, 'devi'),
    otto: await webSignIn(app, 'otto'),
  };
  return { ...env, group, olga, max, vars, s };
}

const PAGES = ['ci_cd', 'access_tokens', 'deploy_tokens'];

test('group settings: Owners open all three pages, Maintainers CI/CD and deploy tokens, Developers get 403, outsiders and the anonymous 404; the Settings tab', async (t) => {
  const { app, s } = await setup(t);
  const want: Record<string, Record<string, number>> = {
    olga: { ci_cd: 200, access_tokens: 200, deploy_tokens: 200 },
    max: { ci_cd: 200, access_tokens: 403, deploy_tokens: 200 },
    devi: { ci_cd: 403, access_tokens: 403, deploy_tokens: 403 },
    otto: { ci_cd: 404, access_tokens: 404, deploy_tokens: 404 },
  };
  for (const [who, pages] of Object.entries(want)) {
    for (const page of PAGES) {
      const res = await webGet(app, `/groups/grp/-/settings/${page}`, s[who as keyof typeof s]);
      assert.equal(res.statusCode, pages[page], `${who} ${page}`);
      if (res.statusCode === 200) assert.equal((res.body.match(/<h1/g) ?? []).length, 1);
      if (res.statusCode === 403) assert.match(res.body, /<h1 class="blankslate-heading">Access denied<\/h1>/);
      if (res.statusCode === 404) assert.match(res.body, /<h1 class="blankslate-heading">Page not found<\/h1>/);
    }
  }
  for (const page of PAGES) assert.equal((await webGet(app, `/groups/grp/-/settings/${page}`)).statusCode, 404);

  // the group's tabs: Settings for those who may open a settings page (its first one), and the settings tabs they may open
  const tabs = async (who: keyof typeof s) =>
    elementOf(mainOf((await webGet(app, '/groups/grp', s[who])).body), '<nav class="UnderlineNav mb-3" aria-label="Group">');
  assert.equal(
    await tabs('olga'),
    '<nav class="UnderlineNav mb-3" aria-label="Group"><div class="UnderlineNav-body"><a class="UnderlineNav-item" href="/groups/grp" aria-current="page">Overview</a><a class="UnderlineNav-item" href="/groups/grp/-/issues">Issues</a><a class="UnderlineNav-item" href="/groups/grp/-/boards">Boards</a><a class="UnderlineNav-item" href="/groups/grp/-/settings/ci_cd">Settings</a></div></nav>',
  );
  assert.doesNotMatch(await tabs('devi'), /Settings/);
  const settingsTabs = async (who: keyof typeof s, page: string) =>
    elementOf(mainOf((await webGet(app, `/groups/grp/-/settings/${page}`, s[who])).body), '<nav class="UnderlineNav mb-3" aria-label="Group settings">');
  assert.equal(
    await settingsTabs('max', 'deploy_tokens'),
    '<nav class="UnderlineNav mb-3" aria-label="Group settings"><div class="UnderlineNav-body"><a class="UnderlineNav-item" href="/groups/grp/-/settings/ci_cd">CI/CD</a><a class="UnderlineNav-item" href="/groups/grp/-/settings/deploy_tokens" aria-current="page">Deploy tokens</a></div></nav>',
  );
  assert.match(
    await settingsTabs('olga', 'ci_cd'),
    /CI\/CD<\/a><a class="UnderlineNav-item" href="\/groups\/grp\/-\/settings\/access_tokens">Access tokens<\/a><a[^>]*>Deploy tokens/,
  );
  // the group's issues and boards pages carry the tab too
  assert.match((await webGet(app, '/groups/grp/-/issues', s.max)).body, /href="\/groups\/grp\/-\/settings\/ci_cd">Settings<\/a>/);
});

test('group CI/CD variables: add (masked shown as *****), refused input in words writing nothing, edit, delete; Developers and outsiders write nothing', async (t) => {
  const { app, c, group, vars, s } = await setup(t);
  const url = `/-/g/${group.id}/variables`;
  const add = (who: keyof typeof s, f: Record<string, unknown>) =>
    webPost(app, url, s[who], { variable_type: 'env_var', environment_scope: '*', protected: '0', expand: ['0', '1'], visibility: 'visible', ...f });

  const empty = mainOf((await webGet(app, '/groups/grp/-/settings/ci_cd', s.max)).body);
  assert.match(elementOf(empty, '<section class="mb-5" aria-labelledby="ci-variables">'), /<p class="color-fg-muted mb-3">There are no variables yet\.<\/p>/);

  // refused: a bad key, an unmaskable masked value, both at once — the messages name the field and say why
  const cases: [Record<string, unknown>, string[]][] = [
    [{ key: 'bad key', value: 'x' }, ['Key can contain only letters, digits and &#39;_&#39;.']],
    [
      { key: 'TOKEN', value: 'short', visibility: 'masked' },
      ['Value cannot be masked: a masked value is one line of at least 8 characters, only letters, digits and @ : . ~ - _ + = /'],
    ],
    [
      { key: 'TOKEN', value: 'has space inside', visibility: 'masked', expand: '0' },
      ['Value cannot be masked: a masked value is at least 8 characters without spaces or line breaks'],
    ],
    [{ key: '', value: 'x' }, ['Key can&#39;t be blank']],
    [
      { key: 'OK', value: 'x', environment_scope: 'bad scope!' },
      [
        'Environments can contain only letters, digits, &#39;-&#39;, &#39;_&#39;, &#39;/&#39;, &#39;$&#39;, &#39;{&#39;, &#39;}&#39;, &#39;.&#39;, &#39;*&#39; and spaces',
      ],
    ],
  ];
  for (const [fields, messages] of cases) {
    const res = await add('max', fields);
    assert.equal(res.statusCode, 422, JSON.stringify(fields));
    const summary = elementOf(mainOf(res.body), '<div class="flash flash-error mb-3" role="alert">');
    assert.equal(
      summary,
      `<div class="flash flash-error mb-3" role="alert"><p class="text-bold">The form contains 1 error:</p><ul class="ml-3">${messages.map((m) => `<li>${m}</li>`).join('')}</ul></div>`,
      JSON.stringify(fields),
    );
    // what was typed stays
    assert.match(res.body, new RegExp(`id="variable_key" name="key" type="text" value="${String(fields.key).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`));
  }
  assert.deepEqual(await vars(), []);

  assert.equal((await add('max', { key: 'DEPLOY_KEY', value: 'secret-value-123', visibility: 'masked', description: 'for deploys' })).statusCode, 303);
  assert.equal((await add('max', { key: 'REGION', value: 'eu-west', expand: '0', environment_scope: 'production' })).statusCode, 303);
  assert.equal((await add('olga', { key: 'HIDDEN', value: 'hidden-value-1', visibility: 'masked_and_hidden', protected: ['0', '1'] })).statusCode, 303);
  const stored = [
    {
      key: 'DEPLOY_KEY',
      protected: 0,
      masked: 1,
      hidden: 0,
      raw: 0,
      environment_scope: '*',
      description: 'for deploys',
      variable_type: 'env_var',
      project_id: null,
    },
    {
      key: 'REGION',
      protected: 0,
      masked: 0,
      hidden: 0,
      raw: 1,
      environment_scope: 'production',
      description: null,
      variable_type: 'env_var',
      project_id: null,
    },
    { key: 'HIDDEN', protected: 1, masked: 1, hidden: 1, raw: 0, environment_scope: '*', description: null, variable_type: 'env_var', project_id: null },
  ];
  assert.deepEqual(await vars(), stored);

  // a duplicate key and scope: refused, nothing written; the same key in another scope is another variable
  const dup = await add('max', { key: 'REGION', value: 'again', environment_scope: 'production' });
  assert.equal(dup.statusCode, 422);
  assert.match(dup.body, /<p class="note color-fg-danger" id="variable_key_error">\(REGION\) has already been taken<\/p>/);
  assert.match(dup.body, /<li>Key \(REGION\) has already been taken<\/li>/);
  assert.deepEqual(await vars(), stored);

  // the list: masked and hidden values as *****, the attributes in words
  const list = mainOf((await webGet(app, '/groups/grp/-/settings/ci_cd', s.max)).body);
  const rows = elementOf(list, '<tbody>').replace(/<form[\s\S]*?<\/form>/g, '[delete]');
  assert.equal(
    rows,
    '<tbody>' +
      '<tr id="variable_DEPLOY_KEY" data-variable="DEPLOY_KEY:*"><td class="text-mono">DEPLOY_KEY<div class="f6 color-fg-muted">for deploys</div></td><td class="text-mono">*****</td><td>Variable</td><td class="text-mono">All (default)</td><td>Masked, Expanded</td><td><div class="d-flex ci-actions"><a class="btn btn-sm" href="/groups/grp/-/settings/ci_cd/variables/edit?key=DEPLOY_KEY&amp;environment_scope=*" aria-label="Edit DEPLOY_KEY">Edit</a>[delete]</div></td></tr>' +
      '<tr id="variable_REGION" data-variable="REGION:production"><td class="text-mono">REGION</td><td class="text-mono">eu-west</td><td>Variable</td><td class="text-mono">production</td><td>—</td><td><div class="d-flex ci-actions"><a class="btn btn-sm" href="/groups/grp/-/settings/ci_cd/variables/edit?key=REGION&amp;environment_scope=production" aria-label="Edit REGION">Edit</a>[delete]</div></td></tr>' +
      '<tr id="variable_HIDDEN" data-variable="HIDDEN:*"><td class="text-mono">HIDDEN</td><td class="text-mono">*****</td><td>Variable</td><td class="text-mono">All (default)</td><td>Protected, Masked and hidden, Expanded</td><td><div class="d-flex ci-actions"><a class="btn btn-sm" href="/groups/grp/-/settings/ci_cd/variables/edit?key=HIDDEN&amp;environment_scope=*" aria-label="Edit HIDDEN">Edit</a>[delete]</div></td></tr>' +
      '</tbody>',
  );
  assert.doesNotMatch(list, /secret-value-123|hidden-value-1/);

  // edit: the value shown for a masked one, an unmaskable change refused, then saved
  const edit = await webGet(app, '/groups/grp/-/settings/ci_cd/variables/edit?key=DEPLOY_KEY&environment_scope=*', s.max);
  assert.equal(edit.statusCode, 200);
  assert.match(mainOf(edit.body), /<h1 class="h2 mb-3">Edit variable <span class="text-mono">DEPLOY_KEY<\/span><\/h1>/);
  assert.match(edit.body, /<textarea class="form-control width-full text-mono" id="variable_value" name="value" rows="3">secret-value-123<\/textarea>/);
  const update = (f: Record<string, unknown>) =>
    webPost(app, `${url}/update`, s.max, {
      key: 'DEPLOY_KEY',
      original_environment_scope: '*',
      variable_type: 'env_var',
      environment_scope: '*',
      protected: '0',
      expand: '1',
      visibility: 'masked',
      description: 'for deploys',
      ...f,
    });
  const badEdit = await update({ value: 'no' });
  assert.equal(badEdit.statusCode, 422);
  assert.match(badEdit.body, /id="variable_value_error">cannot be masked: a masked value is one line of at least 8 characters/);
  assert.deepEqual(await vars(), stored);
  assert.equal((await update({ value: 'new-secret-4567', environment_scope: 'staging' })).statusCode, 303);
  const after = await vars();
  assert.deepEqual(after[0], { ...stored[0], environment_scope: 'staging' });
  const sv = await c.ci.variables.list({ kind: 'group', group });
  assert.equal(sv[0]?.value, 'new-secret-4567');
  // a variable the group does not have: the 404 page
  assert.equal((await webGet(app, '/groups/grp/-/settings/ci_cd/variables/edit?key=NOPE', s.max)).statusCode, 404);

  // Developers: the 403 page and nothing written; outsiders the 404 page
  for (const [who, status] of [
    ['devi', 403],
    ['otto', 404],
  ] as const) {
    assert.equal((await add(who, { key: 'SNEAKY', value: 'x' })).statusCode, status);
    assert.equal((await webPost(app, `${url}/delete`, s[who], { key: 'REGION', environment_scope: 'production' })).statusCode, status);
    assert.equal((await webPost(app, `${url}/update`, s[who], { key: 'REGION', original_environment_scope: 'production', value: 'x' })).statusCode, status);
  }
  assert.deepEqual(
    (await vars()).map((v) => v.key),
    ['DEPLOY_KEY', 'REGION', 'HIDDEN'],
  );

  const del = await webPost(app, `${url}/delete`, s.max, { key: 'REGION', environment_scope: 'production' });
  assert.equal(del.statusCode, 303);
  assert.equal(del.headers.location, '/groups/grp/-/settings/ci_cd');
  assert.deepEqual(
    (await vars()).map((v) => v.key),
    ['DEPLOY_KEY', 'HIDDEN'],
  );
});

test('group runners: the group’s and the instance’s listed; New group runner for Owners (token once), none for Maintainers', async (t) => {
  const { app, c, group, s } = await setup(t);
  const { runner: own } = await seedRunner(c, { groups: [group.id], description: 'group box', tag_list: ['linux'] });
  const { runner: shared } = await seedRunner(c, { description: 'shared box' });
  const other = await c.db.kysely.selectFrom('namespaces').select('id').where('path', '=', 'olga').executeTakeFirstOrThrow();
  await seedRunner(c, { runner_type: 'group_type', groups: [other.id], description: 'elsewhere' });

  const runnersOf = async (who: keyof typeof s) =>
    elementOf(mainOf((await webGet(app, '/groups/grp/-/settings/ci_cd', s[who])).body), '<section class="mb-5" aria-labelledby="ci-runners">');
  const owner = await runnersOf('olga');
  const rows = elementOf(owner, '<tbody>').replace(/<form[\s\S]*?<\/form>/g, (f) => `[${/aria-label="([^"]+)"/.exec(f)![1]}]`);
  assert.equal(
    rows,
    '<tbody>' +
      `<tr id="runner_${own.id}"><td><span><span class="Label Label--secondary runner-status-never_contacted">never contacted</span></span></td><td>#${own.id} group box</td><td>Group</td><td class="text-mono">linux</td><td><span class="color-fg-muted">never</span></td><td><div class="d-flex ci-actions"><a class="btn btn-sm" href="/groups/grp/-/runners/${own.id}/edit" aria-label="Edit runner #${own.id}">Edit</a>[Pause runner #${own.id}][Delete runner #${own.id}]</div></td></tr>` +
      `<tr id="runner_${shared.id}"><td><span><span class="Label Label--secondary runner-status-never_contacted">never contacted</span></span></td><td>#${shared.id} shared box</td><td>Instance</td><td class="text-mono">—</td><td><span class="color-fg-muted">never</span></td><td></td></tr>` +
      '</tbody>',
  );
  assert.match(owner, /<h3 class="h4 mb-2">New group runner<\/h3>/);
  // a Maintainer sees the list, without buttons for the group runner (an Owner's) and without the form
  const maint = await runnersOf('max');
  assert.doesNotMatch(maint, /New group runner|Edit runner|Pause runner|Delete runner/);
  assert.match(maint, new RegExp(`#${own.id} group box`));

  const created = await webPost(app, `/-/g/${group.id}/runners`, s.olga, { description: 'new box', tag_list: 'arm, linux', run_untagged: ['0', '1'] });
  assert.equal(created.statusCode, 200);
  const token = /id="runner_token" type="text" readonly value="(glrt-[^"]+)"/.exec(created.body)?.[1];
  assert.ok(token);
  assert.ok(created.body.includes(`HEARTH_RUNNER_TOKEN=${token} node bin/hearth.js runner register`));
  const made = await c.db.kysely.selectFrom('ci_runners').selectAll().where('description', '=', 'new box').executeTakeFirstOrThrow();
  assert.deepEqual(
    [made.runner_type, made.tag_list, made.run_untagged, made.creator_id],
    ['group_type', '["arm","linux"]', 1, (await c.users.byUsername('olga'))!.id],
  );
  assert.deepEqual(
    (await c.db.kysely.selectFrom('ci_runner_namespaces').select('namespace_id').where('runner_id', '=', made.id).execute()).map((r) => r.namespace_id),
    [group.id],
  );
  assert.ok(await c.ci.runners.authenticate(token!));
  assert.doesNotMatch((await webGet(app, '/groups/grp/-/settings/ci_cd', s.olga)).body, new RegExp(token!));

  // a Maintainer's post: the 403 page with the service's reason, nothing written
  const count = async () => (await c.db.kysely.selectFrom('ci_runners').select('id').execute()).length;
  const before = await count();
  const refused = await webPost(app, `/-/g/${group.id}/runners`, s.max, { description: 'nope', run_untagged: '1' });
  assert.equal(refused.statusCode, 403);
  assert.match(refused.body, /<h1 class="blankslate-heading">Access denied<\/h1><p>Insufficient permissions<\/p>/);
  // no tags and no untagged jobs: refused, named
  const untagged = await webPost(app, `/-/g/${group.id}/runners`, s.olga, { description: 'no', tag_list: '', run_untagged: '0' });
  assert.equal(untagged.statusCode, 422);
  assert.match(untagged.body, /Tags list can not be empty when runner is not allowed to pick untagged jobs/);
  assert.equal(await count(), before);
  assert.equal((await webPost(app, `/-/g/${group.id}/runners`, s.devi, { description: 'x' })).statusCode, 403);
  assert.equal(await count(), before);
});

test('group access tokens and deploy tokens through the forms: the secret once, refused input writing nothing, revoke', async (t) => {
  const { app, c, group, s, olga } = await setup(t);
  const bots = () => c.db.kysely.selectFrom('users').select(['id', 'name']).where('user_type', '=', 'project_bot').orderBy('id').execute();
  const at = `/-/g/${group.id}/access_tokens`;

  const page = mainOf((await webGet(app, '/groups/grp/-/settings/access_tokens', s.olga)).body);
  assert.match(page, /<h1 class="h2 mb-3">Group access tokens<\/h1>/);
  assert.match(page, /<p class="color-fg-muted mb-4">This group has no active access tokens\.<\/p>/);
  // an Owner may give every role up to Owner
  assert.match(page, /<option value="50">Owner<\/option>/);
  assert.match(page, /<button type="submit" class="btn btn-primary">Create group access token<\/button>/);

  const refused: [Record<string, unknown>, RegExp][] = [
    [{ name: 'x', access_level: '40' }, /<li>Scopes can&#39;t be blank<\/li>/],
    [{ name: 'x', access_level: '40', scopes: ['api'], expires_at: addDays(todayDate(), -1) }, /<li>Expires at must be in the future<\/li>/],
    [{ name: 'x', access_level: '40', scopes: ['nope'] }, /<li>scopes does not have a valid value<\/li>/],
    [{ name: '', access_level: '40', scopes: ['api'] }, /<li>Name can&#39;t be blank<\/li>/],
  ];
  for (const [fields, message] of refused) {
    const res = await webPost(app, at, s.olga, fields);
    assert.equal(res.statusCode, 422, JSON.stringify(fields));
    assert.match(res.body, message);
  }
  // a Maintainer may not manage them at all
  assert.equal((await webPost(app, at, s.max, { name: 'x', access_level: '30', scopes: ['api'] })).statusCode, 403);
  assert.deepEqual(await bots(), []);

  const made = await webPost(app, at, s.olga, { name: 'ci bot', description: 'for CI', access_level: '30', scopes: ['read_api', 'read_repository'] });
  assert.equal(made.statusCode, 200);
  const secret = /id="created_token" type="text" readonly value="(glpat-[^"]+)"/.exec(made.body)?.[1];
  assert.ok(secret);
  assert.match(made.body, /Your new group access token &quot;ci bot&quot; has been created\.|Your new group access token "ci bot" has been created\./);
  const [bot] = await bots();
  assert.equal(bot?.name, 'ci bot');
  assert.deepEqual(await c.db.kysely.selectFrom('members').select(['source_type', 'source_id', 'access_level']).where('user_id', '=', bot!.id).execute(), [
    { source_type: 'Namespace', source_id: group.id, access_level: 30 },
  ]);
  const pat = await c.db.kysely.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', bot!.id).executeTakeFirstOrThrow();
  assert.deepEqual([pat.token_digest, pat.scopes, pat.description], [c.tokens.digest(secret!), '["read_api","read_repository"]', 'for CI']);
  const listed = mainOf((await webGet(app, '/groups/grp/-/settings/access_tokens', s.olga)).body);
  assert.ok(!listed.includes(secret!));
  assert.match(listed, /<th scope="row">ci bot<\/th><td>read_api, read_repository<\/td><td>Developer<\/td>/);
  assert.equal((await app.inject({ url: `/api/v4/groups/${group.id}`, headers: { 'private-token': secret! } })).statusCode, 200);
  const revoke = await webPost(app, `${at}/${pat.id}/revoke`, s.olga);
  assert.equal(revoke.statusCode, 303);
  assert.equal(revoke.headers.location, '/groups/grp/-/settings/access_tokens');
  assert.deepEqual(await bots(), []);

  // deploy tokens: Maintainers too
  const dt = `/-/g/${group.id}/deploy_tokens`;
  const deployRows = () =>
    c.db.kysely.selectFrom('deploy_tokens').select(['id', 'name', 'username', 'revoked', 'group_id', 'project_id', 'creator_id']).execute();
  const bad = await webPost(app, dt, s.max, { name: 'x', username: 'bad name', scopes: ['read_repository'] });
  assert.equal(bad.statusCode, 422);
  assert.match(bad.body, /<li>Username can contain only letters, digits, &#39;_&#39;, &#39;-&#39;, &#39;\+&#39;, and &#39;\.&#39;<\/li>/);
  const noScopes = await webPost(app, dt, s.max, { name: 'x' });
  assert.equal(noScopes.statusCode, 422);
  assert.equal((await webPost(app, dt, s.devi, { name: 'x', scopes: ['read_repository'] })).statusCode, 403);
  assert.equal((await webPost(app, dt, s.otto, { name: 'x', scopes: ['read_repository'] })).statusCode, 404);
  assert.deepEqual(await deployRows(), []);
  const dmade = await webPost(app, dt, s.max, { name: 'ci pull', scopes: ['read_repository'] });
  assert.equal(dmade.statusCode, 200);
  assert.match(dmade.body, /id="created_token" type="text" readonly value="gldt-/);
  const [row] = await deployRows();
  assert.deepEqual(row, {
    id: row!.id,
    name: 'ci pull',
    username: null,
    revoked: 0,
    group_id: group.id,
    project_id: null,
    creator_id: (await c.users.byUsername('max'))!.id,
  });
  assert.match(dmade.body, new RegExp(`id="created_username" type="text" readonly value="gitlab\\+deploy-token-${row!.id}"`));
  assert.equal((await webPost(app, `${dt}/${row!.id}/revoke`, s.max)).statusCode, 303);
  assert.deepEqual(await deployRows(), [{ ...row, revoked: 1 }]);
  assert.match(mainOf((await webGet(app, '/groups/grp/-/settings/deploy_tokens', s.max)).body), /This group has no active deploy tokens\./);
  assert.ok(olga);
});
