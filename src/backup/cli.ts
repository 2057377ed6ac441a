// `hearth backup create [--output FILE]` and `hearth backup restore FILE [--force]` (src/cli.ts's command
// table calls runBackupCommand with the subcommand and the arguments after it).

/** The usage lines `hearth backup --help` and `hearth --help` print. */
export const BACKUP_USAGE = `usage: hearth backup create [--output FILE]
       hearth backup restore FILE [--force]`;

/** Returns the exit code. */
export async function runBackupCommand(sub: string | undefined, args: string[]): Promise<number> {
  void sub;
  void args;
  process.stderr.write('hearth backup: not implemented\n');
  return 1;
}
