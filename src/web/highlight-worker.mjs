// The highlighting worker thread (highlight.ts sends it the big files): plain JavaScript, copied as is to
// dist/ by the build. Compiled, highlight.js sits next to it; from the sources, a worker does not inherit
// the main thread's TypeScript loader, so it registers tsx and runs highlight.ts's own code.
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';

const compiled = new URL('./highlight.js', import.meta.url);
let highlightLines;
if (fs.existsSync(compiled)) {
  ({ highlightLines } = await import(compiled.href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ highlightLines } = await import('./highlight.ts'));
}

parentPort.on('message', ({ id, text, language }) => {
  try {
    parentPort.postMessage({ id, lines: highlightLines(text, language) });
  } catch (e) {
    parentPort.postMessage({ id, error: String(e) });
  }
});
