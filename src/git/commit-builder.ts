// Commits without a working copy: a temporary index → write-tree → commit-tree → the checks a push
// gets (object-checks.ts) → update-ref (new, old), under a per-repository lock. Used by the files API, changelog commits, README initialisation and
// translation commits.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Repository } from './repository.ts';
import { BRANCH_PREFIX, ZERO_SHA } from './refs.ts';
import { KeyedLock } from '../lib/keyed-lock.ts';
import { checkNewObjects, isWritablePath } from './object-checks.ts';

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

/** Creates the commit and moves the branch; returns the new commit's SHA. */
export async function commitFiles(repo: Repository, req: CommitRequest): Promise<string> {
  return withRepositoryLock(repo, async () => {
    const index = path.join(repo.gitDir, `hearth-index-${crypto.randomBytes(6).toString('hex')}`);
    const env = { GIT_INDEX_FILE: index };
    try {
      if (req.parent) await repo.run(['read-tree', `${req.parent}^{tree}`], { env });
      else await repo.run(['read-tree', '--empty'], { env });
      const listed = await repo.run(['ls-files', '-s', '-z'], { env });
      const files = new Map<string, { mode: string; sha: string }>();
      for (const rec of listed.stdout.toString('utf8').split('\0')) {
        if (!rec) continue;
        const tab = rec.indexOf('\t');
        const [mode, sha] = rec.slice(0, tab).split(' ');
        files.set(rec.slice(tab + 1), { mode, sha });
      }
      // a path below an existing file ("README.md/x") would silently replace that file
      const underFile = (p: string) => {
        const parts = p.split('/');
        for (let i = 1; i < parts.length; i++) if (files.has(parts.slice(0, i).join('/'))) return true;
        return false;
      };
      const isDir = (p: string) => {
        const prefix = p + '/';
        for (const k of files.keys()) if (k.startsWith(prefix)) return true;
        return false;
      };
      const lines: string[] = [];
      // git's rules for the paths a commit adds (object-checks.ts); removing a path is always allowed
      for (const a of req.actions) {
        if (a.action !== 'delete' && !isWritablePath(a.file_path)) throw new CommitActionError(`invalid path: '${a.file_path}'`);
      }
      const write = async (content: Buffer) => (await repo.run(['hash-object', '-w', '--stdin'], { input: content })).stdout.toString().trim();
      for (const a of req.actions) {
        const existing = files.get(a.file_path);
        switch (a.action) {
          case 'create': {
            if (isDir(a.file_path)) throw new CommitActionError('A directory with this name already exists');
            if (existing || underFile(a.file_path)) throw new CommitActionError('A file with this name already exists');
            const sha = await write(a.content);
            const mode = a.executable ? '100755' : '100644';
            files.set(a.file_path, { mode, sha });
            lines.push(`${mode} ${sha}\t${a.file_path}`);
            break;
          }
          case 'update': {
            if (!existing) throw new CommitActionError("A file with this name doesn't exist");
            const sha = await write(a.content);
            const mode = a.executable === undefined ? existing.mode : a.executable ? '100755' : '100644';
            files.set(a.file_path, { mode, sha });
            lines.push(`${mode} ${sha}\t${a.file_path}`);
            break;
          }
          case 'delete': {
            if (!existing) throw new CommitActionError("A file with this name doesn't exist");
            files.delete(a.file_path);
            lines.push(`0 ${ZERO_SHA}\t${a.file_path}`);
            break;
          }
          case 'move': {
            const prev = files.get(a.previous_path);
            if (!prev) throw new CommitActionError("A file with this name doesn't exist");
            if (existing || isDir(a.file_path) || underFile(a.file_path)) throw new CommitActionError('A file with this name already exists');
            const sha = a.content ? await write(a.content) : prev.sha;
            files.delete(a.previous_path);
            files.set(a.file_path, { mode: prev.mode, sha });
            lines.push(`0 ${ZERO_SHA}\t${a.previous_path}`, `${prev.mode} ${sha}\t${a.file_path}`);
            break;
          }
          case 'chmod': {
            if (!existing) throw new CommitActionError("A file with this name doesn't exist");
            const mode = a.executable ? '100755' : '100644';
            files.set(a.file_path, { mode, sha: existing.sha });
            lines.push(`${mode} ${existing.sha}\t${a.file_path}`);
            break;
          }
        }
      }
      if (lines.length) await repo.run(['update-index', '-z', '--index-info'], { env, input: lines.join('\0') + '\0' });
      const tree = (await repo.run(['write-tree'], { env })).stdout.toString().trim();
      const args = ['commit-tree', tree];
      if (req.parent) args.push('-p', req.parent);
      const commitEnv = { ...personEnv('AUTHOR', req.author), ...personEnv('COMMITTER', req.committer ?? req.author) };
      const message = req.message.endsWith('\n') ? req.message : req.message + '\n';
      const sha = (await repo.run(args, { env: commitEnv, input: message })).stdout.toString().trim();
      // what a push of this commit would be checked for, before the branch moves
      const refusal = await checkNewObjects(repo, sha, req.parent);
      if (refusal) throw new CommitActionError(refusal);
      await repo.updateRef(BRANCH_PREFIX + req.branch, sha, req.expectedOld ?? req.parent ?? ZERO_SHA);
      return sha;
    } finally {
      fs.rmSync(index, { force: true });
      fs.rmSync(index + '.lock', { force: true });
    }
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
