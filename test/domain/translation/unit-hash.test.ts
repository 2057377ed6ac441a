import { test } from 'node:test';
import assert from 'node:assert/strict';
import { calculateHash, checksum, checksumToHash, contentHash, idHash, rawHash, siphash24, weblateSource } from '../../../src/domain/translation/units/hash.ts';

const key = Uint8Array.from({ length: 16 }, (_, i) => i);
const message = (n: number) => Uint8Array.from({ length: n }, (_, i) => i);

test('siphash24: published SipHash-2-4 test vectors (key 00..0f, message 00..n-1)', () => {
  // from the reference implementation's vectors.h (little-endian outputs, read as integers)
  assert.equal(siphash24(key, message(0)), 0x726fdb47dd0e0e31n);
  assert.equal(siphash24(key, message(1)), 0x74f839c593dc67fdn);
  assert.equal(siphash24(key, message(7)), 0xab0200f58b01d137n);
  assert.equal(siphash24(key, message(8)), 0x93f5f5799a932462n);
  assert.equal(siphash24(key, message(15)), 0xa129ca6149be45e5n);
  assert.equal(siphash24(key, message(63)), 0x958a324ceb064572n);
  assert.throws(() => siphash24(new Uint8Array(8), message(1)), /16 bytes/);
});

test("calculateHash: the values of Weblate's utils/tests/test_hash.py", () => {
  assert.equal(calculateHash('Message'), 8445691827737211251n);
  assert.equal(calculateHash('Context', 'Message'), -1602104568316855346n);
  assert.equal(calculateHash('Příšerně žluťoučký kůň úpěl ďábelské ódy'), -4296353750398394478n);
  assert.equal(checksum(calculateHash('Message')), 'f5351ff85ab23173');
  assert.equal(checksumToHash('f5351ff85ab23173'), 8445691827737211251n);
  // raw_hash is the unsigned value, calculate_hash subtracts 2**63
  assert.equal(rawHash('Message'), 8445691827737211251n + 2n ** 63n);
  assert.equal(calculateHash(), rawHash('') - 2n ** 63n);
});

test('checksum keeps 16 hex digits and round-trips the extremes', () => {
  assert.equal(checksum(-(2n ** 63n)), '0000000000000000');
  assert.equal(checksum(2n ** 63n - 1n), 'ffffffffffffffff');
  assert.equal(checksumToHash('0000000000000000'), -(2n ** 63n));
  assert.throws(() => checksumToHash('xyz'), /Invalid checksum: xyz/);
});

test('idHash: bilingual over source + context, monolingual over context only', () => {
  assert.equal(idHash('Message', '', false), 8445691827737211251n);
  assert.equal(idHash('Context', 'Message', false), -1602104568316855346n); // "Context" + "Message"
  assert.equal(idHash('anything', 'Message', true), 8445691827737211251n);
  assert.equal(contentHash('Message', ''), 8445691827737211251n);
  assert.equal(contentHash('Mess', 'age'), 8445691827737211251n);
});

test("plural sources are hashed joined by Weblate's two U+001E", () => {
  assert.equal(weblateSource('one\x1eother'), 'one\x1e\x1eother');
  assert.equal(weblateSource(['one', 'other']), 'one\x1e\x1eother');
  const expected = calculateHash('%d file\x1e\x1e%d files', 'ctx');
  assert.equal(idHash('%d file\x1e%d files', 'ctx', false), expected);
  assert.equal(idHash(['%d file', '%d files'], 'ctx', false), expected);
  assert.equal(contentHash(['%d file', '%d files'], 'ctx'), expected);
  assert.notEqual(expected, calculateHash('%d file\x1e%d files', 'ctx'));
});
