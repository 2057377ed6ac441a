// A commit's tree edited in memory: only the trees along the changed paths are read (through the
// repository's object cache and cat-file pool), changed trees are serialized as git writes them (entries
// in git's order, canonical modes) and named by their SHA-1, and the new blobs and trees are written at
// the end as loose objects, the way git writes them (zlib of "<type> <size>\0<body>" at objects/xx/…, through
// a temporary file renamed into place), without a git process: the commit's checks (object-checks.ts) then
// read them back through git's fsck. The cost of a commit thus follows the depth of its paths, not the size
// of the tree: no index of every file is read, written and listed.
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Repository } from './repository.ts';

export interface FileEntry {
  /** "100644", "100755", "120000" (a symbolic link) or "160000" (a submodule's commit) */
  mode: string;
  sha: string;
}

/** an entry of a loaded directory; `dir` once the subtree has been read or changed */
interface Node {
  mode: string;
  sha: string;
  dir?: Dir;
}

interface Dir {
  /** by the entry's name as bytes (latin1 of its raw bytes) */
  entries: Map<string, Node>;
  changed: boolean;
}

const TREE_MODE = '40000';
const isTreeMode = (mode: string) => mode === TREE_MODE || mode === '040000';

/** git's canonical mode of an entry (create_ce_mode / canon_mode): what write-tree would write */
function canonicalMode(mode: string): string {
  if (isTreeMode(mode)) return TREE_MODE;
  if (mode === '120000' || mode === '160000') return mode;
  return Number.parseInt(mode, 8) & 0o100 ? '100755' : '100644';
}

const hashOf = (type: 'blob' | 'tree', body: Buffer) => crypto.createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');

function parseTree(raw: Buffer): Map<string, Node> {
  const entries = new Map<string, Node>();
  let i = 0;
  while (i < raw.length) {
    const sp = raw.indexOf(32, i);
    const nul = raw.indexOf(0, sp);
    entries.set(raw.toString('latin1', sp + 1, nul), { mode: raw.toString('latin1', i, sp), sha: raw.toString('hex', nul + 1, nul + 21) });
    i = nul + 21;
  }
  return entries;
}

