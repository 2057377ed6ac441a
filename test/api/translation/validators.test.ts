// The translation API's request validators (src/http/translation/validators.ts): Weblate's serializers
// read raw fields into typed input or DRF's field errors, every field's at once; and the order at the
// edge: a unit that does not exist is 404 before the field errors of a request to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newUnitRequest, type Parsed, unitWrite, uploadRequest, validOrRefused } from '../../../src/http/translation/validators.ts';
import { DomainError } from '../../../src/lib/errors.ts';
import { buildTestApp } from '../../helpers/build-app.ts';
import { AS_ROOT, poComponent } from '../../helpers/translation.ts';

const errorsOf = <T>(p: Parsed<T>) => (p.ok ? null : p.errors);

test('unitWrite: typed fields, or every field error at once', () => {
  assert.deepEqual(unitWrite({ target: ['a', 'b'], state: '20', explanation: 'why', extra_flags: 'max-length:10', labels: [] }, true), {
    ok: true,
    value: { target: ['a', 'b'], state: 20, explanation: 'why', extraFlags: 'max-length:10', labels: [] },
  });
  // a string target is split at U+001E; a blank form is allowed with the empty state only
  assert.deepEqual(unitWrite({ target: 'a\x1eb', state: 0 }, true), { ok: true, value: { target: ['a', 'b'], state: 0 } });
  assert.deepEqual(unitWrite({}, true), { ok: true, value: {} });
  assert.deepEqual(errorsOf(unitWrite({ state: 20 }, false)), { target: ['This field is required.'] });
  assert.deepEqual(errorsOf(unitWrite({ target: ['x', ''], state: 20, explanation: null, extra_flags: 5, labels: 'x' }, true)), {
    target: { 1: ['This field may not be blank.'] },
    explanation: ['This field may not be null.'],
    extra_flags: ['Not a valid string.'],
    labels: ['Expected a list of items but got type "str".'],
  });
  assert.deepEqual(errorsOf(unitWrite({ target: null, state: 12 }, true)), {
    target: ['This field may not be null.'],
    state: ['This state cannot be set manually.'],
  });
  assert.deepEqual(errorsOf(unitWrite({ target: { a: 1 }, state: true }, true)), {
    target: ['Expected a list of items but got type "dict".'],
    state: ['"True" is not a valid choice.'],
  });
  assert.deepEqual(errorsOf(unitWrite({ labels: [7] }, true)), { labels: ['Invalid pk "7" - object does not exist.'] });
  // 100 is a choice; perform_update refuses it later (the domain's "Invalid state")
  assert.deepEqual(unitWrite({ target: ['x'], state: 100 }, true), { ok: true, value: { target: ['x'], state: 100 } });
});

test('newUnitRequest: the serializer of the shape, with the state kept beside field errors', () => {
  const bilingual = { monolingual: false, isSource: false };
  assert.deepEqual(newUnitRequest({ context: 'c', source: ['s'], target: ['t'], state: 20 })(bilingual), {
    unit: { context: 'c', source: ['s'], target: ['t'], state: 20 },
  });
  assert.deepEqual(newUnitRequest({ source: ['s'] })(bilingual), { errors: { target: ['This field is required.'] } });
  // the source translation: target optional and may be blank
  assert.deepEqual(newUnitRequest({ source: ['s'] })({ monolingual: false, isSource: true }), { unit: { context: '', source: ['s'], target: [] } });
  assert.deepEqual(newUnitRequest({ source: [''], target: [''], context: null, state: 30 })(bilingual), {
    errors: { context: ['This field may not be null.'], source: { 0: ['This field may not be blank.'] }, target: { 0: ['This field may not be blank.'] } },
    state: 30,
  });
  assert.deepEqual(newUnitRequest({ source: ['s'], target: ['t'], state: 100 })(bilingual), { errors: { state: ['"100" is not a valid choice.'] } });
  // monolingual: key and value; the source is the value
  const mono = { monolingual: true, isSource: true };
  assert.deepEqual(newUnitRequest({ key: 'k', value: 'v' })(mono), { unit: { context: 'k', source: ['v'], target: ['v'] } });
  assert.deepEqual(newUnitRequest({ key: '' })(mono), { errors: { key: ['This field may not be blank.'], value: ['This field is required.'] } });
});

