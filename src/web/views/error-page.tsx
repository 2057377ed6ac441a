// The HTML error pages (404 for anything the viewer may not see, as the API answers 404).
import type { WebCtx } from '../context.ts';
import type { SafeHtml } from '../jsx/jsx-runtime.ts';
import { Layout } from './layout.tsx';

const TITLES: Record<number, string> = {
  400: 'Bad request',
  403: 'Access denied',
  404: 'Page not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Too large',
  422: 'The change you requested was rejected',
  429: 'Too many requests',
  500: 'Something went wrong',
};

const TEXTS: Record<number, string> = {
  403: 'You are not allowed to do this.',
  404: 'The page could not be found or you don’t have permission to view it.',
  500: 'Try again in a moment; the administrator can find the details in the log.',
};

export function ErrorPage(p: { ctx: WebCtx; status: number; message?: string }): SafeHtml {
  const title = TITLES[p.status] ?? `Error ${p.status}`;
  return (
    <Layout ctx={p.ctx} title={title}>
      <div class="blankslate">
        <p class="f1 color-fg-muted">{p.status}</p>
        <h1 class="blankslate-heading">{title}</h1>
        <p>{p.message ?? TEXTS[p.status] ?? ''}</p>
        <p>
          <a href="/">Go to the start page</a>
        </p>
      </div>
    </Layout>
  );
}
