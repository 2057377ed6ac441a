// The repository pages: project home, directory, file, blame, history, commit, compare, branches and
// tags. Views only: the routes (src/http/web/repository.pages.ts) read everything first.
import type { WebCtx } from '../../context.ts';
import type { BlameGroup } from '../../../git/blame.ts';
import type { Commit } from '../../../git/objects.ts';
import { type Child, raw, type SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Blankslate, Markdown, Pagination, PostForm, TimeAgo } from '../components.tsx';
import { type Crumb, Layout } from '../layout.tsx';
import { type ProjectSection, ProjectTabs, refSeg } from '../project-tabs.tsx';

/** Where a project's pages live, with its ref and path URL builders. */
export interface ProjectNav {
  ctx: WebCtx;
  /** "group/project" */
  fullPath: string;
  name: string;
  defaultBranch: string;
  /** may the viewer read the code (files, commits …) */
  readCode: boolean;
  /** the open issues the viewer reads (the Issues tab); null when the issues are closed to them */
  openIssues?: number | null;
  /** may the viewer administer the project (the Settings tab) */
  settings?: boolean;
}

const seg = (s: string) => s.split('/').map(encodeURIComponent).join('/');

export const urls = {
  base: (n: ProjectNav) => `/${seg(n.fullPath)}`,
  tree: (n: ProjectNav, ref: string, path = '') => `/${seg(n.fullPath)}/-/tree/${refSeg(ref)}${path ? `/${seg(path)}` : ''}`,
  blob: (n: ProjectNav, ref: string, path: string) => `/${seg(n.fullPath)}/-/blob/${refSeg(ref)}/${seg(path)}`,
  raw: (n: ProjectNav, ref: string, path: string) => `/${seg(n.fullPath)}/-/raw/${refSeg(ref)}/${seg(path)}`,
  blame: (n: ProjectNav, ref: string, path: string) => `/${seg(n.fullPath)}/-/blame/${refSeg(ref)}/${seg(path)}`,
  commits: (n: ProjectNav, ref: string, path = '') => `/${seg(n.fullPath)}/-/commits/${refSeg(ref)}${path ? `/${seg(path)}` : ''}`,
  commit: (n: ProjectNav, sha: string) => `/${seg(n.fullPath)}/-/commit/${sha}`,
  branches: (n: ProjectNav) => `/${seg(n.fullPath)}/-/branches`,
  tags: (n: ProjectNav) => `/${seg(n.fullPath)}/-/tags`,
  tag: (n: ProjectNav, name: string) => `/${seg(n.fullPath)}/-/tags/${refSeg(name)}`,
  compare: (n: ProjectNav, from?: string, to?: string) => `/${seg(n.fullPath)}/-/compare${from && to ? `/${refSeg(from)}...${refSeg(to)}` : ''}`,
};

const title = (message: string) => message.split('\n', 1)[0] ?? '';
const shortSha = (sha: string) => sha.slice(0, 8);
const iso = (t: number) => new Date(t * 1000).toISOString();

function projectCrumbs(n: ProjectNav, more: Crumb[] = []): Crumb[] {
  const parts = n.fullPath.split('/');
  const crumbs: Crumb[] = [];
  for (let i = 0; i < parts.length - 1; i++) crumbs.push({ text: parts[i]!, href: `/${seg(parts.slice(0, i + 1).join('/'))}` });
  crumbs.push({ text: n.name, href: urls.base(n) });
  return [...crumbs, ...more];
}

type Section = Exclude<ProjectSection, 'issues'>;

function Page(p: { n: ProjectNav; title: string; crumbs?: Crumb[]; section: Section | null; wide?: boolean; children?: Child }): SafeHtml {
  return (
    <Layout ctx={p.n.ctx} title={`${p.title} · ${p.n.name}`} crumbs={projectCrumbs(p.n, p.crumbs)} wide={p.wide}>
      {p.section ? <ProjectTabs n={p.n} current={p.section} /> : null}
      {p.children}
    </Layout>
  );
}

