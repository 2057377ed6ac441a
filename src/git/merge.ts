// Merging without a working copy: mergeability, merge commits, squash commits and rebases, all made
// of `git merge-tree --write-tree` (merge-ort, renames included) and `git commit-tree`. Nothing here
// moves a ref: the caller (RepositoryService) moves refs under its lock with update-ref's
// compare-and-swap.
//
// Replaying a commit C onto B with base P (a cherry-pick) needs a three-way merge whose base is P,
// but git 2.39's merge-tree has no --merge-base: it computes the base from the history. So each step
// makes throwaway commits whose history makes P the only merge base: P' = P's tree with no parent,
// B' = B's tree on P', C' = C's tree on P'; merge-tree B' C' is then exactly "C's change applied to
// B" (merge-ort, with rename detection), and the replayed commit is C's author and message over that
// tree with parent B. The commit objects are made here (their SHA-1 computed in Node) and written
// with one `hash-object --stdin-paths` per step, the replayed ones in one batch at the end: two git
// processes per replayed commit. The scaffolding commits are unreachable (fixed identity and date, so
// the same step makes the same objects); gc prunes them. The alternative, read-tree -m P B C in a
// temporary index, only does git's trivial merge: every file changed on both sides would need
// merge-file on temporary files, and renames are not detected at all.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Repository } from './repository.ts';
import type { Person } from './commit-builder.ts';

export interface Mergeability {
  clean: boolean;
  /** the merged tree (also when there are conflicts: with conflict markers) */
  tree?: string;
  /** paths with conflicts, in git's order, each once */
  conflicts: string[];
}

/** Two histories without a common commit: GitLab refuses them as not mergeable. */
export class UnrelatedHistories extends Error {}

/** A rebase stopped by a conflict; nothing was moved. */
export class RebaseConflict extends Error {
  constructor(
    readonly commit: string,
    readonly conflicts: string[],
  ) {
    super(`Rebase failed: conflict while replaying ${commit}`);
  }
}

function personEnv(prefix: 'AUTHOR' | 'COMMITTER', p: Person & { tz?: string }): Record<string, string> {
  return {
    [`GIT_${prefix}_NAME`]: p.name,
    [`GIT_${prefix}_EMAIL`]: p.email,
    [`GIT_${prefix}_DATE`]: `@${p.time ?? Math.floor(Date.now() / 1000)} ${p.tz ?? '+0000'}`,
  };
}

function withNewline(message: string): string {
  return message.endsWith('\n') ? message : message + '\n';
}

