// The search page (GitLab's /search?search=…&scope=…): the search form, one tab per scope of where it looks
// (the instance, a group, a project), and the results of the chosen scope, a page at a time.
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, Pagination, Tabs } from '../components.tsx';
import { Layout } from '../layout.tsx';

/** One result as the page shows it. */
export type SearchItem =
  | { kind: 'project'; name: string; fullName: string; href: string; description: string | null }
  | { kind: 'merge_request'; title: string; href: string; reference: string; state: string }
  | { kind: 'issue'; title: string; href: string; reference: string; state: string; confidential: boolean }
  | { kind: 'milestone'; title: string; href: string; state: string }
  | { kind: 'user'; name: string; username: string; href: string }
  | { kind: 'note'; body: string; author: string | null; href: string; on: string }
  | { kind: 'commit'; title: string; shortId: string; href: string; author: string }
  | { kind: 'blob'; path: string; href: string; startline: number; lines: string[] };

export interface SearchTab {
  text: string;
  href: string;
  current: boolean;
}

export interface SearchPageProps {
  ctx: WebCtx;
  term: string;
  /** where the search looks ("Project hill-valley/delorean"), empty for the whole instance */
  where: string;
  /** hidden fields that keep the place of the search (project_id, group_id, scope) */
  keep: Record<string, string>;
  tabs: SearchTab[];
  items: SearchItem[];
  /** what the chosen scope is called, for the empty list */
  scopeText: string;
  page: number;
  hasNext: boolean;
}

function Item(p: { item: SearchItem }): SafeHtml {
  const i = p.item;
  switch (i.kind) {
    case 'project':
      return (
        <div>
          <a class="text-bold" href={i.href}>
            {i.fullName}
          </a>
          {i.description ? <p class="f6 color-fg-muted mb-0">{i.description}</p> : null}
        </div>
      );
    case 'merge_request':
      return (
        <div>
          <a class="text-bold" href={i.href}>
            {i.title}
          </a>
          <div class="f6 color-fg-muted">
            {i.reference} · {i.state}
          </div>
        </div>
      );
    case 'issue':
      return (
        <div>
          <a class="text-bold" href={i.href}>
            {i.title}
          </a>
          <div class="f6 color-fg-muted">
            {i.reference} · {i.state === 'opened' ? 'open' : i.state}
            {i.confidential ? ' · confidential' : ''}
          </div>
        </div>
      );
    case 'milestone':
      return (
        <div>
          <a class="text-bold" href={i.href}>
            {i.title}
          </a>
          <div class="f6 color-fg-muted">{i.state}</div>
        </div>
      );
    case 'user':
      return (
        <div>
          <a class="text-bold" href={i.href}>
            {i.name}
          </a>{' '}
          <span class="color-fg-muted">@{i.username}</span>
        </div>
      );
    case 'note':
      return (
        <div>
          <div class="f6 color-fg-muted">
            {i.author ?? 'Someone'} on <a href={i.href}>{i.on}</a>
          </div>
          <p class="mb-0 text-small" style="white-space: pre-wrap">
            {i.body}
          </p>
        </div>
      );
    case 'commit':
      return (
        <div>
          <a class="text-bold" href={i.href}>
            {i.title}
          </a>
          <div class="f6 color-fg-muted">
            <code>{i.shortId}</code> · {i.author}
          </div>
        </div>
      );
    case 'blob':
      return (
        <div>
          <a class="text-bold text-mono" href={i.href}>
            {i.path}
          </a>
          <pre class="f6 mt-1 p-2 color-bg-subtle overflow-auto">
            {i.lines.map((l, n) => (
              <code class="d-block">
                <span class="color-fg-muted mr-2">{String(i.startline + n)}</span>
                {l}
              </code>
            ))}
          </pre>
        </div>
      );
  }
}

export function SearchResultsPage(p: SearchPageProps): SafeHtml {
  const title = p.term ? `Search: ${p.term}` : 'Search';
  const url = `/search?${new URLSearchParams({ search: p.term, ...p.keep }).toString()}`;
  return (
    <Layout ctx={p.ctx} title={title}>
      <div class="Subhead">
        <h1 class="Subhead-heading">Search{p.where ? ` in ${p.where}` : ''}</h1>
      </div>
      <form method="get" action="/search" class="d-flex mb-3" id="search-form">
        {Object.entries(p.keep).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <label for="search-term" class="sr-only">
          Search for
        </label>
        <input id="search-term" class="form-control flex-1 mr-2" type="search" name="search" value={p.term} />
        <button type="submit" class="btn btn-primary">
          Search
        </button>
      </form>
      <Tabs label="Search scopes" tabs={p.tabs} />
      {p.term ? (
        p.items.length ? (
          <ul class="Box mb-3" data-results="search">
            {p.items.map((item) => (
              <li class="Box-row">
                <Item item={item} />
              </li>
            ))}
          </ul>
        ) : (
          <Blankslate title={`No ${p.scopeText} found`}>
            <p>Nothing matches “{p.term}”.</p>
          </Blankslate>
        )
      ) : (
        <Blankslate title="What are you looking for?">
          <p>Type a word above to search.</p>
        </Blankslate>
      )}
      <Pagination url={url} page={p.page} hasNext={p.hasNext} />
    </Layout>
  );
}
