// Syntax highlighting of file views: highlight.js's core with a chosen set of common languages,
// picked by file name or extension (no auto-detection: it is slow and guesses wrong), the output split
// into lines whose spans are balanced (each line can be wrapped with its number and anchor), cached by
// blob id (content-addressed: a blob never changes). Big or binary files are not highlighted.
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import elixir from 'highlight.js/lib/languages/elixir';
import go from 'highlight.js/lib/languages/go';
import haskell from 'highlight.js/lib/languages/haskell';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import lua from 'highlight.js/lib/languages/lua';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import perl from 'highlight.js/lib/languages/perl';
import php from 'highlight.js/lib/languages/php';
import plaintext from 'highlight.js/lib/languages/plaintext';
import properties from 'highlight.js/lib/languages/properties';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import scala from 'highlight.js/lib/languages/scala';
import scss from 'highlight.js/lib/languages/scss';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Worker } from 'node:worker_threads';
import { escapeHtml } from './jsx/jsx-runtime.ts';

const LANGUAGES = {
  bash,
  c,
  cpp,
  csharp,
  css,
  diff,
  dockerfile,
  elixir,
  go,
  haskell,
  ini,
  java,
  javascript,
  json,
  kotlin,
  lua,
  makefile,
  markdown,
  perl,
  php,
  plaintext,
  properties,
  python,
  ruby,
  rust,
  scala,
  scss,
  sql,
  swift,
  typescript,
  xml,
  yaml,
};
for (const [name, def] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, def);

const BY_EXTENSION: Record<string, keyof typeof LANGUAGES> = {
  sh: 'bash',
  bash: 'bash',
  zsh: 'bash',
  c: 'c',
  h: 'c',
  cc: 'cpp',
  cpp: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  hh: 'cpp',
  cs: 'csharp',
  css: 'css',
  diff: 'diff',
  patch: 'diff',
  ex: 'elixir',
  exs: 'elixir',
  go: 'go',
  hs: 'haskell',
  ini: 'ini',
  toml: 'ini',
  cfg: 'ini',
  conf: 'ini',
  java: 'java',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  json: 'json',
  kt: 'kotlin',
  kts: 'kotlin',
  lua: 'lua',
  mk: 'makefile',
  md: 'markdown',
  markdown: 'markdown',
  pl: 'perl',
  pm: 'perl',
  php: 'php',
  txt: 'plaintext',
  properties: 'properties',
  py: 'python',
  rb: 'ruby',
  rake: 'ruby',
  gemspec: 'ruby',
  rs: 'rust',
  scala: 'scala',
  scss: 'scss',
  sql: 'sql',
  swift: 'swift',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  html: 'xml',
  htm: 'xml',
  xml: 'xml',
  svg: 'xml',
  xliff: 'xml',
  xlf: 'xml',
  vue: 'xml',
  yml: 'yaml',
  yaml: 'yaml',
  po: 'plaintext',
};

const BY_NAME: Record<string, keyof typeof LANGUAGES> = {
  makefile: 'makefile',
  gnumakefile: 'makefile',
  dockerfile: 'dockerfile',
  containerfile: 'dockerfile',
  gemfile: 'ruby',
  rakefile: 'ruby',
  '.bashrc': 'bash',
  '.profile': 'bash',
  '.gitignore': 'plaintext',
  '.gitlab-ci.yml': 'yaml',
};

/** The language of a file by its name (null: none we know, shown as plain text). */
export function languageOf(filePath: string): string | null {
  const name = filePath.slice(filePath.lastIndexOf('/') + 1).toLowerCase();
  const byName = BY_NAME[name];
  if (byName) return byName;
  const dot = name.lastIndexOf('.');
  if (dot < 0) return null;
  return BY_EXTENSION[name.slice(dot + 1)] ?? null;
}

/** Files over this size are shown as plain text (and over BLOB_VIEW_MAX not at all). */
export const HIGHLIGHT_MAX = 512 * 1024;
/** Files over this size are not shown: "view raw". */
export const BLOB_VIEW_MAX = 1024 * 1024;

/** Binary content: a NUL byte in the first 8 KiB (git's own test). */
export function isBinary(data: Buffer): boolean {
  return data.subarray(0, 8000).includes(0);
}

/**
 * highlight.js markup split into lines: every line closes the spans open at its end and the next
 * line reopens them, so each line is balanced markup on its own.
 */
export function splitHighlighted(htmlText: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  let cur = '';
  const re = /<span[^>]*>|<\/span>|\n/g;
  let last = 0;
  for (let m = re.exec(htmlText); m; m = re.exec(htmlText)) {
    cur += htmlText.slice(last, m.index);
    last = re.lastIndex;
    const tok = m[0];
    if (tok === '\n') {
      lines.push(cur + '</span>'.repeat(open.length));
      cur = open.join('');
    } else if (tok === '</span>') {
      open.pop();
      cur += tok;
    } else {
      open.push(tok);
      cur += tok;
    }
  }
  cur += htmlText.slice(last);
  lines.push(cur + '</span>'.repeat(open.length));
  return lines;
}

