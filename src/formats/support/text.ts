// Lossless text handling shared by every format: decode bytes to a string (remembering the encoding and
// byte-order mark), patch character spans, and encode back so that unpatched bytes come out unchanged.

import { FormatError } from '../types.ts';

export type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'latin1';

export interface TextFile {
  /** the content without its byte-order mark */
  text: string;
  encoding: Encoding;
  /** the byte-order mark bytes found in front of the content ('' when none) */
  bom: Buffer;
}

/** Decode, honouring a UTF-8 / UTF-16 byte-order mark; `fallback` is used without one. Invalid bytes throw FormatError. */
export function decode(content: Buffer, fallback: 'utf-8' | 'latin1' = 'utf-8'): TextFile {
  if (content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf) return decodeAs(content, 3, 'utf-8');
  if (content[0] === 0xff && content[1] === 0xfe) return decodeAs(content, 2, 'utf-16le');
  if (content[0] === 0xfe && content[1] === 0xff) return decodeAs(content, 2, 'utf-16be');
  return decodeAs(content, 0, fallback);
}

function decodeAs(content: Buffer, bomLength: number, encoding: Encoding): TextFile {
  const body = content.subarray(bomLength);
  let text: string;
  if (encoding === 'latin1') {
    text = body.toString('latin1');
  } else {
    try {
      // fatal: a byte sequence that would not survive a round trip is an error, not U+FFFD
      text = new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(body);
    } catch {
      throw new FormatError(`the file is not valid ${encoding.toUpperCase()}`);
    }
  }
  return { text, encoding, bom: Buffer.from(content.subarray(0, bomLength)) };
}

export function encode(file: Pick<TextFile, 'encoding' | 'bom'>, text: string): Buffer {
  let body: Buffer;
  if (file.encoding === 'utf-16be') body = Buffer.from(text, 'utf16le').swap16();
  else if (file.encoding === 'utf-16le') body = Buffer.from(text, 'utf16le');
  else body = Buffer.from(text, file.encoding === 'latin1' ? 'latin1' : 'utf8');
  return Buffer.concat([file.bom, body]);
}

/** Replace text[start, end) with `text`; an insertion has start === end. */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

export function applyEdits(text: string, edits: Edit[]): string {
  // stable order: by position, insertions at one point in the order they were made
  const sorted = edits.map((e, i) => ({ ...e, i })).sort((a, b) => a.start - b.start || a.end - b.end || a.i - b.i);
  let out = '';
  let pos = 0;
  for (const e of sorted) {
    if (e.start < pos) throw new Error(`overlapping edits at ${e.start}`);
    out += text.slice(pos, e.start) + e.text;
    pos = e.end;
  }
  return out + text.slice(pos);
}

/** Byte range of the characters text[start, end) once encoded (BOM included). */
export function byteRange(file: TextFile, start: number, end: number): [number, number] {
  const before = encode(file, file.text.slice(0, start)).length;
  return [before, before + encode({ encoding: file.encoding, bom: Buffer.alloc(0) }, file.text.slice(start, end)).length];
}

/** The line break the file uses ('\r\n' when its first line break is one). */
export function newlineOf(text: string): string {
  const i = text.indexOf('\n');
  return i > 0 && text[i - 1] === '\r' ? '\r\n' : '\n';
}

/** 1-based line and column of an offset, for error messages. */
export function lineCol(text: string, offset: number): string {
  let line = 1;
  let col = 1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      col = 1;
    } else col++;
  }
  return `line ${line}, column ${col}`;
}

/** The whitespace that starts the line holding `offset`. */
export function indentAt(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}
