// `hearth backup create [--output FILE]` and `hearth backup restore FILE [--force]` (src/cli.ts's command
// table calls runBackupCommand with the subcommand and the arguments after it).
import { ConfigError, loadConfig } from '../config.ts';
import { BackupError, createBackup } from './create.ts';
import { restoreBackup } from './restore.ts';

/** The usage lines `hearth backup --help` and `hearth --help` print. */
export const BACKUP_USAGE = `usage: hearth backup create [--output FILE]
       hearth backup restore FILE [--force]`;

const HELP: Record<string, string> = {
  create: `usage: hearth backup create [--output FILE]

Writes one archive (tar) with a consistent snapshot of the database, every repository as a git bundle,
the translation mirrors, the local blobs, the SSH host keys and a manifest with the SHA-256 of every
member. Works while the server runs. Default FILE: DATA_DIR/backups/<timestamp>_<date>_<version>_hearth_backup.tar.
The archive is written as FILE.partial and renamed when complete.`,
  restore: `usage: hearth backup restore FILE [--force]

Restores the archive into the data directory (DATA_DIR) and database (DATABASE_URL, or the embedded SQLite
database) of the environment, which must be empty unless --force. Every checksum is verified before
anything changes. Stop the server first.`,
};

function fail(message: string): number {
  process.stderr.write(`hearth backup: ${message}\n${BACKUP_USAGE}\n`);
  return 2;
}

/** Returns the exit code: 0, 1 when the backup or restore failed, 2 for a usage error (as src/cli.ts). */
export async function runBackupCommand(sub: string | undefined, args: string[]): Promise<number> {
  if (sub === undefined) return fail('missing command (create or restore)');
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(`${BACKUP_USAGE}\n`);
    return 0;
  }
  if (sub !== 'create' && sub !== 'restore') return fail(`unknown command "${sub}"`);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${HELP[sub]}\n`);
    return 0;
  }
  let output: string | undefined;
  let force = false;
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (sub === 'create' && (a === '--output' || a === '-o')) {
      output = args[++i];
      if (!output) return fail('--output needs a file name');
    } else if (sub === 'create' && a.startsWith('--output=')) output = a.slice('--output='.length);
    else if (sub === 'restore' && a === '--force') force = true;
    else if (a.startsWith('-')) return fail(`unknown option "${a}" for ${sub}`);
    else positional.push(a);
  }
  if (sub === 'create' && positional.length) return fail(`unexpected argument "${positional[0]}"`);
  if (sub === 'restore' && positional.length !== 1) return fail('restore takes exactly one FILE');
  try {
    const config = loadConfig();
    if (sub === 'create') await createBackup(config, { output });
    else await restoreBackup(config, positional[0], { force });
    return 0;
  } catch (e) {
    if (e instanceof BackupError || e instanceof ConfigError) {
      process.stderr.write(`hearth backup ${sub}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
