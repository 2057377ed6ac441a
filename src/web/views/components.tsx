// Small pieces every area uses: the CSRF field of forms, times, avatars, markdown, pagination,
// tabs, progress bars and empty states. Area-specific pieces live beside their pages.
import type { MarkdownContext } from '../../domain/markdown/markdown.ts';
import { DomainError } from '../../lib/errors.ts';
import type { WebCtx } from '../context.ts';
import { type Child, raw, type SafeHtml } from '../jsx/jsx-runtime.ts';

/** The hidden `authenticity_token` field every form needs (the session's CSRF token). */
export function CsrfField(p: { ctx: WebCtx }): SafeHtml {
  return <input type="hidden" name="authenticity_token" value={p.ctx.csrf ?? ''} />;
}

/** A POST form with its CSRF field. */
export function PostForm(p: { ctx: WebCtx; action: string; class?: string; children?: Child; multipart?: boolean; id?: string }): SafeHtml {
  return (
    <form method="post" action={p.action} class={p.class} id={p.id} enctype={p.multipart ? 'multipart/form-data' : undefined} accept-charset="UTF-8">
      <CsrfField ctx={p.ctx} />
      {p.children}
    </form>
  );
}

/** A form that is one button (delete, revoke, unprotect …): POST with its CSRF field and hidden fields. */
export function ButtonForm(p: {
  ctx: WebCtx;
  action: string;
  label: string;
  /** the accessible name when the label alone is ambiguous in a list ("Delete" → "Delete hook x") */
  aria?: string;
  fields?: Record<string, string | number>;
  danger?: boolean;
}): SafeHtml {
  return (
    <PostForm ctx={p.ctx} action={p.action}>
      {Object.entries(p.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={p.danger ? 'btn btn-sm btn-danger' : 'btn btn-sm'} aria-label={p.aria}>
        {p.label}
      </button>
    </PostForm>
  );
}

const UNITS: [number, string][] = [
  [60, 'second'],
  [60, 'minute'],
  [24, 'hour'],
  [30, 'day'],
  [12, 'month'],
  [Number.POSITIVE_INFINITY, 'year'],
];

/** "3 hours ago" as text (no script needed), the exact time in `datetime` and the tooltip. */
export function TimeAgo(p: { at: string | null | undefined; now?: number }): SafeHtml {
  if (!p.at) return <span class="color-fg-muted">never</span>;
  let n = Math.max(0, ((p.now ?? Date.now()) - Date.parse(p.at)) / 1000);
  let unit = 'second';
  for (const [size, name] of UNITS) {
    unit = name;
    if (n < size) break;
    n /= size;
  }
  const v = Math.floor(n);
  const text = v <= 0 && unit === 'second' ? 'just now' : `${v} ${unit}${v === 1 ? '' : 's'} ago`;
  return (
    <time datetime={p.at} title={p.at}>
      {text}
    </time>
  );
}

/** A user's avatar (or their initial when none is set); decorative, the name is always beside it. */
export function Avatar(p: { url?: string | null; name: string; size?: number }): SafeHtml {
  const size = p.size ?? 20;
  if (p.url) return <img class="avatar mr-1" src={p.url} width={size} height={size} alt="" loading="lazy" />;
  return (
    <span
      class="avatar mr-1 d-inline-flex flex-items-center flex-justify-center color-bg-accent-emphasis color-fg-on-emphasis"
      style={`width:${size}px;height:${size}px;font-size:${Math.round(size / 2)}px`}
      aria-hidden="true"
    >
      {(p.name[0] ?? '?').toUpperCase()}
    </span>
  );
}

/**
 * Markdown through the same renderer as `POST /markdown` (GitLab-flavoured, HTML off; references linked and
 * redacted for the page's viewer). The HTML comes
 * when the page is sent (`Web.page` fills the placeholder: the render may run on a worker thread).
 */
export function Markdown(p: { text: string | null | undefined; ctx: WebCtx; project?: MarkdownContext['project'] }): SafeHtml {
  if (!p.text) return raw('');
  const placeholder = p.ctx.markdown.add(p.text, { gfm: true, externalUrl: p.ctx.externalUrl, project: p.project ?? null }, p.ctx.actor, (html) =>
    // GitLab's heading anchors are aria-hidden yet focusable; on a page they get a name instead
    html.replace(/ aria-hidden="true" class="anchor"/g, ' class="anchor" aria-label="Link to this heading"'),
  );
  return <div class="markdown-body">{raw(placeholder)}</div>;
}

/** Previous / next page links keeping the other query parameters. */
export function Pagination(p: { url: string; page: number; hasNext: boolean; param?: string }): SafeHtml {
  const name = p.param ?? 'page';
  const link = (n: number): string => {
    const u = new URL(p.url, 'http://x');
    u.searchParams.set(name, String(n));
    return u.pathname + u.search;
  };
  if (p.page <= 1 && !p.hasNext) return raw('');
  return (
    <nav class="paginate-container" aria-label="Pagination">
      <div class="pagination">
        {p.page > 1 ? (
          <a class="previous_page" rel="prev" href={link(p.page - 1)}>
            Previous
          </a>
        ) : (
          <span class="previous_page" aria-disabled="true">
            Previous
          </span>
        )}
        <em aria-current="page">{p.page}</em>
        {p.hasNext ? (
          <a class="next_page" rel="next" href={link(p.page + 1)}>
            Next
          </a>
        ) : (
          <span class="next_page" aria-disabled="true">
            Next
          </span>
        )}
      </div>
    </nav>
  );
}

/** Primer's underline navigation: a row of links, the current one marked. */
export function Tabs(p: { label: string; tabs: { href: string; text: string; current?: boolean; count?: number }[] }): SafeHtml {
  return (
    <nav class="UnderlineNav mb-3" aria-label={p.label}>
      <div class="UnderlineNav-body">
        {p.tabs.map((t) => (
          <a class="UnderlineNav-item" href={t.href} aria-current={t.current ? 'page' : undefined}>
            {t.text}
            {t.count !== undefined ? <span class="Counter">{t.count}</span> : null}
          </a>
        ))}
      </div>
    </nav>
  );
}

/** A progress bar with its percentage as text (screen readers get the value too). */
export function ProgressBar(p: { percent: number; label: string; class?: string }): SafeHtml {
  const v = Math.max(0, Math.min(100, Math.round(p.percent * 10) / 10));
  return (
    <span class={`d-inline-flex flex-items-center ${p.class ?? ''}`}>
      <span class="Progress" style="width:8rem" role="progressbar" aria-label={p.label} aria-valuenow={v} aria-valuemin="0" aria-valuemax="100">
        <span class="Progress-item color-bg-success-emphasis" style={`width:${v}%`} />
      </span>
      <span class="ml-2 f6">{`${v}%`}</span>
    </span>
  );
}

/** An empty list. */
export function Blankslate(p: { title: string; children?: Child }): SafeHtml {
  return (
    <div class="blankslate">
      <h2 class="blankslate-heading">{p.title}</h2>
      {p.children}
    </div>
  );
}

/** Validation errors of a form, as GitLab lists them above it. */
export function FormErrors(p: { errors: string[] | null | undefined }): SafeHtml {
  if (!p.errors?.length) return raw('');
  return (
    <div class="flash flash-error mb-3" role="alert">
      <p class="text-bold">{p.errors.length === 1 ? 'The form contains 1 error:' : `The form contains ${p.errors.length} errors:`}</p>
      <ul class="ml-3">
        {p.errors.map((e) => (
          <li>{e}</li>
        ))}
      </ul>
    </div>
  );
}

/**
 * A client mistake a form should show (null for anything else, which the error handler renders):
 * field errors as "Name can't be blank", or the message of a 400/403/409/422.
 */
export function formErrorsOf(e: unknown): string[] | null {
  if (!(e instanceof DomainError) || e.status >= 500 || e.status === 404 || e.status === 401) return null;
  const d = e.detail;
  if (typeof d === 'string') return [d];
  if (Array.isArray(d)) return d.map(String);
  if (d && typeof d === 'object') {
    // a body given verbatim by the HTTP layer: its message
    if (e.kind === 'raw' && 'message' in d) return [String((d as { message: unknown }).message)];
    if (e.kind === 'raw' && 'error' in d) return [String((d as { error: unknown }).error)];
    const out: string[] = [];
    for (const [field, msgs] of Object.entries(d as Record<string, unknown>)) {
      const label = field === 'base' ? '' : `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} `;
      for (const m of Array.isArray(msgs) ? msgs : [msgs]) out.push(`${label}${String(m)}`);
    }
    return out;
  }
  return [e.message];
}
