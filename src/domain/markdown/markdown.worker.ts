// The worker thread of domain/markdown/renderer.ts: renders the texts it is sent, one at a time, with the
// same renderer as the main thread, and answers their HTML (with the reference candidates it found).
import { parentPort } from 'node:worker_threads';
import { type MarkdownContext, renderMarkdown, renderMarkdownParts } from './markdown.ts';
import type { ThreadAnswer } from './renderer.ts';

const port = parentPort!;
const answer = (m: ThreadAnswer) => port.postMessage(m);

port.on('message', ({ text, ctx }: { text: string; ctx: MarkdownContext }) => {
  try {
    answer({ parts: renderMarkdownParts(text, ctx) });
  } catch (e) {
    answer({ error: (e as Error).message });
  }
});
// a first render compiles markdown-it's hot paths before the thread takes texts under a time limit
renderMarkdown('# Warm up\n\n- [ ] *a* [b](c) `d` https://e.com #1 ~a @b\n\n> f\n\n```\ng\n```\n'.repeat(20), {
  gfm: true,
  externalUrl: 'http://localhost',
  project: { fullPath: 'a/b', defaultBranch: 'main' },
  references: true,
});
answer({ ready: true });
