// The markdown of one page. Views render synchronously, markdown does not (it may run on a worker thread,
// domain/markdown/renderer.ts): the `Markdown` component starts the render and leaves a placeholder — an
// HTML comment with a random per-page nonce, which no escaped user text can contain — and the page's HTML
// is filled in when it is sent (`Web.page`), every render of the page running side by side. Their GitLab
// references are redacted for the viewer together, one access query per kind for the whole page.
import { randomBytes } from 'node:crypto';
import type { Actor } from '../domain/access/actor.ts';
import type { MarkdownContext } from '../domain/markdown/markdown.ts';
import type { LinkedMarkdown } from '../domain/markdown/references.ts';
import type { MarkdownRenderer } from '../domain/markdown/renderer.ts';

export class PageMarkdown {
  private readonly nonce = randomBytes(12).toString('hex');
  private readonly renders: { linked: Promise<string | LinkedMarkdown>; viewer: Actor; finish: (html: string) => string }[] = [];

  /** null: a page that shows no markdown (the sign-in page, built outside `Web`) */
  constructor(private readonly renderer: MarkdownRenderer | null) {}

  /**
   * Starts rendering `text` for `viewer` (its references redacted for them); its placeholder, replaced by
   * `finish(html)` when the page is filled.
   */
  add(text: string, ctx: MarkdownContext, viewer: Actor, finish: (html: string) => string): string {
    if (!this.renderer) throw new Error('this page renders no markdown');
    this.renders.push({ linked: this.renderer.renderLinked(text, ctx, true), viewer, finish });
    return `<!--markdown:${this.nonce}:${this.renders.length - 1}-->`;
  }

  /** `html` with every placeholder of this page replaced by its rendered markdown. */
  async fill(html: string): Promise<string> {
    if (!this.renders.length || !this.renderer) return html;
    const renderer = this.renderer;
    const linked = await Promise.all(this.renders.map((r) => r.linked));
    // one redaction per viewer (a page has one)
    const done: string[] = new Array(linked.length);
    for (const viewer of new Set(this.renders.map((r) => r.viewer))) {
      const mine = this.renders.flatMap((r, i) => (r.viewer === viewer ? [i] : []));
      const redacted = await renderer.redactAll(
        mine.map((i) => linked[i]),
        viewer,
      );
      mine.forEach((i, j) => {
        done[i] = this.renders[i].finish(redacted[j]);
      });
    }
    return html.replace(new RegExp(`<!--markdown:${this.nonce}:(\\d+)-->`, 'g'), (_, i: string) => done[Number(i)] ?? '');
  }
}