/** The branch/tag switcher: a GET form that works without script (the server redirects to the ref). */
export function RefSwitcher(p: {
  n: ProjectNav;
  current: string;
  branches: string[];
  tags: string[];
  action: string;
  path?: string;
  dest?: 'tree' | 'commits';
}): SafeHtml {
  const id = 'ref-switcher';
  const known = p.branches.includes(p.current) || p.tags.includes(p.current);
  return (
    <form method="get" action={p.action} class="d-inline-flex flex-items-center mr-2" data-ref-switcher="">
      <label for={id} class="mr-1 f6">
        Branch or tag
      </label>
      <select id={id} name="ref" class="form-select select-sm">
        {known ? null : <option selected>{p.current}</option>}
        <optgroup label="Branches">
          {p.branches.map((b) => (
            <option value={b} selected={b === p.current}>
              {b}
            </option>
          ))}
        </optgroup>
        {p.tags.length ? (
          <optgroup label="Tags">
            {p.tags.map((t) => (
              <option value={t} selected={t === p.current}>
                {t}
              </option>
            ))}
          </optgroup>
        ) : null}
      </select>
      {p.path ? <input type="hidden" name="path" value={p.path} /> : null}
      {p.dest === 'commits' ? <input type="hidden" name="dest" value="commits" /> : null}
      <button type="submit" class="btn btn-sm ml-1">
        Switch
      </button>
    </form>
  );
}

/** Path breadcrumbs inside the repository: root / dir / dir / file. */
function PathCrumbs(p: { n: ProjectNav; ref: string; path: string }): SafeHtml {
  const parts = p.path ? p.path.split('/') : [];
  return (
    <nav aria-label="File path" class="d-inline-block f5">
      <a href={urls.tree(p.n, p.ref)}>{p.n.name}</a>
      {parts.map((part, i) => {
        const sub = parts.slice(0, i + 1).join('/');
        return (
          <>
            <span class="color-fg-muted mx-1">/</span>
            {i === parts.length - 1 ? <strong>{part}</strong> : <a href={urls.tree(p.n, p.ref, sub)}>{part}</a>}
          </>
        );
      })}
    </nav>
  );
}

export interface TreeRow {
  name: string;
  path: string;
  type: 'tree' | 'blob' | 'commit';
  last: Commit | null;
}

// small inline icons (decorative: the link text and "(directory)" say what an entry is)
const DIR_ICON =
  '<svg class="repo-icon repo-icon-dir mr-1" aria-hidden="true" width="16" height="16" viewBox="0 0 16 16"><path d="M1.75 1A1.75 1.75 0 0 0 0 2.75v10.5C0 14.216.784 15 1.75 15h12.5A1.75 1.75 0 0 0 16 13.25v-8.5A1.75 1.75 0 0 0 14.25 3H7.5a.25.25 0 0 1-.2-.1l-.9-1.2C6.07 1.26 5.55 1 5 1H1.75Z"/></svg>';
const FILE_ICON =
  '<svg class="repo-icon mr-1" aria-hidden="true" width="16" height="16" viewBox="0 0 16 16"><path d="M2 1.75C2 .784 2.784 0 3.75 0h6.586c.464 0 .909.184 1.237.513l2.914 2.914c.329.328.513.773.513 1.237v9.586A1.75 1.75 0 0 1 13.25 16h-9.5A1.75 1.75 0 0 1 2 14.25Zm1.75-.25a.25.25 0 0 0-.25.25v12.5c0 .138.112.25.25.25h9.5a.25.25 0 0 0 .25-.25V6h-2.75A1.75 1.75 0 0 1 9 4.25V1.5Zm6.75.062V4.25c0 .138.112.25.25.25h2.688l-.011-.013-2.914-2.914-.013-.011Z"/></svg>';

