// GitLab-flavoured markdown to safe HTML (POST /markdown; the web interface reuses it). markdown-it with
// raw HTML off (any HTML in the text is escaped), GitLab's extras when `gfm` is on: linkified URLs, task
// list items (checkboxes), heading anchors (`id="user-content-<slug>"`) and, with a project, relative
// links and upload links resolved against the project, as Banzai's RelativeLinkFilter does.
// Safety: markdown-it's validateLink drops javascript:, vbscript:, file: and non-image data: URLs; we
// further allow only http(s), mailto, relative and fragment URLs, and mark external links
// rel="nofollow noreferrer noopener" target="_blank" like GitLab's ExternalLinkFilter.
import MarkdownIt, { type StateCore, type Token } from 'markdown-it';
import { type ReferenceCandidate, referencePlaceholder, scanReferences } from './reference-scan.ts';

export interface MarkdownContext {
  /** GitLab Flavored Markdown (task lists, heading anchors, linkified URLs, project-relative links) */
  gfm: boolean;
  /** the instance URL, for absolute links (GitLab renders with only_path: false) */
  externalUrl: string;
  /** project context: its full path and default branch */
  project?: { fullPath: string; defaultBranch: string } | null;
  /**
   * GitLab references (`#1`, `!2`, `~label`, `%milestone`, `@user`) become placeholders and candidates
   * (with gfm only; without a project only `@user`); the renderer resolves them (references.ts)
   */
  references?: boolean;
}

const SAFE_SCHEME = /^(https?:|mailto:)/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function base(linkify: boolean): MarkdownIt {
  const md = new MarkdownIt('default', { html: false, linkify, typographer: false, breaks: false });
  const validate = md.validateLink.bind(md);
  md.validateLink = (url: string) => {
    if (!validate(url)) return false;
    const u = url.trim();
    return !HAS_SCHEME.test(u) || SAFE_SCHEME.test(u) || /^data:image\/(gif|png|jpeg|webp);/i.test(u);
  };
  return md;
}

// ---- GitLab extras (gfm) -------------------------------------------------------------------------------

/** Task list items: `- [ ] x` / `- [x] x` → a disabled checkbox, classes as GitLab's TaskListFilter. */
function taskLists(md: MarkdownIt): void {
  md.core.ruler.after('inline', 'task_lists', (state: StateCore) => {
    const tokens = state.tokens;
    for (let i = 2; i < tokens.length; i++) {
      const inline = tokens[i];
      if (inline.type !== 'inline' || tokens[i - 1].type !== 'paragraph_open' || tokens[i - 2].type !== 'list_item_open') continue;
      const m = /^\[([ xX])\](?=\s|$)/.exec(inline.content);
      const first = inline.children?.[0];
      if (!m || !first || first.type !== 'text' || !first.content.startsWith(m[0])) continue;
      const checked = m[1] !== ' ';
      first.content = first.content.slice(3).replace(/^\s/, '');
      inline.content = inline.content.slice(3);
      const box = new state.Token('html_inline', '', 0);
      box.content = `<input type="checkbox" class="task-list-item-checkbox" disabled${checked ? ' checked' : ''}> `;
      inline.children!.unshift(box);
      const item = tokens[i - 2];
      item.attrJoin('class', 'task-list-item');
      // the enclosing list
      for (let j = i - 3; j >= 0; j--) {
        const t = tokens[j];
        if ((t.type === 'bullet_list_open' || t.type === 'ordered_list_open') && t.level === item.level - 1) {
          if (!(t.attrGet('class') ?? '').includes('task-list')) t.attrJoin('class', 'task-list');
          break;
        }
      }
    }
  });
}

/** Banzai's TableOfContentsFilter slug: lower case, punctuation dropped, spaces → '-', repeats numbered. */
export function headingSlug(text: string): string {
  return (
    text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
      .replace(/-+/g, '-') || 'section'
  );
}

function headingAnchors(md: MarkdownIt): void {
  md.core.ruler.push('heading_anchors', (state: StateCore) => {
    const seen = new Map<string, number>();
    const tokens = state.tokens;
    for (let i = 0; i < tokens.length; i++) {
      if (tokens[i].type !== 'heading_open') continue;
      const inline = tokens[i + 1];
      const text = (inline.children ?? [])
        .filter((c: Token) => c.type === 'text' || c.type === 'code_inline' || c.type === 'gfm_reference')
        .map((c: Token) => c.content)
        .join('');
      let slug = headingSlug(text);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      if (n > 0) slug = `${slug}-${n}`;
      const anchor = new state.Token('html_inline', '', 0);
      anchor.content = `<a href="#${md.utils.escapeHtml(slug)}" aria-hidden="true" class="anchor" id="user-content-${md.utils.escapeHtml(slug)}"></a>`;
      inline.children = [anchor, ...(inline.children ?? [])];
      tokens[i].attrSet('dir', 'auto');
    }
  });
}

/**
 * References in text: each becomes a `gfm_reference` token (its text, for heading slugs) rendered as a
 * placeholder, and a candidate in the env. Not in code (code spans and blocks are tokens of their own), not
 * in links, not after a backslash escape (`\\#1`: the escape is a token of its own until text_join, which
 * this rule runs before).
 */
