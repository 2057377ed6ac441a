// What a repository may take in, from a push or from the API: git's own object checks (fsck, with the
// message ids Gitaly relaxes so that old repositories stay pushable), git's rules for the paths of an
// index (read-cache.c verify_path, with the HFS+ and NTFS rules on everywhere), and a limit on the
// length of one path component that git has not: a name longer than a file system takes (255 bytes on
// ext4, XFS, APFS, NTFS) breaks every checkout of the repository.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { GitError, isSafePath } from './command.ts';
import type { Repository } from './repository.ts';

/** The longest path component (a tree entry's name) in bytes: NAME_MAX of the common file systems. */
export const MAX_PATH_COMPONENT_BYTES = 255;

/**
 * fsck messages Gitaly ignores on receive and fetch (its `fsckConfiguration`): objects that old git
 * versions and tools wrote and that clone fine. Everything else is git's default, made strict.
 */
export const FSCK_IGNORED = ['badTimezone', 'missingSpaceBeforeDate', 'zeroPaddedFilemode'] as const;

/** `-c` settings for receive-pack: git checks every object a push brings (receive.fsckObjects). */
export function receiveFsckArgs(): string[] {
  return ['-c', 'receive.fsckObjects=true', ...FSCK_IGNORED.flatMap((id) => ['-c', `receive.fsck.${id}=ignore`])];
}

// is_hfs_dotgit's ignorable code points (utf8.c next_hfs_char)
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;
// is_ntfs_dotgit: ".git" or its short name "git~1", then only dots and spaces, up to the end or an
// alternate data stream (":")
const NTFS_DOTGIT = /^(?:\.git|git~1)[. ]*(?::.*)?$/i;

/** One path component as git's verify_path (core.protectHFS and core.protectNTFS on) and the length limit take it. */
export function isWritableComponent(name: string): boolean {
  if (name === '' || name === '.' || name === '..') return false;
  if (Buffer.byteLength(name) > MAX_PATH_COMPONENT_BYTES) return false;
  if (name.replace(HFS_IGNORED, '').toLowerCase() === '.git') return false;
  // NTFS also splits at a backslash
  return name.split('\\').every((part) => !NTFS_DOTGIT.test(part));
}

/** A path a commit may add to a tree: isSafePath, no control characters, every component writable. */
export function isWritablePath(p: string): boolean {
  // eslint-disable-next-line no-control-regex
  return isSafePath(p) && !/[\x00-\x1f\x7f]/.test(p) && p.split('/').every(isWritableComponent);
}

/** The message for a tree entry name longer than MAX_PATH_COMPONENT_BYTES. */
function longNameMessage(name: Buffer): string {
  const shown = name
    .subarray(0, 40)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
  return `path component longer than ${MAX_PATH_COMPONENT_BYTES} bytes: '${shown}…' (${name.length} bytes)`;
}

/** The names of a tree object's entries (`<mode> <name>\0<raw object id>` each). */
function* treeNames(tree: Buffer, idLength: number): Generator<Buffer> {
  let i = 0;
  while (i < tree.length) {
    const space = tree.indexOf(0x20, i);
    const nul = tree.indexOf(0, space);
    if (space < 0 || nul < 0) return;
    yield tree.subarray(space + 1, nul);
    i = nul + 1 + idLength;
  }
}

/** `dir` is a quarantine directory of `repo` (git names it in GIT_QUARANTINE_PATH for the hooks). */
export function isQuarantineOf(repo: Repository, dir: string): boolean {
  try {
    const objects = fs.realpathSync(path.join(repo.gitDir, 'objects'));
    const real = fs.realpathSync(path.resolve(repo.gitDir, dir));
    return path.dirname(real) === objects && /^(?:tmp_objdir-)?incoming-/.test(path.basename(real));
  } catch {
    return false;
  }
}

/**
 * The trees stored in `objectDir` alone (a push's quarantine, the pack of an API commit), checked for
 * names longer than MAX_PATH_COMPONENT_BYTES: the first offence as a message, or null. `onlyNew`: trees
 * the repository has already are not looked at (a thin pack's bases: a push that removes such a name
 * sends the tree that has it as a base).
 */
