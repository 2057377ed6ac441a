// Repository trees, blobs and archives (GitLab lib/api/repositories.rb): GET tree, blobs/:sha,
// blobs/:sha/raw and archive[.format]. Trees and blobs are read through the cat-file pool (trees are
// cached by their object id, which never changes meaning); archives stream from `git archive`
// without being buffered.
import type { ChildProcess } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Container } from '../../../container.ts';
import { isSafePath } from '../../../git/command.ts';
import { parseTree, type TreeEntry } from '../../../git/objects.ts';
import type { Repository } from '../../../git/repository.ts';
import { isValidRevision } from '../../../git/refs.ts';
import { Errors } from '../../../lib/errors.ts';
import { DEFAULT_PER_PAGE, MAX_PER_PAGE, paginateArray, toQuery } from '../../../lib/pagination.ts';
import { FixedWindowLimiter } from '../../plugins/rate-limit.ts';
import { linkParams, PaginationProps } from '../schemas/common.ts';
import { resolveRef, type RepoContext } from '../../../domain/repository/context.ts';

const TAGS = ['repositories'];

// ---- paths ---------------------------------------------------------------------------------------

/**
 * A path inside the repository from a user (`path` of tree and archive, `exclude_paths`), without its
 * trailing slashes; '' for the root; null when it cannot name anything. Besides isSafePath's rules it
 * refuses CR and LF (the cat-file protocol is line based). A leading `-` is allowed: these paths only
 * ever reach git after `<commit>:` or after `--` as literal pathspecs, never as an option.
 */
export function repoPath(raw: string | undefined): string | null {
  if (raw === undefined) return '';
  const p = raw.replace(/\/+$/, '');
  if (p === '' || p === '.') return '';
  if (/[\r\n]/.test(p)) return null;
  return isSafePath(p.startsWith('-') ? `x${p}` : p) ? p : null;
}

/** The commit a ref names, through the cached ref list when the name is a branch or tag. */
async function commitOf(ctx: RepoContext, ref: string | undefined): Promise<string | null> {
  const name = ref || ctx.project.default_branch || 'main';
  // git's own precedence: a full SHA, then refs/tags/<name>, then refs/heads/<name>
  if (!/^[0-9a-f]{40}$|^[0-9a-f]{64}$/i.test(name) && isValidRevision(name)) {
    const index = refIndex(await ctx.repo.refs());
    const hit = index.get(name);
    if (hit !== undefined) return hit || resolveRef(ctx, name);
  }
  return resolveRef(ctx, name);
}

const refIndexes = new WeakMap<object, Map<string, string>>();

/** short name → commit, tags first (git resolves `v1` to refs/tags/v1 before refs/heads/v1). */
function refIndex(refs: Awaited<ReturnType<Repository['refs']>>): Map<string, string> {
  let index = refIndexes.get(refs);
  if (!index) {
    index = new Map();
    // '': ask git (a lightweight tag may name a tree or a blob; it still hides a branch of that name)
    for (const r of refs) if (r.kind === 'tag') index.set(r.short, r.tag?.type === 'commit' ? r.commit : '');
    for (const r of refs) if (r.kind === 'branch' && !index.has(r.short)) index.set(r.short, r.commit);
    refIndexes.set(refs, index);
  }
  return index;
}

/** A read that fails because the repository is missing on disk means "nothing there". */
async function orMissing<T>(repo: Repository, read: () => Promise<T>, missing: T): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (!repo.exists()) return missing;
    throw e;
  }
}

// ---- tree listings -------------------------------------------------------------------------------

interface TreeObject {
  id: string;
  name: string;
  type: 'tree' | 'blob' | 'commit';
  path: string;
  mode: string;
}

const TreeObjectSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  path: Type.String(),
  mode: Type.String(),
});

interface Listing {
  /** GitLab's Tree#sorted_entries: trees, then blobs, then submodules, each in git's order */
  entries: TreeObject[];
  byPath?: Map<string, number>;
  byId?: Map<string, number>;
}