function references(md: MarkdownIt): void {
  md.core.ruler.before('text_join', 'gfm_references', (state: StateCore) => {
    const env = state.env as Env;
    if (!env.ctx.references) return;
    const projectContext = !!env.ctx.project;
    for (const inline of state.tokens) {
      if (inline.type !== 'inline' || !inline.children) continue;
      const out: Token[] = [];
      let inLink = 0;
      for (const t of inline.children) {
        if (t.type === 'link_open') inLink++;
        else if (t.type === 'link_close') inLink--;
        if (t.type !== 'text' || inLink > 0) {
          out.push(t);
          continue;
        }
        const found = scanReferences(t.content, { projectContext });
        if (!found.length) {
          out.push(t);
          continue;
        }
        let at = 0;
        for (const f of found) {
          if (f.start > at) out.push(textToken(state, t.content.slice(at, f.start), t.level));
          const ref = new state.Token('gfm_reference', '', 0);
          ref.content = f.text;
          ref.level = t.level;
          ref.meta = { index: env.refs.length };
          const { start: _start, end: _end, ...candidate } = f;
          env.refs.push(candidate);
          out.push(ref);
          at = f.end;
        }
        if (at < t.content.length) out.push(textToken(state, t.content.slice(at), t.level));
      }
      inline.children = out;
    }
  });
  md.renderer.rules.gfm_reference = (tokens: Token[], idx) => referencePlaceholder(tokens[idx].meta.index as number);
}

function textToken(state: StateCore, content: string, level: number): Token {
  const t = new state.Token('text', '', 0);
  t.content = content;
  t.level = level;
  return t;
}

// ---- links -----------------------------------------------------------------------------------------

/** A project-relative URL made absolute (RelativeLinkFilter): uploads, repository-root and relative paths. */
function resolveRelative(href: string, ctx: MarkdownContext, image: boolean): string {
  const p = ctx.project;
  if (!p || href === '' || href.startsWith('#') || href.startsWith('//') || HAS_SCHEME.test(href)) return href;
  const root = `${ctx.externalUrl}/${p.fullPath}`;
  if (href.startsWith('/uploads/')) return `${root}${href}`;
  const path = href.startsWith('/') ? href.slice(1) : href.replace(/^\.\//, '');
  return `${root}/-/${image ? 'raw' : 'blob'}/${encodeURIComponent(p.defaultBranch).replace(/%2F/g, '/')}/${path}`;
}

function isExternal(href: string, externalUrl: string): boolean {
  return /^https?:\/\//i.test(href) && !href.startsWith(`${externalUrl}/`) && href !== externalUrl;
}

function links(md: MarkdownIt): void {
  const defaultLink = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens: Token[], idx, options, env, self) => {
    const ctx = (env as Env).ctx;
    const t = tokens[idx];
    const href = resolveRelative(t.attrGet('href') ?? '', ctx, false);
    t.attrSet('href', href);
    if (isExternal(href, ctx.externalUrl)) {
      t.attrSet('rel', 'nofollow noreferrer noopener');
      t.attrSet('target', '_blank');
    }
    return defaultLink(tokens, idx, options, env, self);
  };
  const defaultImage = md.renderer.rules.image!;
  md.renderer.rules.image = (tokens: Token[], idx, options, env, self) => {
    const ctx = (env as Env).ctx;
    const t = tokens[idx];
    t.attrSet('src', resolveRelative(t.attrGet('src') ?? '', ctx, true));
    t.attrSet('loading', 'lazy');
    return defaultImage(tokens, idx, options, env, self);
  };
}

// ---- the renderer ----------------------------------------------------------------------------------

/**
 * Text over this size is refused by `POST /markdown` and cut by the renderer of pages (renderer.ts), as
 * GitLab's TruncateSourceFilter cuts at 1 MB.
 */
export const MAX_MARKDOWN_BYTES = 1024 * 1024;

const escaper = new MarkdownIt('zero');

/** Text as HTML element content (markdown-it's own escaping). */
export function escapeMarkdownText(text: string): string {
  return escaper.utils.escapeHtml(text);
}

interface Env {
  ctx: MarkdownContext;
  /** the references found, in the order of their placeholders */
  refs: ReferenceCandidate[];
}

function build(gfm: boolean): MarkdownIt {
  const md = base(gfm);
  if (gfm) {
    taskLists(md);
    headingAnchors(md);
    references(md);
  }
  links(md);
  return md;
}

/** One renderer per flavour, built once (the context travels in markdown-it's env). */
const renderers = new Map<boolean, MarkdownIt>();

export function renderMarkdown(text: string, ctx: MarkdownContext): string {
  return renderMarkdownParts(text, ctx).html;
}

/** What a render gives: the HTML, with a placeholder per reference candidate when `ctx.references`. */
export interface RenderedParts {
  html: string;
  refs: ReferenceCandidate[];
}

export function renderMarkdownParts(text: string, ctx: MarkdownContext): RenderedParts {
  let md = renderers.get(ctx.gfm);
  if (!md) renderers.set(ctx.gfm, (md = build(ctx.gfm)));
  const env: Env = { ctx, refs: [] };
  return { html: md.render(text, env).replace(/\n$/, ''), refs: env.refs };
}
