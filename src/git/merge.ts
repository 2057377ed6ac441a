// Merging without a working copy: mergeability, merge commits, squash commits and rebases, all made
// of `git merge-tree --write-tree` (merge-ort, renames included) and `git commit-tree`. Nothing here
// moves a ref: the caller (RepositoryService) moves refs under its lock with update-ref's
// compare-and-swap.
//
// Replaying a commit C onto B with base P (a cherry-pick) needs a three-way merge whose base is P,
// but git 2.39's merge-tree has no --merge-base: it computes the base from the history. So each step
// builds throwaway commits whose history makes P the only merge base: P' = P's tree with no parent,
// B' = B's tree on P', C' = C's tree on P'; merge-tree B' C' is then exactly "C's change applied to
// B" (merge-ort, with rename detection), and the replayed commit is C's author and message over that
// tree with parent B. The scaffolding commits are unreachable objects (fixed identity and date, so the
// same step makes the same objects); gc prunes them. The alternative, read-tree -m P B C in a temporary
// index, only does git's trivial merge: every file changed on both sides would need merge-file on
// temporary files, and renames are not detected at all.
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

const SCAFFOLD_ENV = {
  GIT_AUTHOR_NAME: 'hearth',
  GIT_AUTHOR_EMAIL: 'hearth@localhost',
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'hearth',
  GIT_COMMITTER_EMAIL: 'hearth@localhost',
  GIT_COMMITTER_DATE: '@0 +0000',
};

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
  message: string;
}

async function rawCommit(repo: Repository, sha: string): Promise<RawCommit> {
  const o = await repo.read(sha);
  if (!o || o.type !== 'commit') throw new Error(`not a commit: ${sha}`);
  const text = o.content!.toString('utf8');
  const split = text.indexOf('\n\n');
  const headers = (split < 0 ? text : text.slice(0, split)).split('\n');
  const c: RawCommit = { tree: '', parents: [], author: '', message: split < 0 ? '' : text.slice(split + 2) };
  for (const h of headers) {
    if (h.startsWith('tree ')) c.tree = h.slice(5);
    else if (h.startsWith('parent ')) c.parents.push(h.slice(7));
    else if (h.startsWith('author ')) c.author = h.slice(7);
  }
  return c;
}

/** "Name <email> 1700000000 +0100" → the author environment of commit-tree (date and zone kept). */
function authorEnv(header: string): Record<string, string> {
  const m = /^(.*) <([^>]*)> (\d+) ([+-]\d{4})$/.exec(header);
  if (!m) throw new Error(`unreadable author: ${header}`);
  return { GIT_AUTHOR_NAME: m[1], GIT_AUTHOR_EMAIL: m[2], GIT_AUTHOR_DATE: `@${m[3]} ${m[4]}` };
}

/**
 * Applies the change `parent → commit` to `onto` (a cherry-pick without a working copy): the merged
 * tree, or the conflicting paths.
 */
export async function replayTree(repo: Repository, onto: string, parent: string, commit: string): Promise<Mergeability> {
  const [ontoC, parentC, commitC] = await Promise.all([rawCommit(repo, onto), rawCommit(repo, parent), rawCommit(repo, commit)]);
  if (parentC.tree === ontoC.tree) return { clean: true, tree: commitC.tree, conflicts: [] };
  const base = await commitTree(repo, parentC.tree, [], 'base', SCAFFOLD_ENV);
  const [ours, theirs] = await Promise.all([
    commitTree(repo, ontoC.tree, [base], 'ours', SCAFFOLD_ENV),
    commitTree(repo, commitC.tree, [base], 'theirs', SCAFFOLD_ENV),
  ]);
  return mergeTree(repo, ours, theirs);
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
 * replayed onto `onto` with its author, author date and message and `committer` as committer.
 * Commits whose change is already there (their replay changes nothing) are dropped, as git rebase
 * drops them. Returns the new head (onto itself when nothing is left); throws RebaseConflict.
 */
export async function rebase(repo: Repository, input: RebaseInput): Promise<string> {
  const list = await repo.run(['rev-list', '--reverse', '--topo-order', '--no-merges', `${input.baseSha}..${input.headSha}`, '--not', input.ontoSha]);
  const commits = list.stdout.toString().split('\n').filter(Boolean);
  let head = input.ontoSha;
  let headTree = (await rawCommit(repo, head)).tree;
  const committer = personEnv('COMMITTER', input.committer);
  for (const sha of commits) {
    const c = await rawCommit(repo, sha);
    const parent = c.parents[0];
    let tree: string;
    if (!parent) {
      tree = c.tree;
    } else {
      const m = await replayTree(repo, head, parent, sha);
      if (!m.clean || !m.tree) throw new RebaseConflict(sha, m.conflicts);
      tree = m.tree;
    }
    const parentTree = parent ? (await rawCommit(repo, parent)).tree : null;
    // a commit that became empty is dropped (one that was empty to begin with is kept)
    if (tree === headTree && parentTree !== c.tree) continue;
    head = await commitTree(repo, tree, [head], c.message, { ...authorEnv(c.author), ...committer });
    headTree = tree;
  }
  return head;
}

/** The best common ancestor of two commits, or null (unrelated histories). */
export async function mergeBase(repo: Repository, a: string, b: string): Promise<string | null> {
  const r = await repo.run(['merge-base', a, b], { okCodes: [0, 1] });
  return r.code === 0 ? r.stdout.toString().trim() : null;
}