/** Listings by (tree id, base path, recursive): immutable, bounded by the number of entries held. */
class ListingCache {
  private readonly map = new Map<string, Listing>();
  private held = 0;
  constructor(private readonly maxEntries: number) {}

  get(key: string): Listing | undefined {
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
    }
    return hit;
  }

  set(key: string, listing: Listing): void {
    if (listing.entries.length > this.maxEntries / 2) return; // one huge tree must not flush everything
    this.map.set(key, listing);
    this.held += listing.entries.length;
    for (const [k, v] of this.map) {
      if (this.held <= this.maxEntries) break;
      this.map.delete(k);
      this.held -= v.entries.length;
    }
  }
}

const listings = new ListingCache(200_000);

/** A small insertion-ordered map that forgets its oldest keys (for immutable values). */
class Bounded<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
    this.map.set(key, value);
  }
}

/** `<commit>:<path>` → the object there (or null): a commit's content never changes. */
const objectsAt = new Bounded<{ sha: string; type: string } | null>(50_000);

/**
 * Serialised pages by (listing, request URL): the URL holds every parameter the page and its Link
 * headers depend on, the listing key everything else, so an entry never goes stale.
 */
const pages = new Bounded<{ body: Buffer; headers: Record<string, string> }>(2_000);
const PAGE_CACHE_MAX_BYTES = 256 * 1024;

const join = (base: string, name: string) => (base ? `${base}/${name}` : name);

function treeObject(e: TreeEntry, path: string): TreeObject {
  return { id: e.sha, name: e.name, type: e.type, path, mode: e.mode };
}

function sorted(entries: TreeObject[]): TreeObject[] {
  const trees: TreeObject[] = [];
  const blobs: TreeObject[] = [];
  const submodules: TreeObject[] = [];
  for (const e of entries) (e.type === 'tree' ? trees : e.type === 'blob' ? blobs : submodules).push(e);
  for (const b of blobs) trees.push(b);
  for (const s of submodules) trees.push(s);
  return trees;
}

/** `git ls-tree -r -t -z <tree>`: every entry below the tree, each tree before its content. */
async function recursiveEntries(repo: Repository, treeSha: string, base: string): Promise<TreeObject[]> {
  const { stdout } = await repo.run(['ls-tree', '-r', '-t', '-z', treeSha], { maxBytes: 512 * 1024 * 1024 });
  const out: TreeObject[] = [];
  let i = 0;
  while (i < stdout.length) {
    const nul = stdout.indexOf(0, i);
    const end = nul < 0 ? stdout.length : nul;
    const tab = stdout.indexOf(9, i);
    const [mode, type, id] = stdout.toString('latin1', i, tab).split(' ');
    const rel = stdout.toString('utf8', tab + 1, end);
    const slash = rel.lastIndexOf('/');
    out.push({ id, name: slash < 0 ? rel : rel.slice(slash + 1), type: type as TreeObject['type'], path: join(base, rel), mode: mode.padStart(6, '0') });
    i = end + 1;
  }
  return out;
}

/** A submodule entry at `path` (its commit is in another repository, so cat-file misses it), or null. */
async function gitlinkAt(repo: Repository, commit: string, path: string): Promise<{ sha: string; type: string } | null> {
  const slash = path.lastIndexOf('/');
  const parent = await repo.tree(commit, slash < 0 ? '' : path.slice(0, slash));
  const entry = parent?.find((e) => e.name === path.slice(slash + 1));
  return entry?.type === 'commit' ? { sha: entry.sha, type: 'commit' } : null;
}

