// The markdown of one page. Views render synchronously, markdown does not (it may run on a worker thread,
// domain/markdown/renderer.ts): the `Markdown` component starts the render and leaves a placeholder — an
// HTML comment with a random per-page nonce, which no escaped user text can contain — and the page's HTML
// is filled in when it is sent (`Web.page`), every render of the page running side by side.
import { randomBytes } from 'node:crypto';
import type { Actor } from '../domain/access/actor.ts';
import type { MarkdownContext } from '../domain/markdown/markdown.ts';
import type { MarkdownRenderer } from '../domain/markdown/renderer.ts';

export class PageMarkdown {
  private readonly nonce = randomBytes(12).toString('hex');
  private readonly renders: Promise<string>[] = [];

  /** null: a page that shows no markdown (the sign-in page, built outside `Web`) */
  constructor(private readonly renderer: MarkdownRenderer | null) {}

  /**
   * Starts rendering `text` for `viewer` (its references redacted for them); its placeholder, replaced by
   * `finish(html)` when the page is filled.
   */
  add(text: string, ctx: MarkdownContext, viewer: Actor, finish: (html: string) => string): string {
    if (!this.renderer) throw new Error('this page renders no markdown');
    this.renders.push(this.renderer.render(text, ctx, viewer).then(finish));
    return `<!--markdown:${this.nonce}:${this.renders.length - 1}-->`;
  }

  /** `html` with every placeholder of this page replaced by its rendered markdown. */
  async fill(html: string): Promise<string> {
    if (!this.renders.length) return html;
    const done = await Promise.all(this.renders);
    return html.replace(new RegExp(`<!--markdown:${this.nonce}:(\\d+)-->`, 'g'), (_, i: string) => done[Number(i)] ?? '');
  }
}
