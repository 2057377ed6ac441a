// The admin area's instance CI/CD variables (/admin/ci/variables): administrators only (everyone else the 404 page,
// nothing written), the shared variables section without environments or "masked and hidden", refused input in words
// writing nothing, edit and delete; what a job gets afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp } from '../helpers/build-app.ts';
import { elementOf, mainOf, webGet, webPost, webSignIn } from '../helpers/web.ts';

test('instance CI/CD variables: administrators only; add, refused input named and nothing written, edit, delete', async (t) => {
  const { app, c, seed } = await buildTestApp(t);
  await seed.user({ username: 'alice' });
  const root = await webSignIn(app, 'root', 'root-password-1');
  const alice = await webSignIn(app, 'alice');
  const rows = () =>
    c.db.kysely
      .selectFrom('ci_variables')
      .select(['key', 'protected', 'masked', 'hidden', 'raw', 'environment_scope', 'variable_type', 'project_id', 'group_id'])
      .orderBy('id')
      .execute();
  const add = (s: typeof root, f: Record<string, unknown>) =>
    webPost(app, '/admin/ci/variables', s, { variable_type: 'env_var', protected: '0', expand: ['0', '1'], visibility: 'visible', ...f });

  const page = await webGet(app, '/admin/ci/variables', root);
  assert.equal(page.statusCode, 200);
  const main = mainOf(page.body);
  assert.match(main, /<a class="UnderlineNav-item" href="\/admin\/ci\/variables" aria-current="page">CI\/CD variables<\/a>/);
  assert.match(main, /<h1 class="h2 mb-3">Instance CI\/CD variables<\/h1>/);
  // no environments and no "masked and hidden" for the instance
  assert.doesNotMatch(main, /variable_environment_scope|masked_and_hidden/);
  assert.match(main, /<form method="post" action="\/admin\/ci\/variables" class="settings-form" accept-charset="UTF-8">/);
  // the admin overview links the page through the tabs
  assert.match((await webGet(app, '/admin', root)).body, /href="\/admin\/ci\/variables">CI\/CD variables<\/a>/);

  for (const [s, name] of [
    [alice, 'alice'],
    [null, 'anonymous'],
  ] as const) {
    const res = await webGet(app, '/admin/ci/variables', s);
    assert.equal(res.statusCode, s ? 404 : 302, name);
  }
  assert.equal((await add(alice, { key: 'SNEAKY', value: 'x' })).statusCode, 404);
  assert.equal((await webGet(app, '/admin/ci/variables/edit?key=SNEAKY', alice)).statusCode, 404);

  const refused: [Record<string, unknown>, string][] = [
    [{ key: 'bad-key', value: 'x' }, 'Key can contain only letters, digits and &#39;_&#39;.'],
    [
      { key: 'TOKEN', value: 'tiny', visibility: 'masked' },
      'Value cannot be masked: a masked value is one line of at least 8 characters, only letters, digits and @ : . ~ - _ + = /',
    ],
    [{ key: 'TOKEN', value: 'long-enough-1', visibility: 'masked_and_hidden' }, 'Visibility is not a valid visibility'],
  ];
  for (const [fields, message] of refused) {
    const res = await add(root, fields);
    assert.equal(res.statusCode, 422, JSON.stringify(fields));
    assert.equal(
      elementOf(mainOf(res.body), '<div class="flash flash-error mb-3" role="alert">'),
      `<div class="flash flash-error mb-3" role="alert"><p class="text-bold">The form contains 1 error:</p><ul class="ml-3"><li>${message}</li></ul></div>`,
    );
  }
  assert.deepEqual(await rows(), []);

  assert.equal((await add(root, { key: 'REGISTRY', value: 'registry.example.com' })).statusCode, 303);
  assert.equal((await add(root, { key: 'API_TOKEN', value: 'token-value-99', visibility: 'masked', protected: ['0', '1'] })).statusCode, 303);
  // the same key again: refused, named
  const dup = await add(root, { key: 'REGISTRY', value: 'other' });
  assert.equal(dup.statusCode, 422);
  assert.match(dup.body, /<li>Key \(REGISTRY\) has already been taken<\/li>/);
  const stored = [
    { key: 'REGISTRY', protected: 0, masked: 0, hidden: 0, raw: 0, environment_scope: '*', variable_type: 'env_var', project_id: null, group_id: null },
    { key: 'API_TOKEN', protected: 1, masked: 1, hidden: 0, raw: 0, environment_scope: '*', variable_type: 'env_var', project_id: null, group_id: null },
  ];
  assert.deepEqual(await rows(), stored);

  const list = elementOf(mainOf((await webGet(app, '/admin/ci/variables', root)).body), '<tbody>').replace(/<form[\s\S]*?<\/form>/g, '[delete]');
  assert.equal(
    list,
    '<tbody>' +
      '<tr id="variable_REGISTRY" data-variable="REGISTRY:*"><td class="text-mono">REGISTRY</td><td class="text-mono">registry.example.com</td><td>Variable</td><td>Expanded</td><td><div class="d-flex ci-actions"><a class="btn btn-sm" href="/admin/ci/variables/edit?key=REGISTRY" aria-label="Edit REGISTRY">Edit</a>[delete]</div></td></tr>' +
      '<tr id="variable_API_TOKEN" data-variable="API_TOKEN:*"><td class="text-mono">API_TOKEN</td><td class="text-mono">*****</td><td>Variable</td><td>Protected, Masked, Expanded</td><td><div class="d-flex ci-actions"><a class="btn btn-sm" href="/admin/ci/variables/edit?key=API_TOKEN" aria-label="Edit API_TOKEN">Edit</a>[delete]</div></td></tr>' +
      '</tbody>',
  );

  const edit = await webGet(app, '/admin/ci/variables/edit?key=REGISTRY', root);
  assert.equal(edit.statusCode, 200);
  assert.match(
    mainOf(edit.body),
    /<h1 class="h2 mb-3">Edit variable <span class="text-mono">REGISTRY<\/span><\/h1><form method="post" action="\/admin\/ci\/variables\/update"/,
  );
  const updated = await webPost(app, '/admin/ci/variables/update', root, {
    key: 'REGISTRY',
    original_environment_scope: '*',
    variable_type: 'file',
    protected: '0',
    expand: '0',
    visibility: 'visible',
    value: 'registry.internal',
  });
  assert.equal(updated.statusCode, 303);
  assert.equal(updated.headers.location, '/admin/ci/variables');
  assert.deepEqual((await rows())[0], { ...stored[0], variable_type: 'file', raw: 1 });
  assert.equal((await c.ci.variables.get({ kind: 'instance' }, 'REGISTRY')).value, 'registry.internal');
  assert.equal((await webPost(app, '/admin/ci/variables/update', alice, { key: 'REGISTRY', value: 'x' })).statusCode, 404);
  assert.equal((await webPost(app, '/admin/ci/variables/delete', alice, { key: 'REGISTRY' })).statusCode, 404);
  assert.equal((await rows()).length, 2);

  const del = await webPost(app, '/admin/ci/variables/delete', root, { key: 'REGISTRY' });
  assert.equal(del.statusCode, 303);
  assert.deepEqual(
    (await rows()).map((r) => r.key),
    ['API_TOKEN'],
  );
  // what a job of any project gets now
  const group = await seed.group();
  const project = await seed.project({ namespace: group });
  const forJob = await c.ci.variables.forJob(project, group, { protectedRef: true, environment: null });
  assert.deepEqual(
    forJob.map((v) => [v.key, v.value, v.masked]),
    [['API_TOKEN', 'token-value-99', true]],
  );
});
