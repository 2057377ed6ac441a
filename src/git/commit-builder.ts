// Commits without a working copy: the parent's tree edited in memory along the changed paths
// (tree-editor.ts) → commit-tree → the checks a push gets (object-checks.ts) → update-ref (new, old),
// under a per-repository lock. Used by the files API, changelog commits, README initialisation and
// translation commits.
import type { Repository } from './repository.ts';
import { BRANCH_PREFIX, ZERO_SHA } from './refs.ts';
import { KeyedLock } from '../lib/keyed-lock.ts';
import { checkNewObjects, isWritablePath } from './object-checks.ts';
import { TreeEditor } from './tree-editor.ts';

export type FileAction =
  | { action: 'create' | 'update'; file_path: string; content: Buffer; executable?: boolean; last_commit_id?: string }
  | { action: 'delete'; file_path: string; last_commit_id?: string }
  | { action: 'move'; file_path: string; previous_path: string; content?: Buffer; last_commit_id?: string }
  | { action: 'chmod'; file_path: string; executable: boolean };

export interface Person {
  name: string;
  email: string;
  /** seconds since the epoch; default now */
  time?: number;
}

export interface CommitRequest {
  branch: string;
  /** the commit the branch starts from: the branch tip, another ref's commit for a new branch, or null for the first commit */
  parent: string | null;
  /** the branch's current value for update-ref's compare-and-swap (ZERO_SHA or undefined when new) */
  expectedOld?: string;
  actions: FileAction[];
  message: string;
  author: Person;
  committer?: Person;
}

/** A file action that cannot be applied; `message` is GitLab's wording. */
export class CommitActionError extends Error {}

const locks = new KeyedLock();

/** Runs `fn` alone for this repository within this process (update-ref's compare-and-swap guards other processes). */
export function withRepositoryLock<T>(repo: Repository, fn: () => Promise<T>): Promise<T> {
  return locks.run(repo.gitDir, fn);
}

function personEnv(prefix: 'AUTHOR' | 'COMMITTER', p: Person): Record<string, string> {
  return {
    [`GIT_${prefix}_NAME`]: p.name,
    [`GIT_${prefix}_EMAIL`]: p.email,
    [`GIT_${prefix}_DATE`]: `@${p.time ?? Math.floor(Date.now() / 1000)} +0000`,
  };
}

/**
 * Creates the commit and moves the branch; returns the new commit's SHA. The actions apply in order, each to
 * the tree the ones before it left; only the trees along their paths are read and written (tree-editor.ts).
 */
export async function commitFiles(repo: Repository, req: CommitRequest): Promise<string> {
  return withRepositoryLock(repo, async () => {
    // git's rules for the paths a commit adds (object-checks.ts); removing a path is always allowed
    for (const a of req.actions) {
      if (a.action !== 'delete' && !isWritablePath(a.file_path)) throw new CommitActionError(`invalid path: '${a.file_path}'`);
    }
    const tree = await TreeEditor.of(repo, req.parent);
    for (const a of req.actions) {
      const at = await tree.lookup(a.file_path);
      const existing = at.file;
      switch (a.action) {
        case 'create': {
          if (at.dir) throw new CommitActionError('A directory with this name already exists');
          if (existing || at.underFile) throw new CommitActionError('A file with this name already exists');
          await tree.set(a.file_path, { mode: a.executable ? '100755' : '100644', sha: tree.blob(a.content) });
          break;
        }
        case 'update': {
          if (!existing) throw new CommitActionError("A file with this name doesn't exist");
          const mode = a.executable === undefined ? existing.mode : a.executable ? '100755' : '100644';
          await tree.set(a.file_path, { mode, sha: tree.blob(a.content) });
          break;
        }
        case 'delete': {
          if (!existing) throw new CommitActionError("A file with this name doesn't exist");
          await tree.remove(a.file_path);
          break;
        }
        case 'move': {
          const prev = (await tree.lookup(a.previous_path)).file;
          if (!prev) throw new CommitActionError("A file with this name doesn't exist");
          if (existing || at.dir || at.underFile) throw new CommitActionError('A file with this name already exists');
          const sha = a.content ? tree.blob(a.content) : prev.sha;
          await tree.remove(a.previous_path);
          await tree.set(a.file_path, { mode: prev.mode, sha });
          break;
        }
        case 'chmod': {
          if (!existing) throw new CommitActionError("A file with this name doesn't exist");
          await tree.set(a.file_path, { mode: a.executable ? '100755' : '100644', sha: existing.sha });
          break;
        }
      }
    }
    const root = await tree.write();
    const args = ['commit-tree', root];
    if (req.parent) args.push('-p', req.parent);
    const commitEnv = { ...personEnv('AUTHOR', req.author), ...personEnv('COMMITTER', req.committer ?? req.author) };
    const message = req.message.endsWith('\n') ? req.message : req.message + '\n';
    const sha = (await repo.run(args, { env: commitEnv, input: message })).stdout.toString().trim();
    // what a push of this commit would be checked for, before the branch moves
    const refusal = await checkNewObjects(repo, sha, req.parent);
    if (refusal) throw new CommitActionError(refusal);
    await repo.updateRef(BRANCH_PREFIX + req.branch, sha, req.expectedOld ?? req.parent ?? ZERO_SHA);
    return sha;
  });
}

/**
 * An annotated tag object of `target` by `tagger`, as `git tag -a --cleanup=verbatim -F -` writes it
 * (the tagger line through `git var`, which cleans the name and e-mail as git does), without moving a
 * ref. Returns the tag object's SHA.
 */
export async function annotatedTag(
  repo: Repository,
  input: { name: string; target: { sha: string; type: string }; tagger: Person; message: string },
): Promise<string> {
  const ident = (await repo.run(['var', 'GIT_COMMITTER_IDENT'], { env: personEnv('COMMITTER', input.tagger) })).stdout.toString().trim();
  const content = `object ${input.target.sha}\ntype ${input.target.type}\ntag ${input.name}\ntagger ${ident}\n\n${input.message}`;
  return (await repo.run(['hash-object', '-t', 'tag', '-w', '--stdin'], { input: content })).stdout.toString().trim();
}
