// A bare repository of `files` files in directories of 100 and `commits` commits, built in one
// `git fast-import` run. The last 200 commits change 500 distinct files (the compare scenario);
// `compare-base` marks the commit before them. Branches branch-00..branch-19 point along history.
import { execFileSync, spawn } from 'node:child_process';

export interface BigRepo {
  files: number;
  commits: number;
  /** "dir042", a directory of 100 entries */
  directory: string;
  /** a file path inside it */
  file: string;
}

function content(i: number, version: number): string {
  let s = `# file ${i}, version ${version}\n`;
  for (let l = 0; l < 8; l++) s += `line ${l} of file ${i}: ${'lorem ipsum dolor sit amet '.repeat(1 + ((i + l) % 3))}${version}\n`;
  return s;
}

const pathOf = (i: number) => `dir${String(Math.floor(i / 100)).padStart(3, '0')}/file${String(i % 100).padStart(3, '0')}.txt`;

export async function buildBigRepo(gitDir: string, env: NodeJS.ProcessEnv, files = 10_000, commits = 5_000): Promise<BigRepo> {
  const child = spawn('git', ['--git-dir', gitDir, 'fast-import', '--quiet'], { env, stdio: ['pipe', 'inherit', 'inherit'] });
  const chunks: string[] = [];
  const flush = async () => {
    const data = chunks.join('');
    chunks.length = 0;
    if (!child.stdin.write(data)) await new Promise((r) => child.stdin.once('drain', r));
  };
  const emit = (s: string) => chunks.push(s);
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  const version = new Map<number, number>();
  let time = 1_600_000_000;
  const authors = [
    'Ada Lovelace <ada@example.com>',
    'Grace Hopper <grace@example.com>',
    'Alan Turing <alan@example.com>',
    'Edsger Dijkstra <edsger@example.com>',
  ];
  for (let c = 1; c <= commits; c++) {
    time += 600;
    const who = authors[c % authors.length];
    emit(`commit refs/heads/main\nmark :${c}\nauthor ${who} ${time} +0000\ncommitter ${who} ${time} +0000\n`);
    emit(data(`Commit number ${c}\n\nChanges a few files.\n`));
    if (c > 1) emit(`from :${c - 1}\n`);
    let touched: number[];
    if (c === 1) touched = Array.from({ length: files }, (_, i) => i);
    else if (c > commits - 200) {
      const k = c - (commits - 200) - 1; // 0..199 → 500 distinct files, 2 or 3 per commit
      touched = [];
      for (let j = Math.floor((k * 5) / 2); j < Math.floor(((k + 1) * 5) / 2); j++) touched.push((j * 20) % files);
    } else touched = [(c * 7919) % files, (c * 104729) % files];
    for (const i of touched) {
      const v = (version.get(i) ?? 0) + 1;
      version.set(i, v);
      emit(`M 100644 inline ${pathOf(i)}\n${data(content(i, v))}`);
    }
    emit('\n');
    if (c === commits - 200) emit(`reset refs/heads/compare-base\nfrom :${c}\n\n`);
    if (c % Math.floor(commits / 20) === 0) emit(`reset refs/heads/branch-${String(c / Math.floor(commits / 20) - 1).padStart(2, '0')}\nfrom :${c}\n\n`);
    if (chunks.length > 2000) await flush();
  }
  await flush();
  child.stdin.end();
  await new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))));
  execFileSync('git', ['--git-dir', gitDir, 'gc', '--quiet'], { env });
  return { files, commits, directory: 'dir042', file: 'dir042/file007.txt' };
}