/** The sorted listing of a tree object (cached). */
async function listing(repo: Repository, treeSha: string, base: string, recursive: boolean): Promise<Listing> {
  const key = `${treeSha}\0${base}\0${recursive ? 1 : 0}`;
  const hit = listings.get(key);
  if (hit) return hit;
  let entries: TreeObject[];
  if (recursive) {
    entries = await recursiveEntries(repo, treeSha, base);
  } else {
    const o = await repo.read(treeSha);
    if (!o || o.type !== 'tree') throw Errors.notFound('Tree');
    entries = parseTree(o.content!).map((e) => treeObject(e, join(base, e.name)));
  }
  const l: Listing = { entries: sorted(entries) };
  listings.set(key, l);
  return l;
}

/**
 * Where a keyset page starts, as Gitaly finds it: a base64 JSON token `{"file_name": <entry path>}`
 * names the last entry of the previous page; anything else is an (old style) object id. -1: no such entry.
 */
function keysetStart(l: Listing, token: string): { index: number; start: string } {
  let fileName: string | null = null;
  if (/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(token)) {
    try {
      const v = JSON.parse(Buffer.from(token, 'base64').toString('utf8'));
      if (v === null) fileName = '';
      else if (typeof v === 'object' && !Array.isArray(v)) fileName = typeof v.file_name === 'string' ? v.file_name : '';
    } catch {
      /* not JSON: an object id */
    }
  }
  if (fileName === '') return { index: 0, start: '' };
  if (fileName !== null) {
    l.byPath ??= new Map(l.entries.map((e, i) => [e.path, i]));
    const i = l.byPath.get(fileName);
    return { index: i === undefined ? -1 : i + 1, start: fileName };
  }
  if (!l.byId) {
    l.byId = new Map();
    l.entries.forEach((e, i) => l.byId!.has(e.id) || l.byId!.set(e.id, i));
  }
  const i = l.byId.get(token);
  return { index: i === undefined ? -1 : i + 1, start: token };
}

const pageToken = (e: TreeObject) => Buffer.from(JSON.stringify({ file_name: e.path })).toString('base64');

// ---- raw blobs -----------------------------------------------------------------------------------

/** Bigger blobs are streamed from their own `git cat-file` instead of the shared pool. */
const POOLED_BLOB_MAX = 8 * 1024 * 1024;

const isBinaryByte = (b: number) => b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f);
const isWs = (b: number) => b === 0x09 || b === 0x0a || b === 0x0c || b === 0x0d || b === 0x20;

const HTML_TAGS = ['<!DOCTYPE HTML', '<HTML', '<HEAD', '<SCRIPT', '<IFRAME', '<H1', '<DIV', '<FONT', '<TABLE', '<A', '<STYLE', '<TITLE', '<B', '<BODY', '<BR', '<P', '<!--'];

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

/** blob SHA → its headers (content never changes under a SHA) */
const headersOfBlob = new Map<string, { type: string; disposition: string }>();

// Gitlab::NoCacheHeaders
const NO_CACHE = { 'cache-control': 'max-age=0, private, must-revalidate, no-store, no-cache', expires: 'Fri, 01 Jan 1990 00:00:00 GMT' };

/** The first bytes of a stream (up to n, or all of it when shorter), leaving them readable again. */
function peek(stream: Readable, n: number): Promise<{ head: Buffer; ended: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const finish = (ended: boolean) => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', reject);
      const head = Buffer.concat(chunks);
      if (!ended && head.length) stream.unshift(head);
      resolve({ head, ended });
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while (got < n && (chunk = stream.read()) !== null) {
        chunks.push(chunk);
        got += chunk.length;
      }
      if (got >= n) finish(false);
    };
    const onEnd = () => finish(true);
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('error', reject);
  });
}

const exitCode = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => {
        child.once('close', (code) => resolve(code));
        child.once('error', () => resolve(null));
      });

/**
 * Streams a child's stdout as the response body: the end is held back until git exits, and a
 * failure after the first byte aborts the response (the client sees a truncated transfer, never a
 * complete-looking broken file). The child is killed when the client goes away.
 */
