// The worker thread of db/limited-reads.ts: a read-only connection to the server's SQLite file with
// the same `regexp()` function; runs the queries it is sent, one at a time, and answers their rows.
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { registerRegexp } from './regexp.ts';
import type { WorkerAnswer } from './limited-reads.ts';

const port = parentPort!;
const db = new SQLite((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
registerRegexp(db);

const statements = new Map<string, SQLite.Statement>();
const answer = (m: WorkerAnswer) => port.postMessage(m);

port.on('message', ({ sql, parameters }: { sql: string; parameters: unknown[] }) => {
  try {
    let stmt = statements.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      if (!stmt.reader) throw new Error('only queries that return rows may run here');
      if (statements.size >= 100) statements.clear();
      statements.set(sql, stmt);
    }
    answer({ rows: stmt.all(parameters) });
  } catch (e) {
    answer({ error: (e as Error).message });
  }
});
answer({ ready: true });
