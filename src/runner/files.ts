// The runner's file work: which files an artifacts entry names (paths globs, exclude, untracked), the
// zip it uploads (yazl), and the safe extraction of a dependency's zip (yauzl): no entry may land
// outside the directory, by `..`, an absolute name or a symbolic link on the way.
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';

/** A glob (doublestar's syntax: `*`, `?`, `[…]`, `**` for any number of directories) as a RegExp on a relative path. */
export function globToRegExp(pattern: string): RegExp {
  let p = pattern.replace(/^\.\/+/, '').replace(/\/+$/, '');
  if (p === '' || p === '.') p = '**';
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const ch = p[i]!;
    if (ch === '*') {
      if (p[i + 1] === '*') {
        const atStart = i === 0 || p[i - 1] === '/';
        const atEnd = i + 2 === p.length || p[i + 2] === '/';
        if (atStart && atEnd) {
          // "**/" matches zero or more directories; a trailing "**" anything below
          if (i + 2 === p.length) re += '.*';
          else {
            re += '(?:.*/)?';
            i++;
          }
          i++;
          continue;
        }
        re += '[^/]*';
        i++;
        continue;
      }
      re += '[^/]*';
    } else if (ch === '?') re += '[^/]';
    else if (ch === '[') {
      const close = p.indexOf(']', i + 1);
      if (close === -1) re += '\\[';
      else {
        let cls = p.slice(i + 1, close);
        if (cls.startsWith('!')) cls = `^${cls.slice(1)}`;
        re += `[${cls.replace(/\\/g, '\\\\')}]`;
        i = close;
      }
    } else if (ch === '\\' && i + 1 < p.length) {
      re += p[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else re += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Every entry under `root` (relative paths, `/`-separated), without `.git`; directories end up before their content. */
function walk(root: string): { rel: string; dir: boolean }[] {
  const out: { rel: string; dir: boolean }[] = [];
  const visit = (rel: string) => {
    const abs = rel ? path.join(root, rel) : root;
    for (const d of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (!rel && d.name === '.git') continue;
      const r = rel ? `${rel}/${d.name}` : d.name;
      const isDir = d.isDirectory();
      out.push({ rel: r, dir: isDir });
      if (isDir) visit(r);
    }
  };
  visit('');
  return out;
}

/** A user path pattern that would leave the project directory (GitLab: "not a subpath of project directory"). */
export function escapesRoot(pattern: string): boolean {
  if (path.isAbsolute(pattern)) return true;
  return pattern.split('/').includes('..');
}

/**
 * The files and directories an artifacts entry takes: entries matching a path (a matched directory
 * brings everything below it), plus untracked files, minus the excluded ones; sorted.
 */
export function collectArtifacts(root: string, paths: string[], exclude: string[], untracked: string[] = []): { files: string[]; warnings: string[] } {
  const warnings: string[] = [];
  const entries = walk(root);
  const chosen = new Set<string>();
  const takeBelow = (dir: string) => {
    for (const e of entries) if (e.rel === dir || e.rel.startsWith(`${dir}/`)) chosen.add(e.rel);
  };
  for (const p of paths) {
    if (escapesRoot(p)) {
      warnings.push(`${p}: artifact path is not a subpath of project directory`);
      continue;
    }
    const re = globToRegExp(p);
    let found = false;
    for (const e of entries) {
      if (!re.test(e.rel)) continue;
      found = true;
      if (e.dir) takeBelow(e.rel);
      else chosen.add(e.rel);
    }
    if (!found) warnings.push(`${p}: no matching files. Ensure that the artifact path is relative to the working directory`);
  }
  for (const u of untracked) if (entries.some((e) => e.rel === u)) chosen.add(u);
  const ex = exclude.filter((e) => !escapesRoot(e)).map(globToRegExp);
  const excluded = (rel: string) => {
    const parts = rel.split('/');
    for (let n = 1; n <= parts.length; n++) {
      const prefix = parts.slice(0, n).join('/');
      if (ex.some((re) => re.test(prefix))) return true;
    }
    return false;
  };
  const files = [...chosen].filter((rel) => !excluded(rel)).sort();
  return { files, warnings };
}

/** Writes a zip of `files` (relative to root) to `dest`: regular files, directories and symbolic links as they are. */
export async function writeZip(root: string, files: string[], dest: string): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const rel of files) {
    const abs = path.join(root, rel);
    const st = fs.lstatSync(abs);
    if (st.isSymbolicLink()) {
      zip.addBuffer(Buffer.from(fs.readlinkSync(abs)), rel, { mode: 0o120777, mtime: st.mtime });
    } else if (st.isDirectory()) {
      zip.addEmptyDirectory(rel, { mode: st.mode, mtime: st.mtime });
    } else if (st.isFile()) {
      zip.addFile(abs, rel, { mode: st.mode, mtime: st.mtime });
    }
  }
  zip.end();
  await pipeline(zip.outputStream, fs.createWriteStream(dest));
}

export class UnsafeArchive extends Error {}

/** `name` of a zip entry → its absolute destination under root, or null when it would leave root. */
export function entryTarget(root: string, name: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (!name || name.includes('\0') || name.includes('\\') || name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return null;
  const parts = name.split('/').filter((s) => s !== '' && s !== '.');
  if (!parts.length || parts.includes('..')) return null;
  const target = path.resolve(root, ...parts);
  return target.startsWith(root + path.sep) ? target : null;
}

/** The directory `dir` (under root) exists and no component of it is a symbolic link. */
function ensureRealDir(root: string, dir: string): void {
  const rel = path.relative(root, dir);
  let cur = root;
  for (const seg of rel ? rel.split(path.sep) : []) {
    cur = path.join(cur, seg);
    let st: fs.Stats | null = null;
    try {
      st = fs.lstatSync(cur);
    } catch {
      fs.mkdirSync(cur);
      continue;
    }
    if (st.isSymbolicLink() || !st.isDirectory()) throw new UnsafeArchive(`${path.relative(root, cur)}: not a directory`);
  }
}

/** Extracts `zipFile` into root; refuses (throws UnsafeArchive) an entry that would land outside it. */
export async function extractZip(zipFile: string, rootDir: string): Promise<number> {
  const root = fs.realpathSync(rootDir);
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    // names are checked here (entryTarget), so that a refusal says why: yauzl's own check is off
    yauzl.open(zipFile, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true }, (err, z) => (err ? reject(err) : resolve(z!))),
  );
  let count = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        (async () => {
          const fileName = Buffer.from(entry.fileName as unknown as Uint8Array).toString('utf8');
          const target = entryTarget(root, fileName);
          if (!target) throw new UnsafeArchive(`${fileName}: the entry would be outside the directory`);
          const mode = (entry.externalFileAttributes >>> 16) & 0o177777;
          const isDir = fileName.endsWith('/') || (mode & 0o170000) === 0o040000;
          if (isDir) {
            ensureRealDir(root, target);
          } else {
            ensureRealDir(root, path.dirname(target));
            fs.rmSync(target, { force: true, recursive: false });
            const stream = await new Promise<NodeJS.ReadableStream>((res, rej) => zip.openReadStream(entry, (err, s) => (err ? rej(err) : res(s!))));
            if ((mode & 0o170000) === 0o120000) {
              const chunks: Buffer[] = [];
              for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
              const link = Buffer.concat(chunks).toString('utf8');
              // a link may point only inside the directory
              const resolved = path.resolve(path.dirname(target), link);
              if (path.isAbsolute(link) || !(resolved === root || resolved.startsWith(root + path.sep))) {
                throw new UnsafeArchive(`${fileName}: the link points outside the directory`);
              }
              fs.symlinkSync(link, target);
            } else {
              await pipeline(stream, fs.createWriteStream(target, { flags: 'wx', mode: mode & 0o111 ? 0o755 : 0o644 }));
            }
          }
          count++;
          zip.readEntry();
        })().catch(reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
  return count;
}
