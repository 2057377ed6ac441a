// Repository files (GitLab's lib/api/files.rb): a file with Base64 content, its metadata as X-Gitlab-*
// headers (HEAD), its raw bytes, and create / update / delete as one commit on a branch
// (Files::CreateService, UpdateService, DeleteService over Commits::CreateService's checks).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import type { FileWriteInput, FileWriteKind } from '../../../domain/repository/commit-checks.ts';
import { contentSha256, lastCommitFor, type FileEntry } from '../../../domain/repository/files.ts';
import { isSafePath } from '../../../git/command.ts';
import type { Repository } from '../../../git/repository.ts';
import { blame, BlameRangeOutOfFile, type BlameGroup } from '../../../git/blame.ts';
import { isoTime, type Commit } from '../../../git/objects.ts';
import { Errors } from '../../../lib/errors.ts';
import { grapeMessage } from '../../plugins/errors.ts';

const TAGS = ['repository_files'];
const FILE_URL = '/api/v4/projects/:id/repository/files/:file_path';
const READ = { api: 'platform' as const, auth: 'optional' as const, scopes: ['read_repository'] };
const WRITE = { api: 'platform' as const, auth: 'user' as const };

const FileParams = Type.Object({ id: Type.String(), file_path: Type.String() });
const ShowQuery = Type.Object({ ref: Type.String({ minLength: 1 }) });
const RawQuery = Type.Object({ ref: Type.Optional(Type.String({ minLength: 1 })), lfs: Type.Optional(Type.Boolean()) });
const BlameQuery = Type.Object({
  ref: Type.String({ minLength: 1 }),
  range: Type.Optional(Type.Object({ start: Type.Integer(), end: Type.Integer() })),
});

// Grape's declaration order (simple_file_params, then extended_file_params).
const SimpleProps = {
  branch: Type.String({ minLength: 1 }),
  commit_message: Type.String({ minLength: 1 }),
  start_branch: Type.Optional(Type.String()),
  author_email: Type.Optional(Type.String()),
  author_name: Type.Optional(Type.String()),
};
const ExtendedBody = Type.Object({
  ...SimpleProps,
  content: Type.String(),
  encoding: Type.Optional(Type.Union([Type.Literal('base64'), Type.Literal('text')])),
  last_commit_id: Type.Optional(Type.String()),
  execute_filemode: Type.Optional(Type.Boolean()),
});
// GitLab's DELETE declares no last_commit_id (it is silently dropped); Hearth honours it, as documented.
const DeleteBody = Type.Object({ ...SimpleProps, last_commit_id: Type.Optional(Type.String()) });

const FILE_PATH_INVALID = 'file_path should be a valid file path';
// Gitlab::PathTraversal: `..` as a whole segment (either separator), or a newline.
const TRAVERSAL = /(^|[/\\])\.\.([/\\]|$)|\n/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

/**
 * GitLab's FilePath validator (no traversal, not absolute, also once URL-decoded again) plus the
 * forge's own rule for paths that reach git (isSafePath: no leading `-`, no `.`/empty/`.git`
 * segments). Control characters are refused too: the path goes to git's line protocol and into headers.
 */
export function isValidFilePath(p: string): boolean {
  if (!isSafePath(p) || CONTROL.test(p) || TRAVERSAL.test(p)) return false;
  let current = p;
  for (let i = 0; i < 5; i++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      break;
    }
    if (decoded === current) break;
    if (TRAVERSAL.test(decoded) || decoded.startsWith('/')) return false;
    current = decoded;
  }
  return true;
}

/** Grape's errors for this request: the file_path validator's first, then the schema's, then blank strings. */
function checkParams(req: FastifyRequest, filePathOk: boolean, blankChecks: [string, unknown][] = []): void {
  const messages: string[] = [];
  if (!filePathOk) messages.push(FILE_PATH_INVALID);
  const err = (req as FastifyRequest & { validationError?: Error & { validation?: unknown[] } }).validationError;
  if (err) messages.push(err.validation?.length ? grapeMessage(err.validation) : 'parameters are invalid');
  // allow_blank: false refuses whitespace-only strings too
  for (const [name, v] of blankChecks) {
    if (typeof v === 'string' && v.trim() === '' && !messages.some((m) => m.includes(`${name} is empty`))) messages.push(`${name} is empty`);
  }
  if (messages.length) throw Errors.param(messages.join(', '));
}

// ---- reading ------------------------------------------------------------------------------------

/** API::Files#blob_data, in GitLab's key order. */
async function blobData(repo: Repository, ref: string | undefined, commit: string, entry: FileEntry, data: Buffer) {
  return {
    file_name: entry.name,
    file_path: entry.path,
    size: data.length,
    encoding: 'base64',
    content_sha256: contentSha256(entry, data),
    ref: ref ?? null,
    blob_id: entry.sha,
    commit_id: commit,
    last_commit_id: await lastCommitFor(repo, commit, entry.path),
    execute_filemode: entry.mode === '100755',
  };
}