function pipeChild(reply: FastifyReply, child: ChildProcess): PassThrough {
  const out = new PassThrough({ highWaterMark: 256 * 1024 });
  child.stdout!.pipe(out, { end: false });
  child.once('close', (code) => {
    if (code === 0) out.end();
    else if (reply.raw.destroyed) out.destroy(); // the client left: nothing to report
    else out.destroy(new Error(`git exited with ${code}`));
  });
  reply.raw.once('close', () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    // a filter git started (bzip2) holds the pipe too: closing our end makes it stop as well
    child.stdout!.destroy();
  });
  return out;
}

// ---- archives ------------------------------------------------------------------------------------

/** Gitlab::PathRegex.archive_formats_regex: the suffixes the archive route accepts. */
const PATH_FORMATS = new Set(['zip', 'tar', 'tar.gz', 'tgz', 'gz', 'tar.bz2', 'tbz', 'tbz2', 'tb2', 'bz2']);

/** Gitlab::Git::Repository#archive_file_path: the extension of a requested format. */
function archiveExtension(format: string | undefined): 'zip' | 'tar' | 'tar.gz' | 'tar.bz2' {
  switch (format) {
    case 'tar.bz2':
    case 'tbz':
    case 'tbz2':
    case 'tb2':
    case 'bz2':
      return 'tar.bz2';
    case 'tar':
      return 'tar';
    case 'zip':
      return 'zip';
    default:
      return 'tar.gz';
  }
}

