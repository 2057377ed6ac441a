/** The number of files under `dir` and the newest modification time among them (ms). */
export function sourceState(dir: string): { files: number; newest: number };
