// argv → cli.ts's command table: serve | worker | migrate | runner | admin … | backup … | --version | help
import { runCli } from './cli.ts';

runCli(process.argv.slice(2)).then(
  (code) => {
    if (code !== null) process.exit(code);
  },
  (err) => {
    process.stderr.write(`hearth: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