const HOTLINK_IMAGE = ['image/jpeg', 'image/apng', 'image/png', 'image/webp', 'image/svg+xml', 'image/*'];
const HOTLINK_MEDIA = ['video/webm', 'video/ogg', 'video/*', 'application/ogg', 'audio/webm', 'audio/ogg', 'audio/wav', 'audio/*'];
const HOTLINK_FORMATS = new Set([...HOTLINK_IMAGE, ...HOTLINK_MEDIA, 'text/css']);
const MIME = /^(?:\*\/\*|[\w.+!#$&^-]+\/(?:\*|[\w.+!#$&^-]+))$/;

/**
 * Gitlab::HotlinkingDetector: an archive fetched the way a page embeds a script, image, video or
 * style from another site gets 406 (Sec-Fetch-Mode cors, no-cors or websocket — Node's own fetch
 * sends cors unless told otherwise, as against GitLab — or a media type first in Accept, or an
 * Accept header that does not parse).
 */
function hotlinking(req: FastifyRequest): boolean {
  const mode = req.headers['sec-fetch-mode'];
  if (typeof mode === 'string' && ['cors', 'no-cors', 'websocket'].includes(mode)) return true;
  const header = String(req.headers.accept ?? '').trim();
  if (!header) return false;
  const accepts: { type: string; q: number; i: number }[] = [];
  for (const [i, part] of header.split(',').entries()) {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (!type) continue;
    if (!MIME.test(type)) return true; // Mime::Type::InvalidMimeType
    const qp = params.find((p) => p.startsWith('q='));
    accepts.push({ type, q: qp ? Number(qp.slice(2)) || 0 : 1, i });
  }
  accepts.sort((a, b) => b.q - a.q || a.i - b.i);
  if (!accepts.length) return false;
  const types = accepts.map((a) => a.type);
  if (HOTLINK_IMAGE.includes(types[0]) && types.includes('application/x-ms-application')) return false;
  return HOTLINK_FORMATS.has(types[0]);
}

/** A header value git-style: the name's UTF-8 bytes as they are (Node writes header strings as latin1). */
const rawUtf8 = (s: string) => Buffer.from(s.replace(/["\\]/g, '\\$&'), 'utf8').toString('latin1');

// ---- schemas -------------------------------------------------------------------------------------

const IdParams = Type.Object({ id: Type.String() });
const BlobParams = Type.Object({ id: Type.String(), sha: Type.String() });
const ArchiveParams = Type.Object({ id: Type.String(), format: Type.String() });

// Grape's declaration order: ref, path, recursive, page, per_page, pagination, page_token.
const TreeQuery = Type.Object({
  ref: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  recursive: Type.Optional(Type.Boolean({ default: false })),
  ...PaginationProps,
  pagination: Type.Optional(Type.Enum(['legacy', 'keyset', 'none'], { default: 'legacy' })),
  page_token: Type.Optional(Type.String()),
});

const ArchiveQuery = Type.Object({
  sha: Type.Optional(Type.String()),
  format: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  include_lfs_blobs: Type.Optional(Type.Boolean({ default: true })),
  exclude_paths: Type.Optional(Type.Array(Type.String())),
});

const BlobSchema = Type.Object({ size: Type.Integer(), encoding: Type.String(), content: Type.String(), sha: Type.String() });

const HEX = /^[0-9a-f]{4,64}$/i;

// ---- routes --------------------------------------------------------------------------------------

export function treeRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const config = { api: 'platform' as const, auth: 'optional' as const };
  const archiveLimiter = new FixedWindowLimiter();

  app.get(
    '/api/v4/projects/:id/repository/tree',
    { config, schema: { tags: TAGS, params: IdParams, querystring: TreeQuery, response: { 200: Type.Array(TreeObjectSchema) } } },
    async (req, reply) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const q = req.query;
      const recursive = q.recursive === true;
      const mode = q.pagination ?? 'legacy';
      if (mode === 'none' && !recursive) throw Errors.param('pagination cannot be "none" unless "recursive" is true');

      const repo = ctx.repo;
      const commit = await orMissing(repo, () => commitOf(ctx, q.ref), null);
      if (!commit) throw Errors.notFound('Tree');
      const path = repoPath(q.path);
      if (path === null) throw Errors.notFound('invalid revision or path');

      // the tree object at the path (the root tree comes from the cached commit)
      let tree: { sha: string; type: string } | null | undefined;
      if (path === '') {
        const parsed = await repo.commit(commit);
        tree = parsed ? { sha: parsed.tree, type: 'tree' } : null;
      } else {
        const at = `${commit}:${path}`;
        tree = objectsAt.get(at);
        if (tree === undefined) {
          const o = await repo.info(at);
          tree = o ? { sha: o.sha, type: o.type } : await gitlinkAt(repo, commit, path);
          objectsAt.set(at, tree);
        }
      }
      if (!tree) throw Errors.notFound('invalid revision or path');

      const pageKey = `${tree.sha}\0${path}\0${recursive ? 1 : 0}\0${req.url}`;
      // a serialised body (Buffer) is sent as it is
      const raw = reply as FastifyReply;
      const cached = pages.get(pageKey);
      if (cached) return raw.headers(cached.headers).type('application/json').send(cached.body);
      const keep = (items: TreeObject[], headers: Record<string, string> = {}) => {
        const body = Buffer.from(reply.serialize(items) as string);
        if (body.length <= PAGE_CACHE_MAX_BYTES) pages.set(pageKey, { body, headers });
        return raw.headers(headers).type('application/json').send(body);
      };

      // a path naming a file (or a submodule) lists nothing, as Gitaly answers
      const l: Listing = tree.type === 'tree' ? await listing(repo, tree.sha, path, recursive) : { entries: [] };

      if (mode === 'none') return keep(l.entries);

      const self = `/api/v4/projects/${encodeURIComponent(req.params.id)}/repository/tree`;
      const params = linkParams(q as Record<string, unknown>, { id: req.params.id });
      if (mode === 'keyset') {
        let perPage = q.per_page ?? DEFAULT_PER_PAGE;
        if (perPage < 0) perPage = DEFAULT_PER_PAGE;
        if (perPage > MAX_PER_PAGE) perPage = MAX_PER_PAGE;
        const { index: start, start: name } = q.page_token ? keysetStart(l, q.page_token) : { index: 0, start: '' };
        // Gitaly's error; GitLab lets it through as a 500, a bad token is the client's mistake
        if (start < 0) throw Errors.badRequest(`could not find starting OID: ${name}`);
        const items = l.entries.slice(start, start + perPage);
        if (items.length < perPage) return keep(items);
        const next = { ...params, page: q.page ?? 1, per_page: q.per_page ?? DEFAULT_PER_PAGE, page_token: pageToken(items[items.length - 1]) };
        return keep(items, { link: `<${c.config.externalUrl}${self}?${toQuery(next)}>; rel="next"` });
      }
      const page = paginateArray(c.config.externalUrl, { path: self, params, page: q.page, per_page: q.per_page }, l.entries);
      return keep(page.items, page.headers);
    },
  );

  /** The blob `sha` names (hex only: no revision syntax reaches git), or 404 Blob Not Found. */
  const blobInfo = async (ctx: RepoContext, sha: string) => {
    if (!HEX.test(sha)) throw Errors.notFound('Blob');
    const o = await orMissing(ctx.repo, () => ctx.repo.info(sha), null);
    if (!o || o.type !== 'blob') throw Errors.notFound('Blob');
    return o;
  };

  app.get(
    '/api/v4/projects/:id/repository/blobs/:sha',
    { config, schema: { tags: TAGS, params: BlobParams, response: { 200: BlobSchema } } },
    async (req) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const info = await blobInfo(ctx, req.params.sha);
      let content: Buffer;
      if (info.size <= POOLED_BLOB_MAX) {
        const o = await ctx.repo.read(info.sha);
        if (!o || o.type !== 'blob') throw Errors.notFound('Blob');
        content = o.content!;
      } else {
        content = (await ctx.repo.run(['cat-file', 'blob', info.sha], { maxBytes: info.size + 1, timeoutMs: 600_000 })).stdout;
      }
      return { size: info.size, encoding: 'base64', content: content.toString('base64'), sha: info.sha };
    },
  );

  app.get(
    '/api/v4/projects/:id/repository/blobs/:sha/raw',
    { config, schema: { tags: TAGS, params: BlobParams } },
    async (req, reply) => {
      const ctx = await c.repository.context(req.actor, req.params.id);
      const info = await blobInfo(ctx, req.params.sha);
      reply.headers(NO_CACHE);
      if (info.size <= POOLED_BLOB_MAX) {
        const o = await ctx.repo.read(info.sha);
        if (!o || o.type !== 'blob') throw Errors.notFound('Blob');
        let h = headersOfBlob.get(info.sha);
        if (!h) {
          if (headersOfBlob.size >= 10_000) headersOfBlob.clear();
          headersOfBlob.set(info.sha, (h = blobHeaders(o.content!)));
        }
        return reply.type(h.type).header('content-disposition', h.disposition).send(o.content!);
      }
      const child = ctx.repo.spawn(['cat-file', 'blob', info.sha]);
      child.on('error', () => {}); // a failed spawn ends stdout, which peek reports
      child.stdin!.end();
      child.stderr!.resume();
      const { head, ended } = await peek(child.stdout!, 4096);
      if (ended && (await exitCode(child)) !== 0) throw Errors.notFound('Blob');
      const h = blobHeaders(head);
      reply.type(h.type).header('content-disposition', h.disposition);
      if (ended) return reply.send(head);
      reply.header('content-length', String(info.size));
      if (req.method === 'HEAD') {
        child.kill('SIGKILL');
        return reply.send();
      }
      return reply.send(pipeChild(reply, child));
    },
  );

  const archive = async (req: FastifyRequest<{ Params: { id: string; format?: string }; Querystring: Static<typeof ArchiveQuery> }>, reply: FastifyReply) => {
    const ctx = await c.repository.context(req.actor, req.params.id);
    // check_archive_rate_limit!: per project and user (per project and address when anonymous)
    const limit = c.config.archiveRateLimit;
    if (limit > 0) {
      const who = req.actor.user ? `user:${req.actor.user.id}` : `ip:${req.ip}`;
      const now = Date.now();
      const hit = archiveLimiter.hit(`${ctx.project.id}:${who}`, limit, 60, now);
      if (!hit.allowed) {
        throw Errors.raw(
          429,
          { message: { error: 'This archive has been requested too many times. Try again later.' } },
          { 'retry-after': String(Math.max(1, Math.ceil((hit.resetAt - now) / 1000))) },
        );
      }
    }
    if (hotlinking(req)) throw Errors.raw(406, { message: '406 Not Acceptable' });

    const fileNotFound = () => Errors.notFound('File');
    const q = req.query;
    const ext = archiveExtension(req.params.format ?? q.format);
    const ref = q.sha || ctx.project.default_branch || 'main';
    const repo = ctx.repo;
    const commit = await orMissing(repo, () => commitOf(ctx, ref), null);
    if (!commit) throw fileNotFound();
    const path = repoPath(q.path);
    if (path === null) throw fileNotFound();
    if (path && !(await repo.entryAt(commit, path))) throw fileNotFound();
    const excludes: string[] = [];
    for (const item of q.exclude_paths ?? []) {
      for (const raw of item.split(',')) {
        const trimmed = raw.trim();
        if (!trimmed) continue;
        const p = repoPath(trimmed);
        if (!p) throw fileNotFound();
        excludes.push(p);
      }
    }

    // "<project path>-<ref>-<sha>[-<path>]": the file name and the top-level directory inside
    const segments = [ctx.project.path, ref.replace(/\//g, '-'), commit];
    if (q.path) segments.push(q.path.replace(/\//g, '-'));
    const name = segments.join('-');

    // workhorse/internal/git/archive.go: no Content-Length, the body is streamed
    const headers = {
      'content-disposition': `attachment; filename="${rawUtf8(`${name}.${ext}`)}"`,
      'content-type': ext === 'zip' ? 'application/zip' : 'application/octet-stream',
      'content-transfer-encoding': 'binary',
    };
    // HEAD: the same headers, a streamed empty body (so no Content-Length either)
    if (req.method === 'HEAD') return reply.headers(headers).send(new PassThrough().end());

    const pathspecs = [...(path ? [`:(literal)${path}`] : []), ...excludes.map((p) => `:(exclude,literal)${p}`)];
    const args = [...(ext === 'tar.bz2' ? ['-c', 'tar.tar.bz2.command=bzip2 -c'] : []), 'archive', `--format=${ext}`, `--prefix=${name}/`, commit];
    if (pathspecs.length) args.push('--', ...pathspecs);
    // a slow client may take its time: an hour before git is stopped
    const child = repo.spawn(args, { timeoutMs: 3_600_000 });
    child.on('error', () => {}); // a failed spawn ends stdout, which peek reports
    child.stdin!.end();
    child.stderr!.resume();
    // git checks everything before its first byte: an exit without output is a refusal
    const { head, ended } = await peek(child.stdout!, 1);
    if (ended && (await exitCode(child)) !== 0) throw fileNotFound();
    return reply.headers(headers).send(ended ? new PassThrough().end(head) : pipeChild(reply, child));
  };

  app.get('/api/v4/projects/:id/repository/archive', { config, schema: { tags: TAGS, params: IdParams, querystring: ArchiveQuery } }, archive);
  app.get(
    '/api/v4/projects/:id/repository/archive.:format',
    {
      config,
      schema: { tags: TAGS, params: ArchiveParams, querystring: ArchiveQuery },
      // a suffix outside Gitlab::PathRegex.archive_formats_regex matches no route in GitLab
      preValidation: async (req) => {
        if (!PATH_FORMATS.has((req.params as { format: string }).format)) throw Errors.raw(404, { error: '404 Not Found' });
      },
    },
    archive,
  );
}
