// Unit identity hashes as Weblate computes them (weblate/utils/hash.py, formats/base.py):
// SipHash-2-4 keyed with "Weblate Sip Hash" over the UTF-8 bytes of the concatenated parts, the
// unsigned 64-bit result shifted into the signed range by subtracting 2**63 (not a two's complement
// reinterpretation). `id_hash` covers source + context for bilingual units and context alone for
// monolingual ones; `content_hash` always covers source + context.
//
// Hearth stores plural forms joined by one U+001E; Weblate joins them with two (PLURAL_SEPARATOR =
// "\x1e\x1e" in weblate/trans/util.py) before hashing, so sources are converted first.

/** Hearth's plural separator in stored `source`/`target` text. */
export const PLURAL_SEPARATOR = '\x1e';
/** Weblate's plural separator (weblate/trans/util.py), used for the hashed text. */
export const WEBLATE_PLURAL_SEPARATOR = '\x1e\x1e';

const KEY = new TextEncoder().encode('Weblate Sip Hash');
const TWO_63 = 1n << 63n;

/** Source text as Weblate hashes it: forms (array, or Hearth text split on U+001E) joined by "\x1e\x1e". */
export function weblateSource(source: string | readonly string[]): string {
  const forms = typeof source === 'string' ? source.split(PLURAL_SEPARATOR) : source;
  return forms.join(WEBLATE_PLURAL_SEPARATOR);
}

/** SipHash-2-4 of `data` with a 16-byte key, as an unsigned 64-bit bigint. */
export function siphash24(key: Uint8Array, data: Uint8Array): bigint {
  if (key.length !== 16) throw new Error('siphash24: the key must be 16 bytes');
  // 64-bit lanes as [high, low] uint32 pairs; arithmetic stays in 32-bit integers.
  const k0l = readU32(key, 0),
    k0h = readU32(key, 4),
    k1l = readU32(key, 8),
    k1h = readU32(key, 12);
  let v0h = (k0h ^ 0x736f6d65) >>> 0,
    v0l = (k0l ^ 0x70736575) >>> 0;
  let v1h = (k1h ^ 0x646f7261) >>> 0,
    v1l = (k1l ^ 0x6e646f6d) >>> 0;
  let v2h = (k0h ^ 0x6c796765) >>> 0,
    v2l = (k0l ^ 0x6e657261) >>> 0;
  let v3h = (k1h ^ 0x74656462) >>> 0,
    v3l = (k1l ^ 0x79746573) >>> 0;

  const round = () => {
    // v0 += v1; v1 = rotl(v1, 13) ^ v0; v0 = rotl(v0, 32)
    let lo = (v0l + v1l) >>> 0;
    v0h = (v0h + v1h + (lo < v0l ? 1 : 0)) >>> 0;
    v0l = lo;
    let h = v1h,
      l = v1l;
    v1h = ((h << 13) | (l >>> 19)) >>> 0;
    v1l = ((l << 13) | (h >>> 19)) >>> 0;
    v1h = (v1h ^ v0h) >>> 0;
    v1l = (v1l ^ v0l) >>> 0;
    h = v0h;
    v0h = v0l;
    v0l = h;
    // v2 += v3; v3 = rotl(v3, 16) ^ v2
    lo = (v2l + v3l) >>> 0;
    v2h = (v2h + v3h + (lo < v2l ? 1 : 0)) >>> 0;
    v2l = lo;
    h = v3h;
    l = v3l;
    v3h = ((h << 16) | (l >>> 16)) >>> 0;
    v3l = ((l << 16) | (h >>> 16)) >>> 0;
    v3h = (v3h ^ v2h) >>> 0;
    v3l = (v3l ^ v2l) >>> 0;
    // v0 += v3; v3 = rotl(v3, 21) ^ v0
    lo = (v0l + v3l) >>> 0;
    v0h = (v0h + v3h + (lo < v0l ? 1 : 0)) >>> 0;
    v0l = lo;
    h = v3h;
    l = v3l;
    v3h = ((h << 21) | (l >>> 11)) >>> 0;
    v3l = ((l << 21) | (h >>> 11)) >>> 0;
    v3h = (v3h ^ v0h) >>> 0;
    v3l = (v3l ^ v0l) >>> 0;
    // v2 += v1; v1 = rotl(v1, 17) ^ v2; v2 = rotl(v2, 32)
    lo = (v2l + v1l) >>> 0;
    v2h = (v2h + v1h + (lo < v2l ? 1 : 0)) >>> 0;
    v2l = lo;
    h = v1h;
    l = v1l;
    v1h = ((h << 17) | (l >>> 15)) >>> 0;
    v1l = ((l << 17) | (h >>> 15)) >>> 0;
    v1h = (v1h ^ v2h) >>> 0;
    v1l = (v1l ^ v2l) >>> 0;
    h = v2h;
    v2h = v2l;
    v2l = h;
  };
  const compress = (mh: number, ml: number) => {
    v3h = (v3h ^ mh) >>> 0;
    v3l = (v3l ^ ml) >>> 0;
    round();
    round();
    v0h = (v0h ^ mh) >>> 0;
    v0l = (v0l ^ ml) >>> 0;
  };

  const len = data.length;
  const end = len - (len % 8);
  for (let i = 0; i < end; i += 8) compress(readU32(data, i + 4), readU32(data, i));
  // last block: the remaining bytes, the message length (mod 256) in the top byte
  const tail = new Uint8Array(8);
  tail.set(data.subarray(end));
  tail[7] = len & 0xff;
  compress(readU32(tail, 4), readU32(tail, 0));
  v2l = (v2l ^ 0xff) >>> 0;
  for (let i = 0; i < 4; i++) round();
  const hi = (v0h ^ v1h ^ v2h ^ v3h) >>> 0;
  const lo = (v0l ^ v1l ^ v2l ^ v3l) >>> 0;
  return (BigInt(hi) << 32n) | BigInt(lo);
}

function readU32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

const encoder = new TextEncoder();

/** Weblate's raw_hash: unsigned siphash of the concatenated parts. */
export function rawHash(...parts: string[]): bigint {
  return siphash24(KEY, encoder.encode(parts.join('')));
}

/** Weblate's calculate_hash: raw_hash(*parts) - 2**63, a signed 64-bit integer. */
export function calculateHash(...parts: string[]): bigint {
  return rawHash(...parts) - TWO_63;
}

/**
 * The unit's `id_hash`. Bilingual units hash source + context, monolingual ones (translations of a
 * template) the context alone. `source` is Hearth's stored text (forms joined by U+001E) or the forms.
 */
export function idHash(source: string | readonly string[], context: string, monolingual: boolean): bigint {
  return monolingual ? calculateHash(context) : calculateHash(weblateSource(source), context);
}

/** The unit's `content_hash`: source + context, whatever the format. */
export function contentHash(source: string | readonly string[], context: string): bigint {
  return calculateHash(weblateSource(source), context);
}

/** Weblate's hash_to_checksum: format(id_hash + 2**63, "016x"). */
export function checksum(idHash: bigint): string {
  return (idHash + TWO_63).toString(16).padStart(16, '0');
}

/** Weblate's checksum_to_hash: int(checksum, 16) - 2**63; throws on anything but 1–16 hex digits. */
export function checksumToHash(value: string): bigint {
  if (!/^[0-9a-fA-F]{1,16}$/.test(value)) throw new Error(`Invalid checksum: ${value}`);
  return BigInt('0x' + value) - TWO_63;
}