/** git's order of tree entries: by name, a tree's name compared as if it ended with "/" */
function serializeTree(entries: Map<string, Node>): Buffer {
  const sorted = [...entries]
    .map(([name, n]) => ({ key: isTreeMode(n.mode) ? `${name}/` : name, name, n }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return Buffer.concat(sorted.flatMap(({ name, n }) => [Buffer.from(`${canonicalMode(n.mode)} ${name}\0`, 'latin1'), Buffer.from(n.sha, 'hex')]));
}

const segments = (p: string) => p.split('/').map((s) => Buffer.from(s, 'utf8').toString('latin1'));

export class TreeEditor {
  private readonly blobs = new Map<string, Buffer>();

  private constructor(
    private readonly repo: Repository,
    private readonly root: Dir,
  ) {}

  /** The tree of `commit` (null: the empty tree of a first commit), ready to edit. */
  static async of(repo: Repository, commit: string | null): Promise<TreeEditor> {
    if (!commit) return new TreeEditor(repo, { entries: new Map(), changed: true });
    const o = await repo.read(commit);
    const tree = o?.type === 'commit' && o.content ? /^tree ([0-9a-f]{40})$/m.exec(o.content.toString('latin1'))?.[1] : undefined;
    if (!tree) throw new Error(`not a commit: ${commit}`);
    const editor = new TreeEditor(repo, { entries: new Map(), changed: false });
    editor.root.entries = await editor.load(tree);
    return editor;
  }

  private async load(sha: string): Promise<Map<string, Node>> {
    const o = await this.repo.read(sha);
    if (o?.type !== 'tree' || !o.content) throw new Error(`not a tree: ${sha}`);
    return parseTree(o.content);
  }

  private async dirOf(node: Node): Promise<Dir> {
    node.dir ??= { entries: await this.load(node.sha), changed: false };
    return node.dir;
  }

  /** What `p` names: a file (blob, link or submodule), a directory, or nothing; `underFile`: a parent of `p` is a file. */
  async lookup(p: string): Promise<{ file: FileEntry | null; dir: boolean; underFile: boolean }> {
    const parts = segments(p);
    let dir = this.root;
    for (let i = 0; i < parts.length; i++) {
      const node = dir.entries.get(parts[i]);
      if (!node) return { file: null, dir: false, underFile: false };
      if (i === parts.length - 1)
        return isTreeMode(node.mode) ? { file: null, dir: true, underFile: false } : { file: { mode: node.mode, sha: node.sha }, dir: false, underFile: false };
      if (!isTreeMode(node.mode)) return { file: null, dir: false, underFile: true };
      dir = await this.dirOf(node);
    }
    return { file: null, dir: false, underFile: false };
  }

  /** The directories along `p` (made where missing), each marked changed; the last one holds `p`'s entry. */
  private async parentOf(p: string): Promise<{ dir: Dir; name: string; chain: Dir[] }> {
    const parts = segments(p);
    let dir = this.root;
    const chain = [dir];
    dir.changed = true;
    for (const part of parts.slice(0, -1)) {
      let node = dir.entries.get(part);
      if (!node || !isTreeMode(node.mode)) {
        node = { mode: TREE_MODE, sha: '', dir: { entries: new Map(), changed: true } };
        dir.entries.set(part, node);
      }
      dir = await this.dirOf(node);
      dir.changed = true;
      chain.push(dir);
    }
    return { dir, name: parts[parts.length - 1], chain };
  }

  /** The content of a new blob (written with the tree); answers its SHA. */
  blob(content: Buffer): string {
    const sha = hashOf('blob', content);
    this.blobs.set(sha, content);
    return sha;
  }

  /** Puts a file entry at `p` (its parents become directories). */
  async set(p: string, entry: FileEntry): Promise<void> {
    const { dir, name } = await this.parentOf(p);
    dir.entries.set(name, { mode: entry.mode, sha: entry.sha });
  }

  /** Removes the entry at `p`; directories left empty go, as they do from an index. */
  async remove(p: string): Promise<void> {
    const { dir, name, chain } = await this.parentOf(p);
    dir.entries.delete(name);
    const parts = segments(p);
    for (let i = chain.length - 1; i > 0 && chain[i].entries.size === 0; i--) chain[i - 1].entries.delete(parts[i - 1]);
  }

  /** Writes the new blobs and the changed trees into the repository; answers the root tree's SHA. */
  async write(): Promise<string> {
    const trees = new Map<string, Buffer>();
    const name = (dir: Dir): string => {
      for (const node of dir.entries.values()) if (node.dir?.changed) node.sha = name(node.dir);
      const body = serializeTree(dir.entries);
      const sha = hashOf('tree', body);
      trees.set(sha, body);
      dir.changed = false;
      return sha;
    };
    const root = name(this.root);
    const objects = path.join(this.repo.gitDir, 'objects');
    await Promise.all([
      ...[...this.blobs].map(([sha, body]) => writeLooseObject(objects, 'blob', sha, body)),
      ...[...trees].map(([sha, body]) => writeLooseObject(objects, 'tree', sha, body)),
    ]);
    this.blobs.clear();
    return root;
  }
}

/**
 * One loose object as git writes it (write_loose_object): zlib of "<type> <size>\0<body>" at
 * objects/<2 hex>/<38 hex>, written to a temporary file in that directory and renamed, so that it appears
 * whole or not at all; read-only, as git leaves it. An object already stored loose is left alone.
 */
async function writeLooseObject(objects: string, type: 'blob' | 'tree', sha: string, body: Buffer): Promise<void> {
  const dir = path.join(objects, sha.slice(0, 2));
  const file = path.join(dir, sha.slice(2));
  const there = await fs.access(file).then(
    () => true,
    () => false,
  );
  if (there) return;
  await fs.mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `tmp_obj_hearth_${crypto.randomBytes(6).toString('hex')}`);
  try {
    await fs.writeFile(tmp, await deflate(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body])), { mode: 0o444 });
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}

const deflate = (input: Buffer) => new Promise<Buffer>((resolve, reject) => zlib.deflate(input, (err, out) => (err ? reject(err) : resolve(out))));
