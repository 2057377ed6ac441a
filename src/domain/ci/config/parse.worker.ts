// The worker thread of config/parse-pool.ts: parses the CI files it is sent, one at a time (the YAML,
// includes, extends, every check, and lint's merged_yaml when asked), and asks the main thread for
// each file an `include` names.
import { parentPort } from 'node:worker_threads';
import { ConfigError, type FileLocation, mergedYaml, parseCiConfig } from './parse.ts';
import type { FromWorker, ToWorker } from './parse-pool.ts';

const port = parentPort!;
const send = (m: FromWorker) => port.postMessage(m);
let reading: { resolve: (content: string | null) => void; reject: (e: Error) => void } | null = null;

/** an included file, read by the main thread */
const read = (loc: FileLocation) =>
  new Promise<string | null>((resolve, reject) => {
    reading = { resolve, reject };
    send({ read: loc });
  });

port.on('message', async (m: ToWorker) => {
  if ('file' in m) {
    const r = reading;
    reading = null;
    if (!r) return;
    if ('content' in m.file) r.resolve(m.file.content);
    else r.reject(m.file.configError === null ? new ReadFailed() : new ConfigError(m.file.configError));
    return;
  }
  try {
    const r = await parseCiConfig(m.content, m.canRead ? read : null);
    send({
      parsed: {
        config: r.config,
        errors: r.errors,
        warnings: r.warnings,
        includes: r.includes,
        mergedYaml: m.mergedYaml && r.merged ? mergedYaml(r.merged) : null,
      },
    });
  } catch (e) {
    send({ failed: e instanceof ReadFailed ? null : String((e as Error)?.stack ?? e) });
  }
});

/** the main thread could not read a file (it keeps the error and throws it) */
class ReadFailed extends Error {}

send({ ready: true });
