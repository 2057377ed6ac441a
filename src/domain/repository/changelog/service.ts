// Repositories::ChangelogService: the commits of a range that carry the changelog trailer, as a
// release section; returned as notes or committed into the changelog file (Gitlab::Changelog::Committer).
import { sql } from 'kysely';
import type { Db } from '../../../db/connect.ts';
import { ciEquals } from '../../../db/sql.ts';
import { commitFiles, CommitActionError } from '../../../git/commit-builder.ts';
import { isSafePath } from '../../../git/command.ts';
import { commitTitle, commitTrailers } from '../../../git/objects.ts';
import { BRANCH_PREFIX, isValidRefName } from '../../../git/refs.ts';
import type { Repository } from '../../../git/repository.ts';
import { Errors } from '../../../lib/errors.ts';
import { todayDate } from '../../../lib/time.ts';
import type { Actor } from '../../access/actor.ts';
import type { Policy } from '../../access/policy.ts';
import type { RefChange } from '../push-events.ts';
import { configFromHash, parseConfigYaml, type ChangelogConfig } from './config.ts';
import { ChangelogError } from './error.ts';
import { insertSection } from './generator.ts';
import { Release, type ReleaseEntry } from './release.ts';
import { previousTagCommit } from './tags.ts';
import type { ReleaseDate } from './time.ts';

/** ChangelogService::COMMITS_LIMIT */
export const COMMITS_LIMIT = 15_000;

/** ChangelogCommitsFinder::REVERT_REGEX */
const REVERT = /^This reverts commit (?<sha>[0-9a-f]{40})/im;

export interface ChangelogRequest {
  version: string;
  /** exclusive start (any revision); default: the previous release's tag */
  from?: string;
  /** inclusive end (any revision) */
  to: string;
  date: ReleaseDate;
  trailer: string;
  configFile: string;
}

/** What the changelog reads besides git: users (authors), groups and their members (include_groups). */
export interface ChangelogDeps {
  db: Db;
  policy: Policy;
}

/** The repository of the project the changelog is for. */
export interface ChangelogRepo {
  repo: Repository;
  /** "group/project", for commit references */
  fullPath: string;
}

export interface CommitTarget {
  branch: string;
  file: string;
  message: string;
}

/** A path that may go to cat-file as `<rev>:<path>` (one line, no way out of the tree). */
function isReadablePath(p: string): boolean {
  return isSafePath(p) && !/[\x00-\x1f\x7f]/.test(p);
}

async function blobText(repo: Repository, rev: string, path: string): Promise<string | null> {
  if (!isReadablePath(path)) return null;
  const o = await repo.read(`${rev}:${path}`);
  return o && o.type === 'blob' ? o.content!.toString('utf8') : null;
}

/** Direct members of the include_groups the caller may read (Config.from_hash). */
async function creditedMembers(c: ChangelogDeps, actor: Actor, paths: string[]): Promise<Set<number>> {
  const ids = new Set<number>();
  if (!actor.user) return ids;
  const today = todayDate();
  for (const path of new Set(paths)) {
    const group = await c.db.kysely.selectFrom('namespaces').selectAll().where('type', '=', 'Group').where(ciEquals('full_path', path)).executeTakeFirst();
    if (!group) continue;
    const access = await c.policy.group(actor, group);
    if (!access.abilities.has('read_group')) continue;
    const rows = await c.db.kysely
      .selectFrom('members')
      .select('user_id')
      .where('source_type', '=', 'Namespace')
      .where('source_id', '=', group.id)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', today)]))
      .execute();
    for (const r of rows) ids.add(r.user_id);
  }
  return ids;
}

/** Config.from_git: the file at HEAD, or the defaults when there is none. */
export async function loadConfig(c: ChangelogDeps, ctx: ChangelogRepo, actor: Actor, path: string): Promise<ChangelogConfig> {
  const text = await blobText(ctx.repo, 'HEAD', path);
  const hash = text === null ? null : parseConfigYaml(text, path);
  return configFromHash(hash, (groups) => creditedMembers(c, actor, groups));
}

interface RangeCommit {
  sha: string;
  email: string;
  message: string;
}

/** Commit#description: everything after the title line (the whole message for a title of 100+ characters). */
function description(message: string): string {
  const fullTitle = message.split(/[\r\n]/, 1)[0];
  if (fullTitle.length >= 100) return message;
  const nl = message.indexOf('\n');
  return nl < 0 ? '' : message.slice(nl + 1);
}

/** `from..to`, newest first, as `git log` lists them. */
async function rangeCommits(repo: Repository, from: string, to: string): Promise<RangeCommit[]> {
  const { stdout } = await repo.run(['log', '-z', `--max-count=${COMMITS_LIMIT}`, '--format=%H%n%ae%n%B', `${from}..${to}`, '--']);
  const out: RangeCommit[] = [];
  for (const record of stdout.toString('utf8').split('\0')) {
    if (!record) continue;
    const a = record.indexOf('\n');
    const b = record.indexOf('\n', a + 1);
    if (a < 0) continue;
    out.push({ sha: record.slice(0, a), email: b < 0 ? record.slice(a + 1) : record.slice(a + 1, b), message: b < 0 ? '' : record.slice(b + 1) });
  }
  return out;
}

