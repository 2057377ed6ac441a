// What bin/build.js records in dist/build.json and bin/hearth.js compares: the number of files under src/
// and the newest modification time among them (a stat per file: a few milliseconds).
import fs from 'node:fs';
import path from 'node:path';

/** @returns {{ files: number, newest: number }} */
export function sourceState(dir) {
  let files = 0;
  let newest = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        files++;
        const m = fs.statSync(p).mtimeMs;
        if (m > newest) newest = m;
      }
    }
  };
  walk(dir);
  return { files, newest };
}

/**
 * dist/ is current: `root`/dist/build.json records the state of `root`/src/ it was built from, and src/ has
 * neither more nor fewer files nor a newer one since. Returns what build.json holds, or null.
 * @returns {{ files: number, newest: number, builtAt?: string } | null}
 */
export function currentBuild(root) {
  let built;
  try {
    built = JSON.parse(fs.readFileSync(path.join(root, 'dist', 'build.json'), 'utf8'));
  } catch {
    return null;
  }
  const now = sourceState(path.join(root, 'src'));
  return now.files === built.files && now.newest <= built.newest ? built : null;
}