test('uploadRequest: the request of an upload, or every field error at once', () => {
  const file = Buffer.from('x');
  assert.deepEqual(uploadRequest({ file }), { ok: true, value: { file, method: 'translate', fuzzy: '', conflicts: '' } });
  assert.deepEqual(uploadRequest({ file: [Buffer.from('old'), file], conflicts: 'ignore', author_name: ' A ', author_email: 'a@example.com' }), {
    ok: true,
    value: { file, method: 'translate', fuzzy: '', conflicts: '', author: { name: 'A', email: 'a@example.com' } },
  });
  // wlc's overwrite=yes
  assert.deepEqual(uploadRequest({ file, overwrite: 'yes' }), { ok: true, value: { file, method: 'translate', fuzzy: '', conflicts: 'replace-translated' } });
  assert.deepEqual(errorsOf(uploadRequest({ method: 'nope', fuzzy: 'x', overwrite: 'maybe', author_name: 'n'.repeat(201), author_email: 'nope' })), {
    file: ['No file was submitted.'],
    method: ['"nope" is not a valid choice.'],
    fuzzy: ['"x" is not a valid choice.'],
    overwrite: ['Must be a valid boolean.'],
    author_name: ['Ensure this field has no more than 200 characters.'],
    author_email: ['Enter a valid email address.'],
  });
  assert.deepEqual(errorsOf(uploadRequest({ file: 'text' })), { file: ['The submitted data was not a file. Check the encoding type on the form.'] });
  assert.deepEqual(errorsOf(uploadRequest({ file: Buffer.alloc(0) })), { file: ['The submitted file is empty.'] });
});

test('validOrRefused: the value at once; field errors only after the checks that come first', async () => {
  let ran = 0;
  const before = async () => {
    ran++;
  };
  assert.deepEqual(await validOrRefused(unitWrite({ state: 20 }, true), before), { state: 20 });
  assert.equal(ran, 0);
  const err = await validOrRefused(unitWrite({ state: 'x' }, true), before).catch((e) => e);
  assert.equal(ran, 1);
  assert.ok(err instanceof DomainError);
  assert.deepEqual([err.kind, err.status, err.detail], ['invalid', 400, { state: ['"x" is not a valid choice.'] }]);
  const missing = await validOrRefused(unitWrite({ state: 'x' }, true), async () => {
    throw new Error('not found');
  }).catch((e) => e);
  assert.equal(missing.message, 'not found');
});

test('PUT/PATCH /api/units/:id/: a missing unit is 404 before the field errors; field errors of a unit that exists are 400', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const unit = await ctx.c.db.kysely
    .selectFrom('units')
    .innerJoin('translations', 'translations.id', 'units.translation_id')
    .select('units.id')
    .where('units.source', '=', 'Apple')
    .where('translations.language_code', '=', 'cs')
    .executeTakeFirstOrThrow();
  for (const method of ['PUT', 'PATCH'] as const) {
    let res = await ctx.app.inject({ method, url: '/api/units/999999/', headers: AS_ROOT, payload: { target: 7, state: 'x' } });
    assert.deepEqual([res.statusCode, res.json()], [404, { detail: 'Not found.' }]);
    res = await ctx.app.inject({ method, url: `/api/units/${unit.id}/`, headers: AS_ROOT, payload: { target: 7, state: 'x' } });
    assert.deepEqual([res.statusCode, res.json()], [400, { target: ['Expected a list of items but got type "int".'], state: ['"x" is not a valid choice.'] }]);
  }
});
