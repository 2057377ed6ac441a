import { test } from 'node:test';
import assert from 'node:assert/strict';
import { offsetHeaders, pageParams, toQuery, paginateArray } from '../../src/lib/pagination.ts';

const URL = 'http://hearth.test';

test('toQuery sorts keys, encodes brackets and spaces like Rails to_query', () => {
  assert.equal(toQuery({ b: 'x y', a: [1, 2], c: { k: 'v' } }), 'a%5B%5D=1&a%5B%5D=2&b=x+y&c%5Bk%5D=v');
});

test('pageParams: defaults, cap at 100, negatives', () => {
  assert.deepEqual(pageParams({ path: '/', params: {} }), { page: 1, perPage: 20 });
  assert.deepEqual(pageParams({ path: '/', params: {}, per_page: 500, page: 0 }), { page: 1, perPage: 100 });
  assert.deepEqual(pageParams({ path: '/', params: {}, per_page: -5, page: -2 }), { page: 1, perPage: 20 });
});

test('headers of a middle page: order prev, next, first, last; requested per_page echoed', () => {
  const h = offsetHeaders(URL, { path: '/api/v4/users', params: { active: true, per_page: 500, page: 2 }, per_page: 500, page: 2 }, 2, 100, 350, true);
  assert.deepEqual(h, {
    'x-per-page': '100',
    'x-page': '2',
    'x-next-page': '3',
    'x-prev-page': '1',
    link:
      '<http://hearth.test/api/v4/users?active=true&page=1&per_page=500>; rel="prev", ' +
      '<http://hearth.test/api/v4/users?active=true&page=3&per_page=500>; rel="next", ' +
      '<http://hearth.test/api/v4/users?active=true&page=1&per_page=500>; rel="first", ' +
      '<http://hearth.test/api/v4/users?active=true&page=4&per_page=500>; rel="last"',
    'x-total': '350',
    'x-total-pages': '4',
  });
});

test('empty collection: blank next/prev, total 0, total pages 1', () => {
  const h = offsetHeaders(URL, { path: '/x', params: {} }, 1, 20, 0, false);
  assert.equal(h['x-next-page'], '');
  assert.equal(h['x-prev-page'], '');
  assert.equal(h['x-total'], '0');
  assert.equal(h['x-total-pages'], '1');
  assert.equal(h.link, '<http://hearth.test/x?page=1&per_page=20>; rel="first", <http://hearth.test/x?page=1&per_page=20>; rel="last"');
});

test('above 10,000 rows: no totals, no rel=last, next still works', () => {
  const h = offsetHeaders(URL, { path: '/x', params: {} }, 1, 20, null, true);
  assert.equal(h['x-total'], undefined);
  assert.equal(h['x-total-pages'], undefined);
  assert.equal(h['x-next-page'], '2');
  assert.ok(!h.link.includes('rel="last"'));
});

test('a page past the end: empty, both blank, links first and last only', () => {
  const r = paginateArray(URL, { path: '/x', params: {}, page: 9 }, [1, 2, 3]);
  assert.deepEqual(r.items, []);
  assert.equal(r.headers['x-next-page'], '');
  assert.equal(r.headers['x-prev-page'], '');
  assert.equal(r.headers.link, '<http://hearth.test/x?page=1&per_page=20>; rel="first", <http://hearth.test/x?page=1&per_page=20>; rel="last"');
});
