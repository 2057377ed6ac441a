// The highlighting worker thread (highlight.ts sends it the big files): plain JavaScript, because a worker
// does not inherit the main thread's TypeScript loader; it registers tsx and runs highlight.ts's own code.
import { parentPort } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { highlightLines } = await import('./highlight.ts');

parentPort.on('message', ({ id, text, language }) => {
  try {
    parentPort.postMessage({ id, lines: highlightLines(text, language) });
  } catch (e) {
    parentPort.postMessage({ id, error: String(e) });
  }
});
