/** The number of files under `dir` and the newest modification time among them (ms). */
export function sourceState(dir: string): { files: number; newest: number };
/** What `root`/dist/build.json holds when dist/ is current for `root`/src/, else null. */
export function currentBuild(root: string): { files: number; newest: number; builtAt?: string } | null;
