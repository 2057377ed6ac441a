// A job's log as HTML: ANSI colours (SGR) mapped to classes, every other escape sequence and the
// runner's section markers dropped, carriage-return overwrites resolved as a terminal shows them, and
// every character of the text escaped. The output is built here from escaped text only, so it may go
// into a page through raw().
import { raw, type SafeHtml } from '../../jsx/jsx-runtime.ts';

const SECTION = /section_(?:start|end):\d+:[A-Za-z0-9_.-]+(?:\[[^\]\r\n]*\])?\r?\x1b\[0K/g;
// matched in escaped text (the log is escaped whole first): `ESC >` is `ESC &gt;` there
const ESCAPE = /\x1b\[([0-9;]*)([A-Za-z])|\x1b[()][A-Za-z0-9]|\x1b(?:=|&gt;)/g;
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;
const CONTROL_TEST = /[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/;
/**
 * Text as element content (the log's hot path: plain replaces, no callback per character). Quotes need no
 * escape outside attributes; the log never goes into one.
 */
function escapeHtml(s: string): string {
  if (s.includes('&')) s = s.replace(/&/g, '&amp;');
  if (s.includes('<')) s = s.replace(/</g, '&lt;');
  if (s.includes('>')) s = s.replace(/>/g, '&gt;');
  return s;
}

interface Style {
  fg: number | null;
  bg: number | null;
  bold: boolean;
  italic: boolean;
  underline: boolean;
}

const PLAIN: Style = { fg: null, bg: null, bold: false, italic: false, underline: false };

/** SGR results by style and parameters: a log repeats a handful of colour changes on thousands of lines. */
const SGR_MEMO = new Map<string, Style>();

function applySgr(s: Style, params: string): Style {
  const key = `${s.fg}.${s.bg}.${s.bold ? 1 : 0}${s.italic ? 1 : 0}${s.underline ? 1 : 0}|${params}`;
  let out = SGR_MEMO.get(key);
  if (!out) {
    out = computeSgr(s, params);
    if (SGR_MEMO.size >= 4096) SGR_MEMO.clear();
    SGR_MEMO.set(key, out);
  }
  return out;
}

function computeSgr(s: Style, params: string): Style {
  const codes = params === '' ? [0] : params.split(';').map((x) => Number(x) || 0);
  let out = { ...s };
  for (let i = 0; i < codes.length; i++) {
    const n = codes[i]!;
    if (n === 0) out = { ...PLAIN };
    else if (n === 1) out.bold = true;
    else if (n === 3) out.italic = true;
    else if (n === 4) out.underline = true;
    else if (n === 22) out.bold = false;
    else if (n === 23) out.italic = false;
    else if (n === 24) out.underline = false;
    else if (n >= 30 && n <= 37) out.fg = n - 30;
    else if (n >= 90 && n <= 97) out.fg = n - 90 + 8;
    else if (n === 39) out.fg = null;
    else if (n >= 40 && n <= 47) out.bg = n - 40;
    else if (n >= 100 && n <= 107) out.bg = n - 100 + 8;
    else if (n === 49) out.bg = null;
    else if ((n === 38 || n === 48) && codes[i + 1] === 5)
      i += 2; // 256 colours: not mapped
    else if ((n === 38 || n === 48) && codes[i + 1] === 2) i += 4; // true colour: not mapped
  }
  return out;
}

function classOf(s: Style): string {
  const c: string[] = [];
  if (s.fg !== null) c.push(`term-fg-${s.fg}`);
  if (s.bg !== null) c.push(`term-bg-${s.bg}`);
  if (s.bold) c.push('term-bold');
  if (s.italic) c.push('term-italic');
  if (s.underline) c.push('term-underline');
  return c.join(' ');
}

/** One line's HTML (of escaped text), carrying the style over from the previous line. */
function lineHtml(line: string, style: Style): { html: string; style: Style } {
  let html = '';
  let at = 0;
  let open = classOf(style);
  let text = '';
  const flush = () => {
    if (!text) return;
    html += open ? `<span class="${open}">${text}</span>` : text;
    text = '';
  };
  ESCAPE.lastIndex = 0;
  for (let m = ESCAPE.exec(line); m; m = ESCAPE.exec(line)) {
    text += line.slice(at, m.index);
    at = m.index + m[0].length;
    if (m[2] === 'm') {
      flush();
      style = applySgr(style, m[1] ?? '');
      open = classOf(style);
    }
  }
  text += line.slice(at);
  flush();
  return { html, style };
}

/** Where a rendered piece of log ended: the next line's number and the colours carried into it. */
export interface LogState {
  line: number;
  style: Style;
}

export const LOG_START: LogState = { line: 1, style: PLAIN };

/**
 * Whole lines of log as HTML, numbered from `from.line` with the style carried over (the live log renders
 * each appended piece with the state the previous piece ended in).
 */
export function ansiLinesToHtml(log: string, from: LogState = LOG_START): { html: SafeHtml; state: LogState } {
  // escaped and cleaned whole (no sequence, marker or line end contains a character either step touches)
  let text = log.includes('section_') ? log.replace(SECTION, '') : log;
  if (CONTROL_TEST.test(text)) text = text.replace(CONTROL, '');
  text = escapeHtml(text);
  if (text.includes('\r\n')) text = text.replace(/\r\n/g, '\n');
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  let style: Style = { ...from.style };
  let open = classOf(style);
  let out = '';
  for (let i = 0; i < lines.length; i++) {
    const raw0 = lines[i]!;
    // a carriage return overwrites the line: what a terminal shows is what follows the last one
    const cr = raw0.lastIndexOf('\r');
    const line = cr >= 0 ? raw0.slice(cr + 1) : raw0;
    let html: string;
    if (!line.includes('\x1b')) {
      // most lines have no escape sequence: the style stays
      html = open && line ? `<span class="${open}">${line}</span>` : line;
    } else {
      const r = lineHtml(line, style);
      if (r.style !== style) {
        style = r.style;
        open = classOf(style);
      }
      html = r.html;
    }
    const n = from.line + i;
    // the number is the page's CSS counter (`.job-log > code > span::before`): a line's markup is its anchor only,
    // which keeps a log of short lines about as long as HTML as it is as text
    out += `<span id="L${n}">${html}</span>`;
  }
  return { html: raw(out), state: { line: from.line + lines.length, style } };
}

/** The log as lines of HTML, each with its anchor (`#L12`). */
export function ansiToHtml(log: string): SafeHtml {
  return ansiLinesToHtml(log).html;
}

/**
 * The live log's `state` parameter: the byte offset read so far, the next line number and the style, as
 * `offset.line.fg.bg.flags` (empty colour = none). Null for anything else.
 */
export function encodeLogState(offset: number, s: LogState): string {
  const flags = (s.style.bold ? 1 : 0) | (s.style.italic ? 2 : 0) | (s.style.underline ? 4 : 0);
  return `${offset}.${s.line}.${s.style.fg ?? ''}.${s.style.bg ?? ''}.${flags}`;
}

export function decodeLogState(v: string): { offset: number; state: LogState } | null {
  const m = /^(\d{1,12})(?:\.(\d{1,9})\.(\d{0,2})\.(\d{0,2})\.([0-7]))?$/.exec(v);
  if (!m) return null;
  const colour = (x: string | undefined) => (x === undefined || x === '' || Number(x) > 15 ? null : Number(x));
  const flags = Number(m[5] ?? 0);
  return {
    offset: Number(m[1]),
    state: {
      line: m[2] ? Math.max(1, Number(m[2])) : 1,
      style: { fg: colour(m[3]), bg: colour(m[4]), bold: (flags & 1) !== 0, italic: (flags & 2) !== 0, underline: (flags & 4) !== 0 },
    },
  };
}