/**
 * set_http_headers: X-Gitlab-<Key-In-Capitals> = value.to_s. Non-ASCII text goes out as its UTF-8
 * bytes, as Rack sends it (Node writes header strings as latin1).
 */
function setGitlabHeaders(reply: FastifyReply, data: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(data)) {
    const name =
      'X-Gitlab-' +
      k
        .split('_')
        .map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w))
        .join('-');
    reply.header(name, headerValue(v === null || v === undefined ? '' : String(v)));
  }
}

function headerValue(s: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\x20-\x7e]*$/.test(s) ? s : Buffer.from(s, 'utf8').toString('latin1');
}

// ActionDispatch::Http::ContentDisposition.format
const TRADITIONAL_ESCAPED = /[^ A-Za-z0-9!#$+.^_`|~-]/gu;
const RFC_5987_ESCAPED = /[^A-Za-z0-9!#$&+.^_`|~-]/gu;

function percentEscape(s: string, re: RegExp): string {
  return s.replace(re, (ch) => [...Buffer.from(ch, 'utf8')].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join(''));
}

/** I18n.transliterate: accents dropped, anything else outside ASCII becomes "?". */
function transliterate(s: string): string {
  return [...s.normalize('NFKD').replace(/[\u0300-\u036f]/g, '')].map((ch) => (ch.charCodeAt(0) < 0x80 ? ch : '?')).join('');
}

export function inlineDisposition(fileName: string): string {
  // Some browsers ignore the content type of .xhtml files: GitLab drops the extension (gitlab-org/gitlab#458236).
  const name = fileName.endsWith('.xhtml') ? fileName.split('.')[0] : fileName;
  return `inline; filename="${percentEscape(transliterate(name), TRADITIONAL_ESCAPED)}"; filename*=UTF-8''${percentEscape(name, RFC_5987_ESCAPED)}`;
}

/** Entities::BlameRange of each run of lines (Entities::BlameRangeCommit). */
async function blameRanges(repo: Repository, commit: string, filePath: string, range?: { start: number; end: number }) {
  let groups: BlameGroup[];
  try {
    groups = await blame(repo, commit, filePath, range);
  } catch (e) {
    if (e instanceof BlameRangeOutOfFile) return [];
    throw e;
  }
  const commits = new Map<string, Commit | null>();
  for (const g of groups) if (!commits.has(g.commit)) commits.set(g.commit, await repo.commit(g.commit));
  return groups.map((g) => {
    const c = commits.get(g.commit)!;
    return {
      commit: {
        id: g.commit,
        parent_ids: c?.parents ?? [],
        message: c?.message ?? '',
        authored_date: c ? isoTime(c.author.time, c.author.tz) : null,
        author_name: c?.author.name ?? null,
        author_email: c?.author.email ?? null,
        committed_date: c ? isoTime(c.committer.time, c.committer.tz) : null,
        committer_name: c?.committer.name ?? null,
        committer_email: c?.committer.email ?? null,
      },
      lines: g.lines,
    };
  });
}

/** Gitlab::NoCacheHeaders::DEFAULT_GITLAB_NO_CACHE_HEADERS */
const NO_CACHE_HEADERS = {
  'cache-control': 'max-age=0, private, must-revalidate, no-store, no-cache',
  expires: 'Fri, 01 Jan 1990 00:00:00 GMT',
};

// ---- writing ------------------------------------------------------------------------------------

/** authorize! :push_code, then the file service (Files::CreateService, UpdateService, DeleteService). */
async function writeFile(c: Container, actor: Actor, id: string, kind: FileWriteKind, filePath: string, input: FileWriteInput): Promise<void> {
  const ctx = await c.repository.context(actor, id);
  if (!ctx.access.abilities.has('push_code')) throw Errors.forbidden();
  if (!ctx.repo.exists()) throw Errors.notFound('Repository');
  await c.repository.writeFile(ctx, actor, kind, filePath, input);
}

// ---- routes -------------------------------------------------------------------------------------

export function filesRoutes(fastify: FastifyInstance, c: Container): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    `${FILE_URL}/raw`,
    {
      config: READ,
      attachValidation: true,
      schema: { tags: TAGS, summary: 'Get raw file contents from the repository', params: FileParams, querystring: RawQuery },
    },
    async (req, reply) => {
      // allow_initial_path_separator: an encoded leading "/" is allowed; Gitlab::Git::Blob.find drops it
      const filePath = req.params.file_path.replace(/^\/+/, '');
      checkParams(req, isValidFilePath(filePath), [['ref', req.query.ref]]);
      const ctx = await c.repository.context(req.actor, req.params.id);
      const { commit, entry } = await c.repository.fileAt(ctx, req.query.ref, filePath);
      const data = await c.repository.fileContent(ctx, entry);
      reply.headers(NO_CACHE_HEADERS);
      setGitlabHeaders(reply, await blobData(ctx.repo, req.query.ref, commit, entry, data));
      reply.header('content-disposition', inlineDisposition(entry.name));
      reply.type('text/plain; charset=utf-8');
      return reply.send(data);
    },
  );

  // GET (and HEAD) …/blame: the file's X-Gitlab-* headers and Entities::BlameRange, optionally for
  // range[start]…range[end] (1-based, inclusive; a range past the last line stops there, one that
  // starts after it is empty).
  app.get(
    `${FILE_URL}/blame`,
    {
      config: READ,
      attachValidation: true,
      schema: { tags: TAGS, summary: 'Get blame file from the repository', params: FileParams, querystring: BlameQuery },
    },
    async (req, reply) => {
      const q = req.query;
      checkParams(req, isValidFilePath(req.params.file_path), [['ref', q?.ref]]);
      const range = q.range;
      if (range) {
        const bad: string[] = [];
        if (range.start < 1) bad.push('range[start] does not have a valid value');
        if (range.end < 1) bad.push('range[end] does not have a valid value');
        if (!bad.length && range.end < range.start) bad.push('range[end] must be greater than or equal to range[start]');
        if (bad.length) throw Errors.param(bad.join(', '));
      }
      const ctx = await c.repository.context(req.actor, req.params.id);
      const { commit, entry } = await c.repository.fileAt(ctx, q.ref, req.params.file_path);
      const data = await c.repository.fileContent(ctx, entry);
      setGitlabHeaders(reply, await blobData(ctx.repo, q.ref, commit, entry, data));
      return blameRanges(ctx.repo, commit, entry.path, range);
    },
  );

  app.head(
    FILE_URL,
    { config: READ, attachValidation: true, schema: { tags: TAGS, summary: 'Get file metadata from repository', params: FileParams, querystring: ShowQuery } },
    async (req, reply) => {
      checkParams(req, isValidFilePath(req.params.file_path), [['ref', req.query.ref]]);
      const ctx = await c.repository.context(req.actor, req.params.id);
      const { commit, entry } = await c.repository.fileAt(ctx, req.query.ref, req.params.file_path);
      setGitlabHeaders(reply, await blobData(ctx.repo, req.query.ref, commit, entry, await c.repository.fileContent(ctx, entry)));
      reply.type('application/json');
      return reply.send();
    },
  );

  app.get(
    FILE_URL,
    {
      config: READ,
      exposeHeadRoute: false,
      attachValidation: true,
      schema: { tags: TAGS, summary: 'Get a file from the repository', params: FileParams, querystring: ShowQuery },
    },
    async (req, reply) => {
      checkParams(req, isValidFilePath(req.params.file_path), [['ref', req.query.ref]]);
      const ctx = await c.repository.context(req.actor, req.params.id);
      const { commit, entry } = await c.repository.fileAt(ctx, req.query.ref, req.params.file_path);
      const data = await c.repository.fileContent(ctx, entry);
      const meta = await blobData(ctx.repo, req.query.ref, commit, entry, data);
      setGitlabHeaders(reply, meta);
      return { ...meta, content: data.toString('base64') };
    },
  );

  app.post(
    FILE_URL,
    { config: WRITE, attachValidation: true, schema: { tags: TAGS, summary: 'Create new file in repository', params: FileParams, body: ExtendedBody } },
    async (req, reply) => {
      const body = req.body;
      checkParams(req, isValidFilePath(req.params.file_path), [
        ['branch', body?.branch],
        ['commit_message', body?.commit_message],
      ]);
      await writeFile(c, req.actor, req.params.id, 'create', req.params.file_path, body);
      reply.code(201);
      return { file_path: req.params.file_path, branch: body.branch };
    },
  );

  app.put(
    FILE_URL,
    { config: WRITE, attachValidation: true, schema: { tags: TAGS, summary: 'Update existing file in repository', params: FileParams, body: ExtendedBody } },
    async (req) => {
      const body = req.body;
      checkParams(req, isValidFilePath(req.params.file_path), [
        ['branch', body?.branch],
        ['commit_message', body?.commit_message],
      ]);
      await writeFile(c, req.actor, req.params.id, 'update', req.params.file_path, body);
      return { file_path: req.params.file_path, branch: body.branch };
    },
  );

  app.delete(
    FILE_URL,
    { config: WRITE, attachValidation: true, schema: { tags: TAGS, summary: 'Delete an existing file in repository', params: FileParams, body: DeleteBody } },
    async (req, reply) => {
      const body = req.body;
      checkParams(req, isValidFilePath(req.params.file_path), [
        ['branch', body?.branch],
        ['commit_message', body?.commit_message],
      ]);
      await writeFile(c, req.actor, req.params.id, 'delete', req.params.file_path, body);
      return reply.code(204).send();
    },
  );
}