/** Splits text into lines (a final newline does not make an extra empty line). */
function textLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export interface Highlighted {
  /** the language used, null for plain text */
  language: string | null;
  /** one balanced HTML fragment per line (escaped text, hljs spans) */
  lines: string[];
  bytes: number;
}

/** LRU by blob id and language, bounded by the size of the markup held. */
const CACHE_BYTES = 64 * 1024 * 1024;
const cache = new Map<string, Highlighted>();
let cacheBytes = 0;

function remember(key: string, h: Highlighted): void {
  if (h.bytes > CACHE_BYTES / 8) return;
  cache.set(key, h);
  cacheBytes += h.bytes;
  for (const [k, v] of cache) {
    if (cacheBytes <= CACHE_BYTES) break;
    cache.delete(k);
    cacheBytes -= v.bytes;
  }
}

/** Up to this size a file is highlighted in the request that first shows it. */
export const SYNC_HIGHLIGHT_MAX = 32 * 1024;
const pending = new Set<string>();

/**
 * The lines of a file page. A big file not highlighted yet is shown as escaped plain text at once
 * (a 2,000-line file costs highlight.js some 40 ms) and highlighted by a worker thread, off the
 * event loop, for every later view; small files are highlighted at once.
 */
export function highlightForView(blobSha: string, filePath: string, data: Buffer): Highlighted {
  const language = data.length <= HIGHLIGHT_MAX ? languageOf(filePath) : null;
  if (!language || language === 'plaintext' || data.length <= SYNC_HIGHLIGHT_MAX) return highlightBlob(blobSha, filePath, data);
  const key = `${blobSha}\0${language}`;
  const hit = cache.get(key);
  if (hit) return highlightBlob(blobSha, filePath, data);
  if (!pending.has(key)) {
    pending.add(key);
    highlightInWorker(data.toString('utf8'), language)
      .then((lines) => store(key, language, lines))
      .catch(() => {})
      .finally(() => pending.delete(key));
  }
  return plainBlob(blobSha, data);
}

/** The lines of a blob as escaped plain text (cached like highlighted ones). */
function plainBlob(blobSha: string, data: Buffer): Highlighted {
  const key = `${blobSha}\0`;
  const hit = cache.get(key);
  if (hit) return hit;
  const lines = textLines(data.toString('utf8')).map(escapeHtml);
  let bytes = 0;
  for (const l of lines) bytes += l.length + 16;
  const h: Highlighted = { language: null, lines, bytes };
  remember(key, h);
  return h;
}

/**
 * The lines of a text blob as HTML, highlighted when the file's language is known and the file is
 * not too big. `blobSha` names the content (the cache key); `data` is its bytes.
 */
export function highlightBlob(blobSha: string, filePath: string, data: Buffer): Highlighted {
  const language = data.length <= HIGHLIGHT_MAX ? languageOf(filePath) : null;
  const key = `${blobSha}\0${language ?? ''}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const lines = highlightLines(data.toString('utf8'), language);
  return store(key, language, lines);
}

/** The lines of a text as HTML: highlighted in `language`, or escaped (the worker runs this too). */
export function highlightLines(text: string, language: string | null): string[] {
  if (language && language !== 'plaintext') {
    return splitHighlighted(hljs.highlight(text.endsWith('\n') ? text.slice(0, -1) : text, { language, ignoreIllegals: true }).value);
  }
  return textLines(text).map(escapeHtml);
}

function store(key: string, language: string | null, lines: string[]): Highlighted {
  let bytes = 0;
  for (const l of lines) bytes += l.length + 16;
  const h: Highlighted = { language: language === 'plaintext' ? null : language, lines, bytes };
  remember(key, h);
  return h;
}

// ---- the worker thread for big files --------------------------------------------------------------

let worker: Worker | null = null;
let nextJob = 0;
const jobs = new Map<number, { resolve: (lines: string[]) => void; reject: (e: Error) => void }>();

/** highlight.js on a worker thread (started at the first big file, then kept; it does not hold the process open). */
function highlightInWorker(text: string, language: string): Promise<string[]> {
  if (!worker) {
    const w = new Worker(new URL('./highlight-worker.mjs', import.meta.url));
    w.on('message', (m: { id: number; lines?: string[]; error?: string }) => {
      const job = jobs.get(m.id);
      jobs.delete(m.id);
      if (m.lines) job?.resolve(m.lines);
      else job?.reject(new Error(m.error ?? 'highlight failed'));
    });
    w.on('error', (e) => {
      for (const j of jobs.values()) j.reject(e);
      jobs.clear();
      worker = null;
    });
    w.unref(); // after the listeners: adding a 'message' listener refs the worker again
    worker = w;
  }
  const id = ++nextJob;
  return new Promise<string[]>((resolve, reject) => {
    jobs.set(id, { resolve, reject });
    worker!.postMessage({ id, text, language });
  });
}
