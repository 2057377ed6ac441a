// The archive's table of contents: what was backed up, from which version and database, and the
// SHA-256 of every other member (restore checks them all before it changes anything).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const FORMAT = 1;
export const MANIFEST = 'manifest.json';

export interface RepositoryEntry {
  /** storage name, or "@translation" for the translation components' mirrors */
  storage: string;
  /** path inside the storage, e.g. "@hashed/6b/86/6b86….git" */
  path: string;
  /** HEAD's target ("refs/heads/main") */
  head: string | null;
  /** number of refs recorded under the fence (0: an empty repository, no bundle); the list is `<bundle without .bundle>.refs` */
  refs: number;
  /** archive member of the bundle, null for an empty repository */
  bundle: string | null;
  /** archive member of the repository's config file */
  config: string | null;
}

export interface Manifest {
  format: number;
  hearth_version: string;
  created_at: string;
  git_version: string;
  /** sqlite: db/hearth.sqlite3 (online backup); postgres: db/<table>.jsonl rows and db/sequences.json */
  dialect: 'sqlite' | 'postgres';
  migrations: string[];
  counts: Record<string, number>;
  repositories: RepositoryEntry[];
  /** member → sha256 hex of every file of the archive but the manifest */
  files: Record<string, string>;
  /** seconds writes were held off while the database snapshot and the repositories were taken */
  fence_seconds: number;
}

export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = crypto.createHash('sha256');
    fs.createReadStream(file)
      .on('error', reject)
      .on('data', (b) => h.update(b))
      .on('end', () => resolve(h.digest('hex')));
  });
}

/** Every regular file under `root`, as paths relative to it with "/" separators. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else if (e.isFile()) out.push(r);
    }
  };
  walk(root, '');
  return out.sort();
}

/** A member name that stays inside the extraction directory. */
export function safeMember(name: string): boolean {
  return name !== '' && !name.startsWith('/') && name.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}
