import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VersionedCache } from '../../src/lib/versioned-cache.ts';

test('entries are valid for their stamp and their time to live, the oldest goes first', () => {
  const cache = new VersionedCache<string>(2, 1000);
  cache.set('a', 's1', 'A', 0);
  cache.set('b', 's1', 'B', 0);
  assert.equal(cache.get('a', 's1', 10), 'A');
  assert.equal(cache.get('a', 's2', 10), undefined, 'another stamp misses');
  assert.equal(cache.get('a', 's1', 10), undefined, 'and the stale entry is gone');
  assert.equal(cache.get('b', 's1', 1001), undefined, 'older than the time to live');
  cache.set('c', 's1', 'C', 0);
  cache.set('d', 's1', 'D', 0);
  cache.set('e', 's1', 'E', 0);
  assert.deepEqual(
    ['c', 'd', 'e'].map((k) => cache.get(k, 's1', 0)),
    [undefined, 'D', 'E'],
  );
});

test('with sizes, the entries stay within the budget and a too large entry is not kept', () => {
  const cache = new VersionedCache<Buffer>(100, 60_000, { size: (b) => b.length, maxSize: 800 });
  for (let i = 0; i < 10; i++) cache.set(`k${i}`, 's', Buffer.alloc(100, i), 0);
  // 800 bytes: the two oldest of the ten 100-byte entries were evicted
  assert.deepEqual(
    Array.from({ length: 10 }, (_, i) => cache.get(`k${i}`, 's', 0)?.[0] ?? null),
    [null, null, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  cache.set('big', 's', Buffer.alloc(101), 0);
  assert.equal(cache.get('big', 's', 0), undefined, 'more than an eighth of the budget');
  assert.equal(cache.get('k9', 's', 0)?.[0], 9, 'and nothing was evicted for it');
  // replacing an entry counts its new size only
  cache.set('k9', 's', Buffer.alloc(50, 1), 0);
  cache.set('n1', 's', Buffer.alloc(100, 1), 0);
  // 750 + 100 > 800: the oldest (k2) goes, and 650 + 100 fits
  assert.deepEqual(
    ['k2', 'k3', 'k9', 'n1'].map((k) => cache.get(k, 's', 0)?.length ?? null),
    [null, 100, 50, 100],
  );
});