/** `git merge-tree --write-tree ours theirs` parsed (-z, --name-only, --no-messages). */
export async function mergeTree(repo: Repository, ours: string, theirs: string): Promise<Mergeability> {
  const r = await repo.run(['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs], { okCodes: [0, 1, 128] });
  if (r.code === 128) {
    if (/unrelated histories/.test(r.stderr)) throw new UnrelatedHistories(r.stderr.trim());
    throw new Error(`git merge-tree failed: ${r.stderr.trim()}`);
  }
  const parts = r.stdout.toString('utf8').split('\0');
  const tree = parts[0].trim();
  const conflicts: string[] = [];
  if (r.code === 1) {
    for (const p of parts.slice(1)) if (p && !conflicts.includes(p)) conflicts.push(p);
  }
  return { clean: r.code === 0, tree, conflicts };
}

/** Can `sourceSha` be merged into `targetSha` without conflicts? Unrelated histories are not mergeable. */
export async function mergeability(repo: Repository, targetSha: string, sourceSha: string): Promise<Mergeability> {
  try {
    return await mergeTree(repo, targetSha, sourceSha);
  } catch (e) {
    if (e instanceof UnrelatedHistories) return { clean: false, conflicts: [] };
    throw e;
  }
}

/** Thrown by the commit makers when the merge is not clean. */
export class MergeConflict extends Error {
  constructor(readonly conflicts: string[]) {
    super('Merge conflict');
  }
}

async function commitTree(repo: Repository, tree: string, parents: string[], message: string, env: Record<string, string>): Promise<string> {
  const args = ['commit-tree', tree];
  for (const p of parents) args.push('-p', p);
  return (await repo.run(args, { env, input: withNewline(message) })).stdout.toString().trim();
}

async function cleanTree(repo: Repository, targetSha: string, sourceSha: string): Promise<string> {
  const m = await mergeability(repo, targetSha, sourceSha);
  if (!m.clean || !m.tree) throw new MergeConflict(m.conflicts);
  return m.tree;
}

export interface MergeInput {
  targetSha: string;
  sourceSha: string;
  message: string;
  author: Person;
  committer?: Person;
}

/** A two-parent merge commit (target first); throws MergeConflict. */
export async function mergeCommit(repo: Repository, input: MergeInput): Promise<string> {
  const tree = await cleanTree(repo, input.targetSha, input.sourceSha);
  const env = { ...personEnv('AUTHOR', input.author), ...personEnv('COMMITTER', input.committer ?? input.author) };
  return commitTree(repo, tree, [input.targetSha, input.sourceSha], input.message, env);
}

export interface SquashInput {
  targetSha: string;
  sourceSha: string;
  /** the squash commit's message (GitLab: the merge request's title by default) */
  message: string;
  /** the squash commit's author (GitLab: the merge request's author) */
  author: Person;
  committer?: Person;
  /** a merge commit on top (GitLab's merge methods other than fast-forward) */
  merge?: { message: string; author: Person; committer?: Person };
}

/**
 * Gitaly's UserSquash: the changes of source since it left target as one commit on top of target;
 * then, when asked, a merge commit of that squash commit into target (GitLab's "merge commit with
 * squash"). Returns both SHAs (`merge` null without one). Throws MergeConflict.
 */
export async function squashCommit(repo: Repository, input: SquashInput): Promise<{ squash: string; merge: string | null }> {
  const tree = await cleanTree(repo, input.targetSha, input.sourceSha);
  const env = { ...personEnv('AUTHOR', input.author), ...personEnv('COMMITTER', input.committer ?? input.author) };
  const squash = await commitTree(repo, tree, [input.targetSha], input.message, env);
  if (!input.merge) return { squash, merge: null };
  const m = input.merge;
  const menv = { ...personEnv('AUTHOR', m.author), ...personEnv('COMMITTER', m.committer ?? m.author) };
  const merge = await commitTree(repo, tree, [input.targetSha, squash], m.message, menv);
  return { squash, merge };
}

interface RawCommit {
  tree: string;
  parents: string[];
  /** the author header as written ("Name <email> 1700000000 +0100") */
  author: string;
  /** an encoding header, kept on replay */
  encoding: string | null;
  message: string;
}

async function rawCommit(repo: Repository, sha: string): Promise<RawCommit> {
  const o = await repo.read(sha);
  if (!o || o.type !== 'commit') throw new Error(`not a commit: ${sha}`);
  const text = o.content!.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = (split < 0 ? text : text.slice(0, split)).split('\n');
  const c: RawCommit = { tree: '', parents: [], author: '', encoding: null, message: split < 0 ? '' : text.slice(split + 2) };
  for (const h of headers) {
    if (h.startsWith('tree ')) c.tree = h.slice(5);
    else if (h.startsWith('parent ')) c.parents.push(h.slice(7));
    else if (h.startsWith('author ')) c.author = h.slice(7);
    else if (h.startsWith('encoding ')) c.encoding = h.slice(9);
  }
  return c;
}

/** A commit object made here: the SHA git gives it and its bytes (written later with writeCommits). */
interface CommitObject {
  sha: string;
  body: Buffer;
}

/** git's ident line: no angle brackets or line breaks in the name or email (commit-tree strips them too). */
function ident(p: Person & { tz?: string }): string {
  const clean = (v: string) => v.replace(/[<>\n\r\0]/g, '').trim();
  return `${clean(p.name)} <${clean(p.email)}> ${p.time ?? Math.floor(Date.now() / 1000)} ${p.tz ?? '+0000'}`;
}

function commitObject(tree: string, parents: string[], author: string, committer: string, message: string, encoding: string | null = null): CommitObject {
  let head = `tree ${tree}\n`;
  for (const p of parents) head += `parent ${p}\n`;
  head += `author ${author}\ncommitter ${committer}\n`;
  if (encoding) head += `encoding ${encoding}\n`;
  const body = Buffer.from(`${head}\n${message}`, 'utf8');
  const sha = crypto.createHash('sha1').update(`commit ${body.length}\0`).update(body).digest('hex');
  return { sha, body };
}

/** Writes commit objects made here with one git process (hash-object checks each and names it). */
async function writeCommits(repo: Repository, objects: CommitObject[]): Promise<void> {
  if (!objects.length) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-commits-'));
  try {
    const paths = objects.map((o, i) => {
      const file = path.join(dir, String(i));
      fs.writeFileSync(file, o.body);
      return file;
    });
    const out = await repo.run(['hash-object', '-t', 'commit', '-w', '--no-filters', '--stdin-paths'], { input: paths.join('\n') + '\n' });
    const shas = out.stdout.toString().trim().split('\n');
    objects.forEach((o, i) => {
      if (shas[i] !== o.sha) throw new Error(`commit object ${i} was written as ${shas[i]}, expected ${o.sha}`);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const SCAFFOLD_IDENT = 'hearth <hearth@localhost> 0 +0000';

/**
 * Applies the change `parentTree → commitTree` to `ontoTree` (a cherry-pick without a working copy):
 * the merged tree, or the conflicting paths. Two git processes: one writes the three scaffolding
 * commits (made here), merge-tree merges.
 */
export async function replayTrees(repo: Repository, ontoTree: string, parentTree: string, commitTree: string): Promise<Mergeability> {
  if (parentTree === ontoTree) return { clean: true, tree: commitTree, conflicts: [] };
  if (parentTree === commitTree || ontoTree === commitTree) return { clean: true, tree: ontoTree, conflicts: [] };
  const base = commitObject(parentTree, [], SCAFFOLD_IDENT, SCAFFOLD_IDENT, 'base\n');
  const ours = commitObject(ontoTree, [base.sha], SCAFFOLD_IDENT, SCAFFOLD_IDENT, 'ours\n');
  const theirs = commitObject(commitTree, [base.sha], SCAFFOLD_IDENT, SCAFFOLD_IDENT, 'theirs\n');
  await writeCommits(repo, [base, ours, theirs]);
  return mergeTree(repo, ours.sha, theirs.sha);
}

/** replayTrees for commits: the change `parent → commit` applied to `onto`. */
export async function replayTree(repo: Repository, onto: string, parent: string, commit: string): Promise<Mergeability> {
  const [ontoC, parentC, commitC] = await Promise.all([rawCommit(repo, onto), rawCommit(repo, parent), rawCommit(repo, commit)]);
  return replayTrees(repo, ontoC.tree, parentC.tree, commitC.tree);
}

export interface RebaseInput {
  /** the commit to replay onto (the target branch's head) */
  ontoSha: string;
  /** where the replayed commits start (exclusive): usually the merge base, or the old target */
  baseSha: string;
  headSha: string;
  committer: Person;
}

/**
 * git rebase without a working copy: each commit of base..head that is not a merge, oldest first,
 * replayed onto `onto` with its author (name, email, date and zone as written) and message, and
 * `committer` as committer. Commits whose change is already there (their replay changes nothing) are
 * dropped, as git rebase drops them. The new commits are made here and written at the end in one
 * batch (a conflict leaves nothing reachable). Returns the new head (onto itself when nothing is
 * left); throws RebaseConflict.
 */
export async function rebase(repo: Repository, input: RebaseInput): Promise<string> {
  const list = await repo.run(['rev-list', '--reverse', '--topo-order', '--no-merges', `${input.baseSha}..${input.headSha}`, '--not', input.ontoSha]);
  const commits = list.stdout.toString().split('\n').filter(Boolean);
  let head = input.ontoSha;
  let headTree = (await rawCommit(repo, head)).tree;
  const committer = ident(input.committer);
  const made: CommitObject[] = [];
  for (const sha of commits) {
    const c = await rawCommit(repo, sha);
    const parentTree = c.parents[0] ? (await rawCommit(repo, c.parents[0])).tree : null;
    let tree = c.tree;
    if (parentTree !== null) {
      const m = await replayTrees(repo, headTree, parentTree, c.tree);
      if (!m.clean || !m.tree) throw new RebaseConflict(sha, m.conflicts);
      tree = m.tree;
    }
    // a commit that became empty is dropped (one that was empty to begin with is kept)
    if (tree === headTree && parentTree !== c.tree) continue;
    const next = commitObject(tree, [head], c.author, committer, c.message, c.encoding);
    made.push(next);
    head = next.sha;
    headTree = tree;
  }
  await writeCommits(repo, made);
  return head;
}

/** The best common ancestor of two commits, or null (unrelated histories). */
export async function mergeBase(repo: Repository, a: string, b: string): Promise<string | null> {
  const r = await repo.run(['merge-base', a, b], { okCodes: [0, 1] });
  return r.code === 0 ? r.stdout.toString().trim() : null;
}
