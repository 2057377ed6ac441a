// Markdown rendering whose cost a user controls (a 1 MB note or README costs markdown-it seconds) kept
// off the event loop, as db/limited-reads.ts keeps regular-expression searches:
//   - texts over MAX_MARKDOWN_BYTES are cut there, as GitLab's TruncateSourceFilter does, with its notice;
//   - rendered HTML is cached by a hash of the text and its context (GitLab caches `*_html` per content
//     version): a page that shows the same README again costs a lookup; concurrent misses share one render;
//   - short texts (up to SYNC_MAX characters, a few ms at worst) render at once on the main thread; longer
//     ones on one of THREADS worker threads, each render within `timeoutMs`. Past it the thread is
//     terminated (replaced on next use) and the text is shown escaped, as plain text — that answer is
//     cached for 10 minutes, so the same text does not cost the time limit again at every view. At most
//     QUEUE renders wait for a thread, each at most the time limit; beyond that the text is shown as plain
//     text (not cached).
// With a viewer (and gfm), GitLab references in the text are found by the render (placeholders in the
// cached HTML), linked for every viewer and redacted for this one (references.ts).
// `render` never rejects: every failure has the plain-text answer.
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { Gate } from '../../lib/gate.ts';
import { VersionedCache } from '../../lib/versioned-cache.ts';
import { type JobAnswer, JobThread, ThreadPool, workerEntry } from '../../lib/worker-boot.ts';
import type { Actor } from '../access/actor.ts';
import { escapeMarkdownText, MAX_MARKDOWN_BYTES, type MarkdownContext, type RenderedParts, renderMarkdownParts } from './markdown.ts';
import type { LinkedMarkdown, MarkdownReferences } from './references.ts';

/** Texts up to this many characters render on the main thread (markdown-it's worst is some 2.5 µs a byte). */
export const SYNC_MAX = 2048;
/** one core is left to the event loop (and one thread on a machine of two) */
export const THREADS = Math.max(1, Math.min(4, availableParallelism() - 1));
/** renders waiting for a thread (a page of long notes starts one per note; each waits at most the time limit) */
export const QUEUE = 256;
/** the rendered HTML held, in bytes (two per character) */
const CACHE_BYTES = 64 * 1024 * 1024;
/** how long a text stopped at the time limit is answered as plain text before it is tried again */
const STOPPED_TTL_MS = 10 * 60 * 1000;

/** What the worker answers: `ready` once, then one answer per text. */
export type ThreadAnswer = JobAnswer<'parts', RenderedParts>;

class RenderTimeout extends Error {}

/** GitLab's TruncateSourceFilter: the first MAX_MARKDOWN_BYTES bytes, `...`, and a notice above. */
export function truncateMarkdown(text: string): string {
  if (text.length * 3 <= MAX_MARKDOWN_BYTES || Buffer.byteLength(text) <= MAX_MARKDOWN_BYTES) return text;
  const cut = Buffer.from(text)
    .subarray(0, MAX_MARKDOWN_BYTES)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return `_The text is longer than ${MAX_MARKDOWN_BYTES} characters and has been visually truncated._\n\n${cut}...`;
}

/** What a text shows when it could not be rendered: itself, escaped, with the reason. */
export function plainMarkdown(text: string, reason: 'timeout' | 'busy'): string {
  const why = reason === 'timeout' ? 'This text took too long to render' : 'The server is busy';
  return `<p><em>${why}: it is shown as plain text.</em></p>\n<pre class="markdown-plain">${escapeMarkdownText(text)}</pre>`;
}

/** the memory a render takes in the cache: its HTML and its references' texts, two bytes a character */
const partsSize = (p: RenderedParts) => 2 * p.html.length + p.refs.reduce((n, r) => n + 64 + 2 * r.text.length, 0);
const plainParts = (html: string): RenderedParts => ({ html, refs: [] });

export class MarkdownRenderer {
  private readonly cache = new VersionedCache<RenderedParts>(10_000, Number.POSITIVE_INFINITY, { size: partsSize, maxSize: CACHE_BYTES });
  /** texts stopped at the time limit, shown as plain text for a while (a busy machine may have been the cause) */
  private readonly stopped = new VersionedCache<RenderedParts>(1000, STOPPED_TTL_MS, { size: partsSize, maxSize: CACHE_BYTES / 2 });
  private readonly inflight = new Map<string, Promise<RenderedParts>>();
  private readonly gate = new Gate({ slots: THREADS, queue: QUEUE });
  private readonly threads = new ThreadPool(() => new RenderThread());
  /** what the renders of this process came to: cache hits, rendered at once, on a thread, stopped, not run (busy) */
  readonly counts = { hits: 0, sync: 0, threads: 0, timeouts: 0, busy: 0 };

  constructor(
    private readonly timeoutMs: number,
    private readonly log?: Logger,
    /** links and redacts references (none without it, as without a viewer) */
    private readonly references?: MarkdownReferences,
  ) {}

