// Many commits in a row on one branch without a git process per commit: blobs, trees and commits are
// made here (their SHA-1 computed as git computes it), trees edited in memory along the changed paths,
// and everything is written at the end with one `hash-object --stdin-paths` per object type (git checks
// each object and names it: a mismatch fails the batch before any ref moves). The caller moves the ref.
// Committing the pending edits of a component (a commit per translation and author) takes a handful
// of processes instead of seven per commit.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Repository } from '../../../git/repository.ts';

interface RawEntry {
  /** as written: "100644", "100755", "120000", "40000", "160000" */
  mode: string;
  name: Buffer;
  sha: string;
}

type ObjectType = 'blob' | 'tree' | 'commit';

export interface Ident {
  name: string;
  email: string;
  /** seconds since the epoch */
  time: number;
}

function hashOf(type: ObjectType, body: Buffer): string {
  return crypto.createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

function parseRawTree(raw: Buffer): RawEntry[] {
  const out: RawEntry[] = [];
  let i = 0;
  while (i < raw.length) {
    const sp = raw.indexOf(32, i);
    const nul = raw.indexOf(0, sp);
    out.push({ mode: raw.toString('latin1', i, sp), name: raw.subarray(sp + 1, nul), sha: raw.toString('hex', nul + 1, nul + 21) });
    i = nul + 21;
  }
  return out;
}

const isTree = (e: RawEntry) => e.mode === '40000' || e.mode === '040000';

/** git's order of tree entries: by name, a tree's name compared as if it ended with "/" */
function compareEntries(a: RawEntry, b: RawEntry): number {
  const ka = isTree(a) ? Buffer.concat([a.name, Buffer.from('/')]) : a.name;
  const kb = isTree(b) ? Buffer.concat([b.name, Buffer.from('/')]) : b.name;
  return Buffer.compare(ka, kb);
}

function serializeTree(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of [...entries].sort(compareEntries)) parts.push(Buffer.from(`${e.mode} `, 'latin1'), e.name, Buffer.from([0]), Buffer.from(e.sha, 'hex'));
  return Buffer.concat(parts);
}

function ident(p: Ident): string {
  const clean = (v: string) => v.replace(/[<>\n\r\0]/g, '').trim();
  return `${clean(p.name)} <${clean(p.email)}> ${p.time} +0000`;
}

export class BatchCommits {
  private readonly made = new Map<string, { type: ObjectType; body: Buffer }>();
  private readonly trees = new Map<string, RawEntry[]>();

  constructor(private readonly repo: Repository) {}

  /** how many commits, trees and blobs wait to be written */
  get size(): number {
    return this.made.size;
  }

  private add(type: ObjectType, body: Buffer): string {
    const sha = hashOf(type, body);
    if (!this.made.has(sha)) this.made.set(sha, { type, body });
    return sha;
  }

  private async readObject(sha: string): Promise<{ type: string; content: Buffer } | null> {
    const mine = this.made.get(sha);
    if (mine) return { type: mine.type, content: mine.body };
    const o = await this.repo.read(sha);
    return o?.content ? { type: o.type, content: o.content } : null;
  }

  private async tree(sha: string): Promise<RawEntry[]> {
    let entries = this.trees.get(sha);
    if (!entries) {
      const o = await this.readObject(sha);
      if (!o || o.type !== 'tree') throw new Error(`not a tree: ${sha}`);
      entries = parseRawTree(o.content);
      this.trees.set(sha, entries);
    }
    return entries;
  }

  /** the root tree of a commit (one made here or one of the repository) */
  async treeOf(commit: string): Promise<string> {
    const o = await this.readObject(commit);
    if (!o || o.type !== 'commit') throw new Error(`not a commit: ${commit}`);
    const m = /^tree ([0-9a-f]{40})$/m.exec(o.content.toString('latin1'));
    if (!m) throw new Error(`a commit without a tree: ${commit}`);
    return m[1];
  }

  /** the blob at `filePath` of a tree, or null */
  async blobAt(treeSha: string, filePath: string): Promise<{ sha: string; mode: string } | null> {
    const parts = filePath.split('/');
    let current = treeSha;
    for (let i = 0; i < parts.length; i++) {
      const name = Buffer.from(parts[i], 'utf8');
      const e = (await this.tree(current)).find((x) => x.name.equals(name));
      if (!e) return null;
      if (i === parts.length - 1) return isTree(e) || e.mode === '160000' ? null : { sha: e.sha, mode: e.mode };
      if (!isTree(e)) return null;
      current = e.sha;
    }
    return null;
  }

  /**
   * The tree `treeSha` with `filePath` written (content) or removed (null); empty directories go.
   * Returns the new root tree. A path through a file, or onto a directory, throws.
   */
  async withFile(treeSha: string | null, filePath: string, content: Buffer | null): Promise<string | null> {
    const parts = filePath.split('/');
    const edit = async (sha: string | null, depth: number): Promise<string | null> => {
      const entries = sha ? [...(await this.tree(sha))] : [];
      const name = Buffer.from(parts[depth], 'utf8');
      const at = entries.findIndex((x) => x.name.equals(name));
      const existing = at >= 0 ? entries[at] : null;
      let next: RawEntry | null;
      if (depth === parts.length - 1) {
        if (existing && isTree(existing)) throw new Error(`${filePath} is a directory`);
        if (content === null) next = null;
        else next = { mode: existing && existing.mode !== '160000' ? existing.mode : '100644', name, sha: this.add('blob', content) };
      } else {
        if (existing && !isTree(existing)) throw new Error(`${parts.slice(0, depth + 1).join('/')} is a file`);
        const sub = await edit(existing ? existing.sha : null, depth + 1);
        next = sub ? { mode: '40000', name, sha: sub } : null;
      }
      if (at >= 0) entries.splice(at, 1);
      if (next) entries.push(next);
      if (!entries.length) return null;
      const body = serializeTree(entries);
      const out = this.add('tree', body);
      this.trees.set(out, entries);
      return out;
    };
    return edit(treeSha, 0);
  }

  /** a commit object (written later) */
  commit(tree: string, parents: string[], author: Ident, committer: Ident, message: string): string {
    let head = `tree ${tree}\n`;
    for (const p of parents) head += `parent ${p}\n`;
    head += `author ${ident(author)}\ncommitter ${ident(committer)}\n`;
    return this.add('commit', Buffer.from(`${head}\n${message.endsWith('\n') ? message : message + '\n'}`, 'utf8'));
  }

  /** Writes every object made here into the repository (blobs, then trees, then commits). */
  async write(): Promise<void> {
    if (!this.made.size) return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-batch-'));
    try {
      for (const type of ['blob', 'tree', 'commit'] as const) {
        const objects = [...this.made.entries()].filter(([, o]) => o.type === type);
        if (!objects.length) continue;
        const paths = objects.map(([, o], i) => {
          const file = path.join(dir, `${type}-${i}`);
          fs.writeFileSync(file, o.body);
          return file;
        });
        const out = await this.repo.run(['hash-object', '-t', type, '-w', '--no-filters', '--stdin-paths'], { input: paths.join('\n') + '\n' });
        const shas = out.stdout.toString().trim().split('\n');
        objects.forEach(([sha], i) => {
          if (shas[i] !== sha) throw new Error(`${type} object ${i} was written as ${shas[i]}, expected ${sha}`);
        });
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    this.made.clear();
  }
}