export async function longPathComponent(repo: Repository, objectDir: string, opts: { onlyNew?: boolean } = {}): Promise<string | null> {
  // only the objects of objectDir: no alternates (not even the repository's own objects)
  const env = { GIT_OBJECT_DIRECTORY: objectDir, GIT_ALTERNATE_OBJECT_DIRECTORIES: '' };
  const listed = await repo.run(['cat-file', '--batch-all-objects', '--unordered', '--batch-check=%(objecttype) %(objectname)'], { env });
  let trees = listed.stdout
    .toString('latin1')
    .split('\n')
    .filter((l) => l.startsWith('tree '))
    .map((l) => l.slice(5));
  if (trees.length && opts.onlyNew) {
    const known = await repo.run(['cat-file', '--batch-check=%(objectname)'], { input: trees.join('\n') + '\n' });
    const missing = / missing$/;
    trees = known.stdout
      .toString('latin1')
      .split('\n')
      .filter((l) => missing.test(l))
      .map((l) => l.replace(missing, ''));
  }
  if (!trees.length) return null;
  return new Promise((resolve, reject) => {
    const child = repo.spawn(['cat-file', '--batch'], { env });
    let buffer = Buffer.alloc(0);
    let found: string | null = null;
    child.stdout!.on('data', (chunk: Buffer) => {
      if (found) return;
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const eol = buffer.indexOf(0x0a);
        if (eol < 0) return;
        const [id, type, size] = buffer.subarray(0, eol).toString('latin1').split(' ');
        if (type !== 'tree' || !/^\d+$/.test(size ?? '')) {
          // "<id> missing": nothing follows the line
          buffer = buffer.subarray(eol + 1);
          continue;
        }
        const end = eol + 1 + Number(size);
        if (buffer.length < end + 1) return;
        const tree = buffer.subarray(eol + 1, end);
        buffer = buffer.subarray(end + 1);
        for (const name of treeNames(tree, id.length / 2)) {
          if (name.length > MAX_PATH_COMPONENT_BYTES) {
            found = longNameMessage(name);
            child.kill();
            return;
          }
        }
      }
    });
    child.stderr!.resume();
    child.stdin!.on('error', () => {});
    child.on('error', (e) => reject(new GitError(`git cat-file: ${e.message}`, null, '')));
    child.on('close', (code, signal) => {
      if (found) return resolve(found);
      if (code !== 0) return reject(new GitError(`git cat-file exited with ${code ?? signal}`, code, ''));
      resolve(null);
    });
    child.stdin!.end(trees.join('\n') + '\n');
  });
}

/**
 * The objects `tip` brings over `base` (null: all of tip's), checked as a push's would be: git's fsck
 * (index-pack --strict with the receive settings) and the length of path components. Packs the new
 * objects into a throwaway object directory inside the repository (alternates: the repository's) and
 * removes it. Returns git's message for the first offence, or null.
 */
export async function checkNewObjects(repo: Repository, tip: string, base: string | null): Promise<string | null> {
  const objects = path.join(repo.gitDir, 'objects');
  const dir = path.join(objects, `incoming-hearth_${crypto.randomBytes(6).toString('hex')}`);
  fs.mkdirSync(path.join(dir, 'pack'), { recursive: true });
  try {
    const env = { GIT_OBJECT_DIRECTORY: dir, GIT_ALTERNATE_OBJECT_DIRECTORIES: objects };
    const strict = `--strict=${FSCK_IGNORED.map((id) => `${id.toLowerCase()}=ignore`).join(',')}`;
    const fsck = await new Promise<string | null>((resolve, reject) => {
      const pack = repo.spawn(['pack-objects', '--revs', '--stdout', '-q']);
      const index = repo.spawn(['index-pack', '--stdin', strict], { env });
      const errors: Buffer[] = [];
      index.stderr!.on('data', (b: Buffer) => errors.length < 64 && errors.push(b));
      pack.stderr!.resume();
      index.stdout!.resume();
      pack.stdout!.pipe(index.stdin!);
      index.stdin!.on('error', () => {});
      pack.stdin!.on('error', () => {});
      pack.on('error', reject);
      index.on('error', reject);
      let packCode: number | null = null;
      pack.on('close', (code) => (packCode = code));
      index.on('close', (code) => {
        if (code === 0) return resolve(null);
        const stderr = Buffer.concat(errors).toString('utf8');
        // "error: object <id>: <msgId>: <text>" is git's fsck report
        const reported = /^error: object [0-9a-f]+: (.+)$/m.exec(stderr)?.[1];
        if (reported) return resolve(reported);
        reject(new GitError(`git index-pack exited with ${code} (pack-objects: ${packCode}): ${stderr.trim()}`, code, stderr));
      });
      pack.stdin!.end(base ? `${tip}\n^${base}\n` : `${tip}\n`);
    });
    return fsck ?? (await longPathComponent(repo, dir));
  } finally {
    // removed behind the answer: the directory is this call's own and nothing reads it again
    void fs.promises.rm(dir, { recursive: true, force: true }).catch(() => {});
  }
}