  /**
   * The HTML of `text` (cached, rendered at once, or on a worker thread within the time limit). With
   * `viewer` and gfm, its GitLab references are links, those `viewer` may not read shown as written.
   */
  async render(text: string, ctx: MarkdownContext, viewer?: Actor): Promise<string> {
    const linked = await this.renderLinked(text, ctx, viewer !== undefined);
    return typeof linked === 'string' ? linked : (await this.references!.redactAll([linked], viewer!))[0];
  }

  /**
   * The render of `text` with its references (with `references` and gfm) linked for every viewer but not
   * yet redacted: a page renders its texts so, then redacts them all at once (`MarkdownReferences.redactAll`).
   */
  async renderLinked(text: string, ctx: MarkdownContext, references: boolean): Promise<string | LinkedMarkdown> {
    const withReferences = ctx.gfm && references && this.references !== undefined;
    const c: MarkdownContext = { gfm: ctx.gfm, externalUrl: ctx.externalUrl, project: ctx.project ?? null, references: withReferences };
    const input = truncateMarkdown(text);
    const key = createHash('sha256')
      .update(JSON.stringify([c.gfm, c.externalUrl, c.project?.fullPath ?? null, c.project?.defaultBranch ?? null, withReferences]))
      .update('\0')
      .update(input)
      .digest('base64');
    const parts = await this.parts(key, input, c);
    if (!parts.refs.length) return parts.html;
    return this.references!.linkedOrText(parts, key, c);
  }

  /**
   * The issues `text` (gfm, in `ctx.project`) references that `author` may read: its render's issue references
   * and links to issues (`MarkdownReferences.readableIssuesIn`). None without references, or for a text whose
   * render stopped or found no thread (shown as plain text).
   */
  async readableIssuesIn(text: string, ctx: MarkdownContext, author: Actor): Promise<number[]> {
    if (!this.references) return [];
    return this.references.readableIssuesIn(await this.renderLinked(text, { ...ctx, gfm: true }, true), author);
  }

  /** Texts of `renderLinked` redacted for `viewer` (one access query per kind for all of them). */
  redactAll(texts: readonly (string | LinkedMarkdown)[], viewer: Actor): Promise<string[]> {
    if (!this.references || texts.every((t) => typeof t === 'string')) return Promise.resolve(texts as string[]);
    return this.references.redactAll(texts, viewer);
  }

  /** The render of `input`: its HTML with a placeholder per reference candidate. */
  private parts(key: string, input: string, ctx: MarkdownContext): Promise<RenderedParts> {
    const hit = this.cache.get(key, '') ?? this.stopped.get(key, '');
    if (hit !== undefined) {
      this.counts.hits++;
      return Promise.resolve(hit);
    }
    if (input.length <= SYNC_MAX) {
      this.counts.sync++;
      const parts = renderMarkdownParts(input, ctx);
      this.cache.set(key, '', parts);
      return Promise.resolve(parts);
    }
    let p = this.inflight.get(key);
    if (!p) {
      p = this.inThread(key, input, ctx).finally(() => this.inflight.delete(key));
      this.inflight.set(key, p);
    }
    return p;
  }

  private async inThread(key: string, text: string, ctx: MarkdownContext): Promise<RenderedParts> {
    const entered =
      !this.threads.closed &&
      (await this.gate.enter(this.timeoutMs).then(
        () => true,
        () => false,
      ));
    if (!entered) {
      this.counts.busy++;
      return plainParts(plainMarkdown(text, 'busy'));
    }
    let thread: RenderThread | undefined;
    try {
      thread = this.threads.take();
      await thread.ready;
      this.counts.threads++;
      const parts = await thread.render(text, ctx, this.timeoutMs);
      this.cache.set(key, '', parts);
      return parts;
    } catch (e) {
      if (!(e instanceof RenderTimeout)) {
        this.log?.error({ err: e }, 'markdown worker failed');
        this.counts.busy++;
        return plainParts(plainMarkdown(text, 'busy'));
      }
      this.counts.timeouts++;
      this.log?.warn({ bytes: Buffer.byteLength(text), timeoutMs: this.timeoutMs }, 'markdown render stopped at its time limit');
      const parts = plainParts(plainMarkdown(text, 'timeout'));
      this.stopped.set(key, '', parts);
      return parts;
    } finally {
      if (thread) this.threads.give(thread);
      this.gate.leave();
    }
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}

const ENTRY = workerEntry(import.meta.url, 'markdown.worker');

/** One worker thread; renders one text at a time. */
class RenderThread extends JobThread<{ text: string; ctx: MarkdownContext }, 'parts', RenderedParts> {
  constructor() {
    super(ENTRY, 'parts', 'markdown');
  }

  render(text: string, ctx: MarkdownContext, timeoutMs: number): Promise<RenderedParts> {
    if (this.dead) return Promise.reject(new Error('the markdown worker stopped'));
    return this.run({ text, ctx }, timeoutMs, () => new RenderTimeout());
  }
}