function TreeTable(p: { n: ProjectNav; ref: string; path: string; rows: TreeRow[] }): SafeHtml {
  const { n } = p;
  const parent = p.path.includes('/') ? p.path.slice(0, p.path.lastIndexOf('/')) : '';
  return (
    <table class="Box width-full repo-tree" aria-label="Files">
      <thead>
        <tr class="Box-header">
          <th scope="col" class="text-left p-2">
            Name
          </th>
          <th scope="col" class="text-left p-2">
            Last commit
          </th>
          <th scope="col" class="text-right p-2">
            Last update
          </th>
        </tr>
      </thead>
      <tbody>
        {p.path ? (
          <tr class="Box-row">
            <td class="p-2" colspan="3">
              <a href={urls.tree(n, p.ref, parent)} aria-label="Parent directory">
                ..
              </a>
            </td>
          </tr>
        ) : null}
        {p.rows.map((r) => (
          <tr class="Box-row">
            <td class="p-2">
              {raw(r.type === 'tree' ? DIR_ICON : FILE_ICON)}
              {r.type === 'tree' ? (
                <a href={urls.tree(n, p.ref, r.path)}>
                  {r.name}
                  <span class="sr-only"> (directory)</span>
                </a>
              ) : r.type === 'blob' ? (
                <a href={urls.blob(n, p.ref, r.path)}>{r.name}</a>
              ) : (
                <span>
                  {r.name} <span class="color-fg-muted f6">(submodule)</span>
                </span>
              )}
            </td>
            <td class="p-2 color-fg-muted">{r.last ? <a href={urls.commit(n, r.last.sha)}>{title(r.last.message)}</a> : null}</td>
            <td class="p-2 text-right color-fg-muted">{r.last ? <TimeAgo at={iso(r.last.committer.time)} /> : null}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export interface RefLists {
  branches: string[];
  tags: string[];
}

export interface HomeProps {
  n: ProjectNav;
  description: string | null;
  visibility: string;
  starCount: number;
  httpUrl: string;
  sshUrl: string;
  empty: boolean;
  ref: string;
  refs: RefLists;
  stats: { commits: number; branches: number; tags: number; storage: number } | null;
  rows: TreeRow[];
  readme: { name: string; text: string; markdown: boolean } | null;
  lastCommit: Commit | null;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(1)} GiB`;
}

function CloneBox(p: { httpUrl: string; sshUrl: string }): SafeHtml {
  const field = (id: string, label: string, value: string) => (
    <div class="FormControl mb-2">
      <label class="FormControl-label" for={id}>
        {label}
      </label>
      <div class="d-flex">
        <input id={id} class="form-control input-monospace input-sm flex-auto" type="text" readonly value={value} />
        <button type="button" class="btn btn-sm ml-1" data-copy-target={id} aria-label={`Copy the ${label.toLowerCase()} URL`}>
          Copy
        </button>
      </div>
    </div>
  );
  return (
    <section class="Box p-3 mb-3 repo-clone" aria-labelledby="clone-heading">
      <h2 id="clone-heading" class="f5 mb-2">
        Clone
      </h2>
      {field('clone-http', 'Clone with HTTP', p.httpUrl)}
      {field('clone-ssh', 'Clone with SSH', p.sshUrl)}
    </section>
  );
}

export function ProjectHomePage(p: HomeProps): SafeHtml {
  const { n } = p;
  return (
    <Page n={n} title={n.name} section={null}>
      <div class="d-flex flex-items-center flex-wrap mb-2">
        <h1 class="h2 mr-2">{n.name}</h1>
        <span class="Label mr-2" title="Visibility">
          {p.visibility[0]!.toUpperCase() + p.visibility.slice(1)}
        </span>
        <span class="color-fg-muted f6">
          <span aria-hidden="true">★</span> {p.starCount} {p.starCount === 1 ? 'star' : 'stars'}
        </span>
      </div>
      {p.description ? <p class="color-fg-muted">{p.description}</p> : null}
      <ProjectTabs n={n} current="files" />
      <div class="d-flex flex-wrap gutter-md">
        <div class="col-12 col-md-9">
          {!n.readCode ? (
            <Blankslate title="The repository is not available">
              <p>You do not have access to this project's code.</p>
            </Blankslate>
          ) : p.empty ? (
            <EmptyRepository n={n} httpUrl={p.httpUrl} />
          ) : (
            <>
              <div class="d-flex flex-items-center flex-wrap mb-2">
                <RefSwitcher n={n} current={p.ref} branches={p.refs.branches} tags={p.refs.tags} action={`${urls.base(n)}/-/refs/switch`} />
                {p.lastCommit ? (
                  <span class="f6 color-fg-muted repo-meta">
                    Last commit: <a href={urls.commit(n, p.lastCommit.sha)}>{title(p.lastCommit.message)}</a> ·{' '}
                    <TimeAgo at={iso(p.lastCommit.committer.time)} />
                  </span>
                ) : null}
              </div>
              <TreeTable n={n} ref={p.ref} path="" rows={p.rows} />
              {p.readme ? (
                <section class="Box mt-3" aria-labelledby="readme-heading">
                  <div class="Box-header">
                    <h2 id="readme-heading" class="Box-title">
                      {p.readme.name}
                    </h2>
                  </div>
                  <div class="Box-body">
                    {p.readme.markdown ? (
                      <Markdown text={p.readme.text} ctx={n.ctx} project={{ fullPath: n.fullPath, defaultBranch: n.defaultBranch }} />
                    ) : (
                      <pre class="text-mono f6">{p.readme.text}</pre>
                    )}
                  </div>
                </section>
              ) : null}
            </>
          )}
        </div>
        <div class="col-12 col-md-3">
          {n.readCode ? <CloneBox httpUrl={p.httpUrl} sshUrl={p.sshUrl} /> : null}
          {p.stats ? (
            <section class="Box p-3" aria-labelledby="stats-heading">
              <h2 id="stats-heading" class="f5 mb-2">
                Project information
              </h2>
              <ul class="list-style-none f6">
                <li>
                  <a href={urls.commits(n, p.ref)}>
                    <strong>{p.stats.commits}</strong> {p.stats.commits === 1 ? 'commit' : 'commits'}
                  </a>
                </li>
                <li>
                  <a href={urls.branches(n)}>
                    <strong>{p.stats.branches}</strong> {p.stats.branches === 1 ? 'branch' : 'branches'}
                  </a>
                </li>
                <li>
                  <a href={urls.tags(n)}>
                    <strong>{p.stats.tags}</strong> {p.stats.tags === 1 ? 'tag' : 'tags'}
                  </a>
                </li>
                <li>
                  <strong>{formatBytes(p.stats.storage)}</strong> project storage
                </li>
              </ul>
            </section>
          ) : null}
        </div>
      </div>
    </Page>
  );
}

function EmptyRepository(p: { n: ProjectNav; httpUrl: string }): SafeHtml {
  const dir = p.n.fullPath.split('/').pop()!;
  return (
    <section class="Box p-3" aria-labelledby="empty-heading">
      <h2 id="empty-heading" class="f4 mb-2">
        The repository for this project is empty
      </h2>
      <p>You can push an existing repository or start a new one from the command line.</p>
      <h3 class="f5 mt-3">Create a new repository</h3>
      <pre class="text-mono f6 p-2 color-bg-subtle">
        {`git clone ${p.httpUrl}\ncd ${dir}\ngit switch --create ${p.n.defaultBranch}\ntouch README.md\ngit add README.md\ngit commit -m "add README"\ngit push --set-upstream origin ${p.n.defaultBranch}`}
      </pre>
      <h3 class="f5 mt-3">Push an existing Git repository</h3>
      <pre class="text-mono f6 p-2 color-bg-subtle">
        {`cd existing_repo\ngit remote rename origin old-origin\ngit remote add origin ${p.httpUrl}\ngit push --set-upstream origin --all\ngit push --set-upstream origin --tags`}
      </pre>
    </section>
  );
}

export function TreePage(p: { n: ProjectNav; ref: string; path: string; refs: RefLists; rows: TreeRow[] }): SafeHtml {
  const { n } = p;
  return (
    <Page n={n} title={p.path || 'Files'} section="files" crumbs={[{ text: 'Files' }]}>
      <h1 class="h3 mb-2">{p.path ? p.path : `Files of ${p.ref}`}</h1>
      <div class="d-flex flex-items-center flex-wrap mb-2">
        <RefSwitcher n={n} current={p.ref} branches={p.refs.branches} tags={p.refs.tags} action={`${urls.base(n)}/-/refs/switch`} path={p.path} />
        <PathCrumbs n={n} ref={p.ref} path={p.path} />
        <a class="btn btn-sm ml-auto" href={urls.commits(n, p.ref, p.path)}>
          History
        </a>
      </div>
      <TreeTable n={n} ref={p.ref} path={p.path} rows={p.rows} />
    </Page>
  );
}

export interface BlobView {
  n: ProjectNav;
  ref: string;
  commit: string;
  path: string;
  size: number;
  /** highlighted lines, or null when not shown (binary, too big) */
  lines: string[] | null;
  language: string | null;
  reason: 'binary' | 'too-large' | null;
  /** a markdown file shown rendered */
  markdown: string | null;
  image: boolean;
  last: Commit | null;
}

function FileActions(p: { n: ProjectNav; ref: string; commit: string; path: string; current: 'blob' | 'blame' }): SafeHtml {
  const { n } = p;
  return (
    <div class="BtnGroup ml-auto">
      {p.current === 'blame' ? (
        <a class="btn btn-sm BtnGroup-item" href={urls.blob(n, p.ref, p.path)}>
          Normal view
        </a>
      ) : (
        <a class="btn btn-sm BtnGroup-item" href={urls.blame(n, p.ref, p.path)}>
          Blame
        </a>
      )}
      <a class="btn btn-sm BtnGroup-item" href={urls.commits(n, p.ref, p.path)}>
        History
      </a>
      <a class="btn btn-sm BtnGroup-item" href={urls.raw(n, p.ref, p.path)}>
        Raw
      </a>
      <a class="btn btn-sm BtnGroup-item" href={urls.blob(n, p.commit, p.path)}>
        Permalink
      </a>
    </div>
  );
}

export function BlobPage(p: BlobView): SafeHtml {
  const { n } = p;
  const name = p.path.slice(p.path.lastIndexOf('/') + 1);
  return (
    <Page n={n} title={p.path} section="files" wide>
      <h1 class="h3 mb-2">{name}</h1>
      <div class="d-flex flex-items-center flex-wrap mb-2">
        <PathCrumbs n={n} ref={p.ref} path={p.path} />
        <FileActions n={n} ref={p.ref} commit={p.commit} path={p.path} current="blob" />
      </div>
      {p.last ? (
        <p class="f6 color-fg-muted repo-meta">
          <a href={urls.commit(n, p.last.sha)}>{title(p.last.message)}</a> · {p.last.author.name} · <TimeAgo at={iso(p.last.author.time)} />
        </p>
      ) : null}
      <div class="Box">
        <div class="Box-header d-flex f6 color-fg-muted">
          <span>{formatBytes(p.size)}</span>
          {p.lines ? <span class="ml-2">{p.lines.length} lines</span> : null}
          {p.language ? <span class="ml-2">{p.language}</span> : null}
        </div>
        {p.image ? (
          <div class="Box-body text-center">
            <img src={urls.raw(n, p.ref, p.path)} alt={name} class="repo-image" />
          </div>
        ) : p.markdown !== null ? (
          <div class="Box-body">
            <Markdown text={p.markdown} ctx={n.ctx} project={{ fullPath: n.fullPath, defaultBranch: n.defaultBranch }} />
          </div>
        ) : p.lines ? (
          raw(CODE_MARKER)
        ) : (
          <div class="Box-body">
            <p>
              {p.reason === 'binary' ? 'This file is binary and is not shown.' : 'This file is too large to be shown.'}{' '}
              <a href={urls.raw(n, p.ref, p.path)}>View raw</a>
            </p>
          </div>
        )}
      </div>
    </Page>
  );
}

/**
 * Where BlobPage leaves the code: the route puts the rendered code in the page's string there, so that
 * a 1 MB file is not copied by every enclosing element (no user text can contain it: text is escaped).
 */
export const CODE_MARKER = '<!--hearth:code-->';

/** The rendered code of a highlighted blob, kept as long as its highlighted lines are cached. */
const codeHtml = new WeakMap<string[], string>();

/**
 * Code with line numbers: a column of anchors `#L<n>` beside one `<pre>` of the lines (markup built
 * as a string and kept per highlighted blob: 2,000-line files).
 */
export function codeLinesHtml(lines: string[]): string {
  let html = codeHtml.get(lines);
  if (html === undefined) {
    const numbers: string[] = [];
    for (let i = 1; i <= lines.length; i++) numbers.push(`<a id="L${i}" href="#L${i}">${i}</a>`);
    html = `<div class="repo-code d-flex"><div class="repo-ln">${numbers.join('')}</div><pre class="repo-lc hljs flex-auto"><code>${lines.join('\n')}</code></pre></div>`;
    codeHtml.set(lines, html);
  }
  return html;
}

export function BlamePage(p: { n: ProjectNav; ref: string; commit: string; path: string; groups: BlameGroup[]; commits: Map<string, Commit> }): SafeHtml {
  const { n } = p;
  let line = 0;
  return (
    <Page n={n} title={`Blame ${p.path}`} section="files" wide>
      <h1 class="h3 mb-2">Blame: {p.path.slice(p.path.lastIndexOf('/') + 1)}</h1>
      <div class="d-flex flex-items-center flex-wrap mb-2">
        <PathCrumbs n={n} ref={p.ref} path={p.path} />
        <FileActions n={n} ref={p.ref} commit={p.commit} path={p.path} current="blame" />
      </div>
      <table class="Box width-full repo-blame">
        <thead>
          <tr>
            <th scope="col" class="p-2 text-left">
              Commit
            </th>
            <th scope="col" class="p-2 text-right">
              Line
            </th>
            <th scope="col" class="p-2 text-left">
              Code
            </th>
          </tr>
        </thead>
        <tbody>
          {p.groups.map((g) => {
            const c = p.commits.get(g.commit);
            return g.lines.map((text, i) => {
              line++;
              return (
                <tr class={i === 0 ? 'repo-blame-start' : undefined}>
                  <td class="p-1 f6 repo-blame-commit repo-meta">
                    {i === 0 ? (
                      <>
                        <a href={urls.commit(n, g.commit)}>{c ? title(c.message) : shortSha(g.commit)}</a>
                        {c ? (
                          <span class="color-fg-muted">
                            {' '}
                            · {c.author.name} · <TimeAgo at={iso(c.author.time)} />
                          </span>
                        ) : null}
                      </>
                    ) : null}
                  </td>
                  <td class="p-1 text-right repo-ln">
                    <a id={`L${line}`} href={`#L${line}`}>
                      {line}
                    </a>
                  </td>
                  <td class="p-1 repo-lc">
                    <pre>{text || ' '}</pre>
                  </td>
                </tr>
              );
            });
          })}
        </tbody>
      </table>
    </Page>
  );
}

function CommitRow(p: { n: ProjectNav; c: Commit }): SafeHtml {
  const { n, c } = p;
  return (
    <li class="Box-row d-flex flex-items-center">
      <div class="flex-auto">
        <a class="text-bold" href={urls.commit(n, c.sha)}>
          {title(c.message)}
        </a>
        <div class="f6 color-fg-muted repo-meta">
          {c.author.name} authored <TimeAgo at={iso(c.author.time)} />
        </div>
      </div>
      <a class="text-mono f6 btn btn-sm" href={urls.commit(n, c.sha)} aria-label={`Commit ${shortSha(c.sha)}`}>
        {shortSha(c.sha)}
      </a>
      <a class="btn btn-sm ml-1" href={urls.tree(n, c.sha)} aria-label={`Browse the files at ${shortSha(c.sha)}`}>
        Browse
      </a>
    </li>
  );
}

export function CommitsPage(p: { n: ProjectNav; ref: string; path: string; refs: RefLists; commits: Commit[]; page: number; hasNext: boolean }): SafeHtml {
  const { n } = p;
  return (
    <Page n={n} title="Commits" section="commits" crumbs={[{ text: 'Commits' }]}>
      <h1 class="h3 mb-2">
        Commits{p.path ? ` of ${p.path}` : ''} on {p.ref}
      </h1>
      <div class="d-flex flex-items-center flex-wrap mb-2">
        <RefSwitcher
          n={n}
          current={p.ref}
          branches={p.refs.branches}
          tags={p.refs.tags}
          action={`${urls.base(n)}/-/refs/switch`}
          path={p.path}
          dest="commits"
        />
      </div>
      {p.commits.length ? (
        <ul class="Box list-style-none">
          {p.commits.map((c) => (
            <CommitRow n={n} c={c} />
          ))}
        </ul>
      ) : (
        <Blankslate title="No commits">
          <p>No commits changed this path.</p>
        </Blankslate>
      )}
      <Pagination url={n.ctx.url} page={p.page} hasNext={p.hasNext} />
    </Page>
  );
}

export interface NoteView {
  id: number;
  author: string;
  note: string;
  createdAt: string;
  path: string | null;
  line: number | null;
}

export function CommitPage(p: { n: ProjectNav; commit: Commit; diff: SafeHtml; overflow: boolean; view: 'inline' | 'parallel'; notes: NoteView[] }): SafeHtml {
  const { n, commit: c } = p;
  const body = c.message.slice(title(c.message).length).trim();
  const here = urls.commit(n, c.sha);
  return (
    <Page
      n={n}
      title={title(c.message)}
      section="commits"
      crumbs={[{ text: 'Commits', href: urls.commits(n, n.defaultBranch) }, { text: shortSha(c.sha) }]}
      wide
    >
      <h1 class="h3 mb-1">{title(c.message)}</h1>
      <p class="f6 color-fg-muted mb-2">
        Commit <span class="text-mono">{c.sha}</span> · {c.author.name} authored <TimeAgo at={iso(c.author.time)} />
        {c.committer.name !== c.author.name ? ` · committed by ${c.committer.name}` : ''}
      </p>
      {c.parents.length ? (
        <p class="f6 mb-2 repo-meta">
          {c.parents.length === 1 ? 'Parent' : 'Parents'}:{' '}
          {c.parents.map((s) => (
            <a class="text-mono mr-1" href={urls.commit(n, s)}>
              {shortSha(s)}
            </a>
          ))}
        </p>
      ) : null}
      {body ? <pre class="repo-commit-body f6 mb-3">{body}</pre> : null}
      <div class="d-flex flex-items-center mb-2">
        <a class="btn btn-sm mr-2" href={urls.tree(n, c.sha)}>
          Browse files
        </a>
        <nav class="BtnGroup" aria-label="Diff view">
          <a class="btn btn-sm BtnGroup-item" href={here} aria-current={p.view === 'inline' ? 'true' : undefined}>
            Inline
          </a>
          <a class="btn btn-sm BtnGroup-item" href={`${here}?view=parallel`} aria-current={p.view === 'parallel' ? 'true' : undefined}>
            Side-by-side
          </a>
        </nav>
      </div>
      {p.overflow ? <div class="flash flash-warn mb-2">Too many changes to show: some files are left out.</div> : null}
      <section aria-label="Changes" class="repo-diff">
        {p.diff}
      </section>
      <section aria-labelledby="comments-heading" class="mt-4">
        <h2 id="comments-heading" class="f4 mb-2">
          Comments ({p.notes.length})
        </h2>
        {p.notes.length ? (
          <ul class="list-style-none">
            {p.notes.map((note) => (
              <li class="Box mb-2" id={`note_${note.id}`}>
                <div class="Box-header f6">
                  <strong>{note.author}</strong> commented <TimeAgo at={note.createdAt} />
                  {note.path ? <span class="color-fg-muted"> on {note.line !== null ? `${note.path}:${note.line}` : note.path}</span> : null}
                </div>
                <div class="Box-body">
                  <Markdown text={note.note} ctx={n.ctx} project={{ fullPath: n.fullPath, defaultBranch: n.defaultBranch }} />
                </div>
              </li>
            ))}
          </ul>
        ) : (
          <p class="color-fg-muted">No comments on this commit.</p>
        )}
      </section>
    </Page>
  );
}

export function ComparePage(p: {
  n: ProjectNav;
  refs: RefLists;
  from: string;
  to: string;
  result: { commits: Commit[]; diff: SafeHtml; overflow: boolean; same: boolean } | null;
  error: string | null;
  view: 'inline' | 'parallel';
}): SafeHtml {
  const { n } = p;
  const picker = (id: string, name: string, label: string, value: string) => (
    <div class="FormControl mr-2">
      <label class="FormControl-label" for={id}>
        {label}
      </label>
      <input class="form-control input-sm" id={id} name={name} value={value} list="compare-refs" required autocomplete="off" />
    </div>
  );
  return (
    <Page n={n} title="Compare" section="compare" crumbs={[{ text: 'Compare' }]} wide>
      <h1 class="h3 mb-2">Compare revisions</h1>
      <form method="get" action={`${urls.base(n)}/-/compare/go`} class="d-flex flex-items-end flex-wrap mb-3">
        {picker('compare-from', 'from', 'Source (from)', p.from)}
        {picker('compare-to', 'to', 'Target (to)', p.to)}
        <datalist id="compare-refs">
          {[...p.refs.branches, ...p.refs.tags].map((r) => (
            <option value={r} />
          ))}
        </datalist>
        <button type="submit" class="btn btn-primary btn-sm">
          Compare
        </button>
      </form>
      {p.error ? (
        <div class="flash flash-error mb-2" role="alert">
          {p.error}
        </div>
      ) : null}
      {p.result ? (
        p.result.same ? (
          <Blankslate title="These are the same">
            <p>There is nothing to compare: both revisions name the same commit.</p>
          </Blankslate>
        ) : (
          <>
            <h2 class="f4 mb-2">Commits ({p.result.commits.length})</h2>
            {p.result.commits.length ? (
              <ul class="Box list-style-none mb-3">
                {p.result.commits.map((c) => (
                  <CommitRow n={n} c={c} />
                ))}
              </ul>
            ) : (
              <p class="color-fg-muted">No commits.</p>
            )}
            <div class="d-flex flex-items-center mb-2">
              <h2 class="f4 mr-2">Changes</h2>
              <nav class="BtnGroup" aria-label="Diff view">
                <a class="btn btn-sm BtnGroup-item" href={urls.compare(n, p.from, p.to)} aria-current={p.view === 'inline' ? 'true' : undefined}>
                  Inline
                </a>
                <a
                  class="btn btn-sm BtnGroup-item"
                  href={`${urls.compare(n, p.from, p.to)}?view=parallel`}
                  aria-current={p.view === 'parallel' ? 'true' : undefined}
                >
                  Side-by-side
                </a>
              </nav>
            </div>
            {p.result.overflow ? <div class="flash flash-warn mb-2">Too many changes to show: some files are left out.</div> : null}
            <section aria-label="Changes" class="repo-diff">
              {p.result.diff}
            </section>
          </>
        )
      ) : null}
    </Page>
  );
}

export interface BranchRow {
  name: string;
  commit: Commit | null;
  isDefault: boolean;
  isProtected: boolean;
  canDelete: boolean;
  projectId: number;
}

export function BranchesPage(p: { n: ProjectNav; rows: BranchRow[] }): SafeHtml {
  const { n } = p;
  return (
    <Page n={n} title="Branches" section="branches" crumbs={[{ text: 'Branches' }]}>
      <h1 class="h3 mb-2">Branches</h1>
      {p.rows.length ? (
        <ul class="Box list-style-none">
          {p.rows.map((b) => (
            <li class="Box-row d-flex flex-items-center">
              <div class="flex-auto">
                <a class="text-bold" href={urls.tree(n, b.name)}>
                  {b.name}
                </a>
                {b.isDefault ? <span class="Label Label--accent ml-1">default</span> : null}
                {b.isProtected ? <span class="Label Label--attention ml-1">protected</span> : null}
                {b.commit ? (
                  <div class="f6 color-fg-muted repo-meta">
                    <a class="text-mono" href={urls.commit(n, b.commit.sha)}>
                      {shortSha(b.commit.sha)}
                    </a>{' '}
                    · {title(b.commit.message)} · <TimeAgo at={iso(b.commit.committer.time)} />
                  </div>
                ) : null}
              </div>
              <a class="btn btn-sm mr-1" href={urls.compare(n, n.defaultBranch, b.name)} aria-label={`Compare ${b.name} with ${n.defaultBranch}`}>
                Compare
              </a>
              {b.canDelete ? (
                <PostForm ctx={n.ctx} action={`/-/p/${b.projectId}/branches/delete`}>
                  <input type="hidden" name="branch" value={b.name} />
                  <button type="submit" class="btn btn-sm btn-danger" aria-label={`Delete branch ${b.name}`} data-repo-confirm={`Delete the branch ${b.name}?`}>
                    Delete
                  </button>
                </PostForm>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <Blankslate title="No branches">
          <p>This repository has no branches yet.</p>
        </Blankslate>
      )}
    </Page>
  );
}

export interface TagRow {
  name: string;
  commit: Commit | null;
  message: string | null;
}

export function TagsPage(p: { n: ProjectNav; rows: TagRow[] }): SafeHtml {
  const { n } = p;
  return (
    <Page n={n} title="Tags" section="tags" crumbs={[{ text: 'Tags' }]}>
      <h1 class="h3 mb-2">Tags</h1>
      {p.rows.length ? (
        <ul class="Box list-style-none">
          {p.rows.map((t) => (
            <li class="Box-row">
              <a class="text-bold" href={urls.tag(n, t.name)}>
                {t.name}
              </a>
              {t.message ? <span class="color-fg-muted ml-2">{title(t.message)}</span> : null}
              {t.commit ? (
                <div class="f6 color-fg-muted repo-meta">
                  <a class="text-mono" href={urls.commit(n, t.commit.sha)}>
                    {shortSha(t.commit.sha)}
                  </a>{' '}
                  · {title(t.commit.message)} · <TimeAgo at={iso(t.commit.committer.time)} />
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <Blankslate title="No tags">
          <p>This repository has no tags yet.</p>
        </Blankslate>
      )}
    </Page>
  );
}

export function TagPage(p: { n: ProjectNav; tag: TagRow; tagger: string | null }): SafeHtml {
  const { n, tag } = p;
  return (
    <Page n={n} title={tag.name} section="tags" crumbs={[{ text: 'Tags', href: urls.tags(n) }, { text: tag.name }]}>
      <h1 class="h3 mb-2">Tag {tag.name}</h1>
      {p.tagger ? <p class="f6 color-fg-muted">Tagged by {p.tagger}</p> : null}
      {tag.message ? <pre class="f6 mb-3">{tag.message}</pre> : null}
      {tag.commit ? (
        <ul class="Box list-style-none mb-3">
          <CommitRow n={n} c={tag.commit} />
        </ul>
      ) : null}
      <p>
        <a class="btn btn-sm" href={urls.tree(n, tag.name)}>
          Browse files
        </a>{' '}
        <a class="btn btn-sm" href={urls.commits(n, tag.name)}>
          Commits
        </a>
      </p>
    </Page>
  );
}
