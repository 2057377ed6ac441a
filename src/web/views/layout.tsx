// The page frame every web page renders into: the header with the main navigation and the account
// menu, breadcrumbs, the flash message, the main landmark and the footer. One stylesheet and one
// script (content-hashed, see assets.ts); no inline script, so the CSP can forbid them.
import type { WebCtx } from '../context.ts';
import { assets } from '../assets.ts';
import type { Child, SafeHtml } from '../jsx/jsx-runtime.ts';

export interface Crumb {
  text: string;
  href?: string;
}

export interface LayoutProps {
  ctx: WebCtx;
  title: string;
  crumbs?: Crumb[];
  /** the full width (diffs, the editor); otherwise a centred column */
  wide?: boolean;
  children?: Child;
}

const NAV: { href: string; text: string; signedIn?: boolean; admin?: boolean }[] = [
  { href: '/dashboard/projects', text: 'Projects', signedIn: true },
  { href: '/dashboard/groups', text: 'Groups', signedIn: true },
  { href: '/dashboard/issues', text: 'Issues', signedIn: true },
  { href: '/dashboard/merge_requests', text: 'Merge requests', signedIn: true },
  { href: '/explore', text: 'Explore' },
  { href: '/projects/', text: 'Translate' },
  { href: '/admin', text: 'Admin', admin: true },
];

export function Layout(p: LayoutProps): SafeHtml {
  const { ctx } = p;
  const a = assets();
  const here = ctx.url.split('?')[0];
  return (
    <html lang="en" data-color-mode="light" data-light-theme="light">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{p.title} · Hearth</title>
        <link rel="stylesheet" href={`/-/assets/${a.css.name}`} />
        <script src={`/-/assets/${a.js.name}`} defer />
        <meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowScriptTags":false}' />
        {ctx.csrf ? <meta name="csrf-param" content="authenticity_token" /> : null}
        {ctx.csrf ? <meta name="csrf-token" content={ctx.csrf} /> : null}
      </head>
      <body hx-headers={ctx.csrf ? JSON.stringify({ 'X-CSRF-Token': ctx.csrf }) : undefined}>
        <a class="px-2 py-4 color-bg-accent-emphasis color-fg-on-emphasis show-on-focus" href="#main-content">
          Skip to main content
        </a>
        <header class="Header">
          <div class="Header-item">
            <a class="Header-link f4 d-flex flex-items-center" href="/">
              <span>Hearth</span>
            </a>
          </div>
          <nav class="Header-item Header-item--full" aria-label="Main">
            {NAV.filter((n) => (!n.signedIn || ctx.user) && (!n.admin || ctx.user?.is_admin === 1)).map((n) => (
              <a class="Header-link mr-3" href={n.href} aria-current={here === n.href || here.startsWith(`${n.href}/`) ? 'page' : undefined}>
                {n.text}
              </a>
            ))}
          </nav>
          <div class="Header-item">
            <form method="get" action="/search" aria-label="Search">
              {ctx.searchIn ? <input type="hidden" name={ctx.searchIn.param} value={String(ctx.searchIn.id)} /> : null}
              <label for="header-search" class="sr-only">
                {ctx.searchIn ? `Search this ${ctx.searchIn.what}` : 'Search projects, merge requests, code and users'}
              </label>
              <input
                id="header-search"
                class="form-control input-sm input-dark"
                type="search"
                name="search"
                placeholder={ctx.searchIn ? `Search this ${ctx.searchIn.what}` : 'Search'}
                autocomplete="off"
              />
            </form>
          </div>
          {ctx.user ? (
            <div class="Header-item">
              <a class="Header-link mr-3" href={`/${ctx.user.username}`}>
                {ctx.user.username}
              </a>
              <a class="Header-link mr-3" href="/-/profile">
                Settings
              </a>
              <form method="post" action="/users/sign_out">
                <input type="hidden" name="authenticity_token" value={ctx.csrf ?? ''} />
                <button type="submit" class="btn btn-sm btn-invisible color-fg-on-emphasis">
                  Sign out
                </button>
              </form>
            </div>
          ) : (
            <div class="Header-item">
              <a class="Header-link" href={`/users/sign_in?redirect_to=${encodeURIComponent(ctx.url)}`}>
                Sign in
              </a>
            </div>
          )}
        </header>
        <div class={p.wide ? 'px-3 px-md-4 py-3' : 'container-lg px-3 py-3'}>
          {p.crumbs?.length ? (
            <nav aria-label="Breadcrumb" class="mb-3">
              <ol>
                {p.crumbs.map((c, i) => {
                  const last = i === p.crumbs!.length - 1;
                  return (
                    <li class={last ? 'breadcrumb-item breadcrumb-item-selected' : 'breadcrumb-item'}>
                      {c.href && !last ? <a href={c.href}>{c.text}</a> : <span aria-current={last ? 'page' : undefined}>{c.text}</span>}
                    </li>
                  );
                })}
              </ol>
            </nav>
          ) : null}
          {ctx.flash ? (
            <div
              class={ctx.flash.kind === 'alert' ? 'flash flash-error mb-3' : 'flash flash-success mb-3'}
              role={ctx.flash.kind === 'alert' ? 'alert' : 'status'}
            >
              {ctx.flash.text}
            </div>
          ) : null}
          <main id="main-content" tabindex="-1">
            {p.children}
          </main>
        </div>
        <footer class="container-lg px-3 py-4 color-fg-muted f6">
          <p>
            Hearth · <a href="/api/v4/version">API version</a>
          </p>
        </footer>
      </body>
    </html>
  );
}