/** Hearth users by commit author e-mail (confirmed, case-insensitive), as Commit#author finds them. */
async function usersByEmail(c: ChangelogDeps, emails: string[]): Promise<Map<string, { id: number; username: string }>> {
  const found = new Map<string, { id: number; username: string }>();
  const unique = [...new Set(emails.map((e) => e.toLowerCase()).filter(Boolean))];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    const rows = await c.db.kysely
      .selectFrom('users')
      .select(['id', 'username', 'email'])
      .where(sql<string>`lower(${sql.ref('email')})`, 'in', chunk)
      .where('confirmed_at', 'is not', null)
      .orderBy('id')
      .execute();
    for (const r of rows) if (!found.has(r.email.toLowerCase())) found.set(r.email.toLowerCase(), { id: r.id, username: r.username });
  }
  return found;
}

/**
 * ProjectTeam#contributor?: not a member of the project, with a merged merge request into its
 * default branch. Hearth has no merge requests yet, so nobody is a contributor: authors are credited
 * through include_groups only (as GitLab credits members).
 */
function isContributor(): boolean {
  return false;
}

/** ChangelogService#execute up to the release (config, range, commits, entries). */
export async function buildRelease(c: ChangelogDeps, ctx: ChangelogRepo, actor: Actor, req: ChangelogRequest): Promise<Release> {
  const config = await loadConfig(c, ctx, actor, req.configFile);
  const from = req.from ?? previousTagCommit(await ctx.repo.tags(), config.tagRegex, req.version);
  const release = new Release(req.version, req.date, config);

  // verify_commit_range!
  const fromSha = await ctx.repo.resolveCommit(from);
  const toSha = await ctx.repo.resolveCommit(req.to);
  if (!fromSha || !toSha) throw new ChangelogError('Invalid or not found commit value in the given range');
  const counted = await ctx.repo.run(['rev-list', '--count', `--max-count=${COMMITS_LIMIT + 1}`, `${fromSha}..${toSha}`, '--']);
  if (Number(counted.stdout.toString().trim()) > COMMITS_LIMIT) throw new ChangelogError(`The commits range exceeds ${COMMITS_LIMIT} elements.`);

  // ChangelogCommitsFinder#each_page: newest first; a commit reverted later in the range is left out
  const reverted = new Set<string>();
  const selected: (RangeCommit & { trailers: Record<string, string> })[] = [];
  for (const commit of await rangeCommits(ctx.repo, fromSha, toSha)) {
    if (reverted.has(commit.sha)) continue;
    const sha = REVERT.exec(description(commit.message))?.groups?.sha;
    if (sha) reverted.add(sha);
    const { trailers } = commitTrailers(commit.message);
    if (Object.hasOwn(trailers, req.trailer)) selected.push({ ...commit, trailers });
  }

  const authors = await usersByEmail(
    c,
    selected.map((s) => s.email),
  );
  for (const commit of selected) {
    const entry: ReleaseEntry = {
      title: commitTitle(commit.message),
      commit: { reference: `${ctx.fullPath}@${commit.sha}`, trailers: commit.trailers },
    };
    const user = authors.get(commit.email.toLowerCase());
    if (user) {
      const contributor = isContributor();
      entry.author = { reference: `@${user.username}`, contributor, credit: contributor || config.alwaysCreditUserIds.has(user.id) };
    }
    release.addEntry(commit.trailers[req.trailer], entry);
  }
  return release;
}

/** GET: Generator.new.add(release) on an empty changelog. */
export function releaseNotes(release: Release): string {
  return insertSection('', release.version, release.toMarkdown());
}

/**
 * Committer#commit: adds the section to `file` on `branch` (created when missing), unless the file
 * already has a header for the version (null: nothing committed). A concurrent change of the branch
 * is retried once. Returns the ref change for the push events.
 */
export async function commitRelease(ctx: ChangelogRepo, actor: Actor, release: Release, target: CommitTarget): Promise<RefChange | null> {
  const user = actor.user!;
  const ref = BRANCH_PREFIX + target.branch;
  const tipOf = async () => (isValidRefName(target.branch) ? ctx.repo.resolveCommit(ref) : null);
  let markdown: string | null = null;
  for (let attempt = 0; ; attempt++) {
    const tip = await tipOf();
    if (!tip) throw Errors.refused('You can only create or edit files when you are on a branch');
    const content = await blobText(ctx.repo, tip, target.file);
    // already there (perhaps added concurrently): nothing to commit
    if (content !== null && release.headerStartPattern().test(content)) return null;
    markdown ??= release.toMarkdown();
    const next = insertSection(content ?? '', release.version, markdown);
    try {
      const sha = await commitFiles(ctx.repo, {
        branch: target.branch,
        parent: tip,
        expectedOld: tip,
        actions: [{ action: content === null ? 'create' : 'update', file_path: target.file, content: Buffer.from(next, 'utf8') }],
        message: target.message,
        author: { name: user.name, email: user.commit_email || user.email },
      });
      return { before: tip, after: sha, ref };
    } catch (e) {
      if (e instanceof CommitActionError) throw Errors.refused(e.message);
      if (attempt === 0 && (await tipOf()) !== tip) continue;
      throw e;
    }
  }
}
