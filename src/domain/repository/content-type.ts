// What a blob is served as, from its first bytes: Go's http.DetectContentType (the WHATWG sniffing
// table), then Workhorse's rules for raw blobs (text as text/plain, SVG and anything that is not an
// image, text, video or PDF as an attachment). Pure functions.

const isBinaryByte = (b: number) => b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f);
const isWs = (b: number) => b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d || b === 0x20;

const HTML_TAGS = [
  '<!DOCTYPE HTML',
  '<HTML',
  '<HEAD',
  '<SCRIPT',
  '<IFRAME',
  '<H1',
  '<DIV',
  '<FONT',
  '<TABLE',
  '<A',
  '<STYLE',
  '<TITLE',
  '<B',
  '<BODY',
  '<BR',
  '<P',
  '<!--',
];

function startsWith(data: Buffer, at: number, sig: string | number[]): boolean {
  const bytes = typeof sig === 'string' ? Buffer.from(sig, 'latin1') : sig;
  if (data.length - at < bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] >= 0 && data[at + i] !== bytes[i]) return false;
  return true;
}

/** Go's http.DetectContentType (the WHATWG sniffing table) on the first 512 bytes. */
export function detectContentType(head: Buffer): string {
  const data = head.subarray(0, 512);
  let ws = 0;
  while (ws < data.length && isWs(data[ws])) ws++;
  for (const tag of HTML_TAGS) {
    if (data.length - ws < tag.length + 1) continue;
    if (data.toString('latin1', ws, ws + tag.length).toUpperCase() !== tag) continue;
    const next = data[ws + tag.length];
    if (next === 0x20 || next === 0x3e) return 'text/html; charset=utf-8';
  }
  if (startsWith(data, ws, '<?xml')) return 'text/xml; charset=utf-8';
  const any = -1;
  const table: [number[] | string, string][] = [
    ['%PDF-', 'application/pdf'],
    ['%!PS-Adobe-', 'application/postscript'],
    [[0xfe, 0xff], 'text/plain; charset=utf-16be'],
    [[0xff, 0xfe], 'text/plain; charset=utf-16le'],
    [[0xef, 0xbb, 0xbf], 'text/plain; charset=utf-8'],
    [[0, 0, 1, 0], 'image/x-icon'],
    [[0, 0, 2, 0], 'image/x-icon'],
    ['BM', 'image/bmp'],
    ['GIF87a', 'image/gif'],
    ['GIF89a', 'image/gif'],
    [[0x52, 0x49, 0x46, 0x46, any, any, any, any, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50], 'image/webp'],
    [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png'],
    [[0xff, 0xd8, 0xff], 'image/jpeg'],
    ['.snd', 'audio/basic'],
    [[0x46, 0x4f, 0x52, 0x4d, any, any, any, any, 0x41, 0x49, 0x46, 0x46], 'audio/aiff'],
    ['ID3', 'audio/mpeg'],
    [[0x4f, 0x67, 0x67, 0x53, 0x00], 'application/ogg'],
    [[0x4d, 0x54, 0x68, 0x64, 0, 0, 0, 6], 'audio/midi'],
    [[0x52, 0x49, 0x46, 0x46, any, any, any, any, 0x41, 0x56, 0x49, 0x20], 'video/avi'],
    [[0x52, 0x49, 0x46, 0x46, any, any, any, any, 0x57, 0x41, 0x56, 0x45], 'audio/wave'],
  ];
  for (const [sig, type] of table) if (startsWith(data, 0, sig)) return type;
  // mp4: an ftyp box whose brands include "mp4"
  if (data.length >= 12) {
    const boxSize = data.readUInt32BE(0);
    if (boxSize % 4 === 0 && data.length >= boxSize && data.toString('latin1', 4, 8) === 'ftyp') {
      for (let st = 8; st < boxSize; st += 4) {
        if (st === 12) continue; // the minor version
        if (data.toString('latin1', st, st + 3) === 'mp4') return 'video/mp4';
      }
    }
  }
  const rest: [number[] | string, string][] = [
    [[0x1a, 0x45, 0xdf, 0xa3], 'video/webm'],
    ['wOFF', 'font/woff'],
    ['wOF2', 'font/woff2'],
    [[0x00, 0x01, 0x00, 0x00], 'font/ttf'],
    ['OTTO', 'font/otf'],
    ['ttcf', 'font/collection'],
    [[0x1f, 0x8b, 0x08], 'application/x-gzip'],
    [[0x50, 0x4b, 0x03, 0x04], 'application/zip'],
    [[0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x00], 'application/x-rar-compressed'],
    [[0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x01, 0x00], 'application/x-rar-compressed'],
    [[0x00, 0x61, 0x73, 0x6d], 'application/wasm'],
  ];
  for (const [sig, type] of rest) if (startsWith(data, 0, sig)) return type;
  for (let i = ws; i < data.length; i++) if (isBinaryByte(data[i])) return 'application/octet-stream';
  return 'text/plain; charset=utf-8';
}

const SVG = /^\s*(?:<\?xml[^>]*>\s*)?(?:<!doctype svg[^>]*>\s*)?<svg[^>]*>/i;

/**
 * What Workhorse sends for a blob (internal/headers/content_headers.go): text of any kind as
 * text/plain, SVG and anything not an image, text, video or PDF as an attachment.
 */
export function blobHeaders(head: Buffer): { type: string; disposition: string } {
  const sample = head.subarray(0, 4096);
  let svg = false;
  if (!sample.subarray(0, 24).some((b) => b <= 8)) svg = SVG.test(sample.toString('utf8').replace(/<!--[\s\S]*?-->/g, ''));
  let type = svg ? 'image/svg+xml' : detectContentType(head);
  if (type.startsWith('text')) type = 'text/plain; charset=utf-8';
  const inline = !svg && /^(image|text|video)|application\/pdf/.test(type);
  return { type, disposition: inline ? 'inline' : 'attachment' };
}
