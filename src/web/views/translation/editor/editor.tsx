// The translation editor (Weblate's translate.html): one unit at a time — its source with context,
// notes, flags and locations; a textarea per plural form labelled with the form's name; "Needs
// editing"; the failing checks beside it; Save / Suggest / Skip; navigation in the filtered set with
// keyboard shortcuts (60-editor.js); and the side panels: history, other languages, suggestions,
// comments. Every action is a plain form or link, so the page works without JavaScript.
import type { WebCtx } from '../../../context.ts';
import type { Child, SafeHtml } from '../../../jsx/jsx-runtime.ts';
import { FormErrors, PostForm, TimeAgo } from '../../components.tsx';
import { Layout } from '../../layout.tsx';

export interface EditorNav {
  /** 1-based place in the filtered set (null: the unit is shown outside it) */
  offset: number;
  total: number;
  first: string | null;
  prev: string | null;
  next: string | null;
  last: string | null;
  /** where Skip goes: the next unit, or the translation page at the end */
  skip: string;
}

export interface FormLabelView {
  name: string;
  examples: number[];
}

export interface PersonView {
  name: string;
  href: string | null;
}

export interface EditorView {
  ctx: WebCtx;
  project: { slug: string; name: string };
  component: { slug: string; name: string };
  language: { code: string; name: string; rtl: boolean };
  sourceLanguage: { code: string; name: string; rtl: boolean };
  /** links of the overview pages */
  urls: { project: string; component: string; translation: string; editor: string };
  q: string;
  nav: EditorNav;
  unit: {
    id: number;
    sources: string[];
    /** what the form shows: the unit's target, or what the user typed in a rejected form */
    targets: string[];
    context: string;
    note: string;
    explanation: string;
    flags: string;
    locations: string[];
    state: number;
    fuzzy: boolean;
    approved: boolean;
    checks: { id: string; name: string }[];
    pending: boolean;
  };
  sourceLabels: FormLabelView[] | null;
  targetLabels: FormLabelView[] | null;
  can: { edit: boolean; review: boolean; suggest: boolean; accept: boolean; deleteAny: boolean; comment: boolean };
  /** why the viewer may not edit (shown instead of the Save button) */
  editDenied: string | null;
  errors: string[] | null;
  suggestions: { id: number; target: string[]; author: PersonView; at: string; own: boolean }[];
  comments: { id: number; text: string; scope: string; author: PersonView; at: string }[];
  history: { action: string; target: string; author: PersonView; at: string }[];
  others: { code: string; name: string; target: string[]; state: number; href: string; rtl: boolean }[];
}

const STATE_NAMES: Record<number, string> = {
  0: 'Not translated',
  10: 'Needs editing',
  11: 'Needs rewriting',
  12: 'Needs checking',
  20: 'Translated',
  30: 'Approved',
  100: 'Read-only',
};

const STATE_LABEL: Record<number, string> = {
  0: 'Label--secondary',
  10: 'Label--attention',
  11: 'Label--attention',
  12: 'Label--attention',
  20: 'Label--success',
  30: 'Label--done',
  100: 'Label--secondary',
};

export function stateName(state: number): string {
  return STATE_NAMES[state] ?? `State ${state}`;
}

function StateLabel(p: { state: number }): SafeHtml {
  return <span class={`Label ${STATE_LABEL[p.state] ?? 'Label--secondary'}`}>{stateName(p.state)}</span>;
}

function formLabel(l: FormLabelView | undefined, i: number, plural: boolean, fallback: string): string {
  if (!plural) return fallback;
  if (!l) return `Plural form ${i}`;
  return l.examples.length ? `${l.name} (${l.examples.join(', ')}${l.examples.length >= 6 ? ', …' : ''})` : l.name;
}

function Person(p: { who: PersonView }): SafeHtml {
  return p.who.href ? <a href={p.who.href}>{p.who.name}</a> : <span>{p.who.name}</span>;
}

/** A string with its plural forms, each under its label. */
function Forms(p: {
  forms: string[] /** undefined: the forms without labels */;
  labels?: FormLabelView[] | null;
  lang: string;
  rtl: boolean;
  fallback: string;
}): SafeHtml {
  const plural = p.forms.length > 1;
  return (
    <div>
      {p.forms.map((f, i) => (
        <div class="mb-2">
          {plural && p.labels !== undefined ? <div class="f6 color-fg-muted">{formLabel(p.labels?.[i], i, true, p.fallback)}</div> : null}
          <div class="editor-string" lang={p.lang} dir={p.rtl ? 'rtl' : 'ltr'}>
            {f === '' ? <span class="color-fg-muted">(empty)</span> : f}
          </div>
        </div>
      ))}
    </div>
  );
}

function Panel(p: { id: string; title: string; count?: number; children?: Child }): SafeHtml {
  return (
    <section class="Box mb-3" aria-labelledby={p.id}>
      <div class="Box-header">
        <h2 class="Box-title f5" id={p.id}>
          {p.title}
          {p.count !== undefined ? <span class="Counter ml-1">{p.count}</span> : null}
        </h2>
      </div>
      {p.children}
    </section>
  );
}

function Navigation(p: { nav: EditorNav }): SafeHtml {
  const n = p.nav;
  const link = (href: string | null, text: string, attrs: Record<string, string> = {}) =>
    href ? (
      <a class="btn btn-sm" href={href} {...attrs}>
        {text}
      </a>
    ) : (
      <span class="btn btn-sm disabled" aria-disabled="true">
        {text}
      </span>
    );
  return (
    <nav class="d-flex flex-items-center mb-3 editor-nav" aria-label="Strings">
      {link(n.first, 'First')}
      {link(n.prev, 'Previous', { 'data-editor-prev': '', 'aria-keyshortcuts': 'Alt+ArrowLeft Alt+PageUp', rel: 'prev' })}
      <span class="mx-2 text-bold" aria-live="polite">{`${n.offset} / ${n.total}`}</span>
      {link(n.next, 'Next', { 'data-editor-next': '', 'aria-keyshortcuts': 'Alt+ArrowRight Alt+PageDown', rel: 'next' })}
      {link(n.last, 'Last')}
    </nav>
  );
}

const FILTERS: { q: string; text: string }[] = [
  { q: '', text: 'All strings' },
  { q: 'state:<translated', text: 'Unfinished' },
  { q: 'state:empty', text: 'Untranslated' },
  { q: 'state:needs-editing', text: 'Needs editing' },
  { q: 'has:check', text: 'Failing checks' },
  { q: 'has:suggestion', text: 'Suggestions' },
  { q: 'has:comment', text: 'Comments' },
];

export function SearchBar(p: { editor: string; q: string }): SafeHtml {
  return (
    <search class="d-block mb-3">
      <form method="get" action={p.editor} class="d-flex flex-items-center">
        <label for="editor-q" class="mr-2">
          Search
        </label>
        <input
          id="editor-q"
          class="form-control input-sm flex-auto"
          type="search"
          name="q"
          value={p.q}
          placeholder="state:<translated, has:check, source:word …"
        />
        <button type="submit" class="btn btn-sm ml-2">
          Filter
        </button>
      </form>
      <ul class="d-flex flex-wrap list-style-none mt-2 f6" aria-label="Quick filters">
        {FILTERS.map((f) => (
          <li class="mr-3">
            <a href={f.q ? `${p.editor}?q=${encodeURIComponent(f.q)}` : p.editor} aria-current={f.q === p.q ? 'true' : undefined}>
              {f.text}
            </a>
          </li>
        ))}
      </ul>
    </search>
  );
}

function crumbs(v: Pick<EditorView, 'project' | 'component' | 'language' | 'urls'>) {
  return [
    { text: 'Translate', href: '/projects/' },
    { text: v.project.name, href: v.urls.project },
    { text: v.component.name, href: v.urls.component },
    { text: v.language.name, href: v.urls.translation },
    { text: 'Editor' },
  ];
}

function Shortcuts(): SafeHtml {
  return (
    <details class="mt-3 f6">
      <summary>Keyboard shortcuts</summary>
      <dl class="editor-keys">
        <dt>
          <kbd>Ctrl</kbd> + <kbd>Enter</kbd>
        </dt>
        <dd>Save and go to the next string</dd>
        <dt>
          <kbd>Alt</kbd> + <kbd>→</kbd> or <kbd>Alt</kbd> + <kbd>Page Down</kbd>
        </dt>
        <dd>Next string</dd>
        <dt>
          <kbd>Alt</kbd> + <kbd>←</kbd> or <kbd>Alt</kbd> + <kbd>Page Up</kbd>
        </dt>
        <dd>Previous string</dd>
      </dl>
    </details>
  );
}

export function EditorPage(v: EditorView): SafeHtml {
  const u = v.unit;
  const mayWrite = v.can.edit || v.can.suggest;
  const hidden = (
    <>
      <input type="hidden" name="q" value={v.q} />
    </>
  );
  const targetBox = (t: string, i: number) => {
    const id = `target-${i}`;
    const label = formLabel(v.targetLabels?.[i], i, u.targets.length > 1, 'Translation');
    return (
      <div class="FormControl mb-2">
        <label class="FormControl-label" for={id}>
          {label}
        </label>
        <textarea
          id={id}
          name="target"
          class="form-control width-full editor-target"
          rows="3"
          lang={v.language.code}
          dir={v.language.rtl ? 'rtl' : 'ltr'}
          autofocus={i === 0 && mayWrite ? true : undefined}
          readonly={mayWrite ? undefined : true}
          spellcheck="true"
        >
          {/* the parser drops one newline after <textarea>: a target that starts with one keeps it */}
          {`\n${t}`}
        </textarea>
      </div>
    );
  };
  const action = `/-/translate/unit/${u.id}`;
  return (
    <Layout ctx={v.ctx} title={`${v.language.name} · ${v.component.name} · ${v.project.name}`} crumbs={crumbs(v)} wide>
      <div class="editor">
        <h1 class="h3 mb-2">
          Translate {v.component.name} into {v.language.name}
        </h1>
        <SearchBar editor={v.urls.editor} q={v.q} />
        <Navigation nav={v.nav} />
        <div class="editor-grid">
          <div class="editor-main">
            <FormErrors errors={v.errors} />
            <section class="Box mb-3" aria-labelledby="source-heading">
              <div class="Box-header d-flex flex-items-center">
                <h2 class="Box-title f5 flex-auto" id="source-heading">
                  Source string ({v.sourceLanguage.name})
                </h2>
                <StateLabel state={u.state} />
                {u.pending ? <span class="Label ml-1">Pending commit</span> : null}
              </div>
              <div class="Box-body">
                <Forms forms={u.sources} labels={v.sourceLabels} lang={v.sourceLanguage.code} rtl={v.sourceLanguage.rtl} fallback="Source" />
                <dl class="editor-meta f6">
                  {u.context ? (
                    <>
                      <dt>Context</dt>
                      <dd>
                        <code>{u.context}</code>
                      </dd>
                    </>
                  ) : null}
                  {u.note ? (
                    <>
                      <dt>Notes</dt>
                      <dd class="editor-pre">{u.note}</dd>
                    </>
                  ) : null}
                  {u.explanation ? (
                    <>
                      <dt>Explanation</dt>
                      <dd class="editor-pre">{u.explanation}</dd>
                    </>
                  ) : null}
                  {u.flags ? (
                    <>
                      <dt>Flags</dt>
                      <dd>
                        <code>{u.flags}</code>
                      </dd>
                    </>
                  ) : null}
                  {u.locations.length ? (
                    <>
                      <dt>{u.locations.length === 1 ? 'Location' : 'Locations'}</dt>
                      <dd>
                        {u.locations.map((l, i) => (
                          <>
                            {i ? ', ' : ''}
                            <code>{l}</code>
                          </>
                        ))}
                      </dd>
                    </>
                  ) : null}
                  <dt>State</dt>
                  <dd>{stateName(u.state)}</dd>
                </dl>
              </div>
            </section>

            <section class="Box mb-3" aria-labelledby="translation-heading">
              <div class="Box-header">
                <h2 class="Box-title f5" id="translation-heading">
                  Translation ({v.language.name})
                </h2>
              </div>
              <div class="Box-body">
                {mayWrite ? (
                  <PostForm ctx={v.ctx} action={v.can.edit ? `${action}/save` : `${action}/suggest`} id="editor-form">
                    {hidden}
                    {u.targets.map(targetBox)}
                    {v.can.edit ? (
                      <div class="form-checkbox">
                        <label>
                          <input type="checkbox" name="fuzzy" value="1" checked={u.fuzzy ? true : undefined} /> Needs editing
                        </label>
                      </div>
                    ) : null}
                    {v.can.edit && v.can.review ? (
                      <div class="form-checkbox">
                        <label>
                          <input type="checkbox" name="approved" value="1" checked={u.approved ? true : undefined} /> Approved
                        </label>
                      </div>
                    ) : null}
                    <div class="d-flex flex-items-center mt-3">
                      {v.can.edit ? (
                        <button type="submit" class="btn btn-primary mr-2" data-editor-save="" aria-keyshortcuts="Control+Enter">
                          Save
                        </button>
                      ) : null}
                      {v.can.suggest ? (
                        <button type="submit" class="btn mr-2" formaction={`${action}/suggest`} data-editor-suggest="">
                          Suggest
                        </button>
                      ) : null}
                      <a class="btn mr-2" href={v.nav.skip} data-editor-skip="">
                        Skip
                      </a>
                    </div>
                    {!v.can.edit && v.editDenied ? <p class="f6 color-fg-muted mt-2">{v.editDenied}</p> : null}
                  </PostForm>
                ) : (
                  <>
                    {u.targets.map(targetBox)}
                    <p class="f6 color-fg-muted">
                      {v.ctx.user ? (
                        (v.editDenied ?? 'You may not change this translation.')
                      ) : (
                        <>
                          <a href={`/users/sign_in?redirect_to=${encodeURIComponent(v.ctx.url)}`}>Sign in</a> to translate.
                        </>
                      )}
                    </p>
                    <a class="btn" href={v.nav.skip}>
                      Skip
                    </a>
                  </>
                )}
                <Shortcuts />
              </div>
            </section>

            <Panel id="checks-heading" title="Failing checks" count={u.checks.length}>
              {u.checks.length ? (
                <ul>
                  {u.checks.map((c) => (
                    <li class="Box-row">
                      <span class="Label Label--danger mr-2">Failing</span>
                      {c.name} <code class="f6 color-fg-muted">{c.id}</code>
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="Box-row color-fg-muted">No failing checks.</p>
              )}
            </Panel>
          </div>

          <aside class="editor-side" aria-label="About this string">
            <Panel id="suggestions-heading" title="Suggestions" count={v.suggestions.length}>
              {v.suggestions.length ? (
                <ul>
                  {v.suggestions.map((s) => (
                    <li class="Box-row">
                      <Forms forms={s.target} labels={v.targetLabels} lang={v.language.code} rtl={v.language.rtl} fallback="Suggestion" />
                      <div class="f6 color-fg-muted">
                        <Person who={s.author} /> · <TimeAgo at={s.at} />
                      </div>
                      <div class="d-flex mt-2">
                        {v.can.accept ? (
                          <PostForm ctx={v.ctx} action={`/-/translate/suggestion/${s.id}/accept`}>
                            {hidden}
                            <button type="submit" class="btn btn-sm mr-2">
                              Accept
                            </button>
                          </PostForm>
                        ) : null}
                        {v.can.deleteAny || s.own ? (
                          <PostForm ctx={v.ctx} action={`/-/translate/suggestion/${s.id}/delete`}>
                            {hidden}
                            <button type="submit" class="btn btn-sm btn-danger">
                              Delete
                            </button>
                          </PostForm>
                        ) : null}
                      </div>
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="Box-row color-fg-muted">No suggestions.</p>
              )}
            </Panel>

            <Panel id="others-heading" title="Other languages" count={v.others.length}>
              {v.others.length ? (
                <table class="width-full f6 editor-others">
                  <thead class="sr-only">
                    <tr>
                      <th scope="col">Language</th>
                      <th scope="col">Translation</th>
                      <th scope="col">State</th>
                    </tr>
                  </thead>
                  <tbody>
                    {v.others.map((o) => (
                      <tr>
                        <th scope="row">
                          <a href={o.href}>{o.name}</a>
                        </th>
                        <td class="editor-pre" lang={o.code} dir={o.rtl ? 'rtl' : 'ltr'}>
                          {o.target.join('\n')}
                        </td>
                        <td>{stateName(o.state)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : (
                <p class="Box-row color-fg-muted">No other languages.</p>
              )}
            </Panel>

            <Panel id="comments-heading" title="Comments" count={v.comments.length}>
              {v.comments.length ? (
                <ul>
                  {v.comments.map((c) => (
                    <li class="Box-row">
                      <p class="editor-pre mb-1">{c.text}</p>
                      <div class="f6 color-fg-muted">
                        <Person who={c.author} /> · <TimeAgo at={c.at} /> · {c.scope === 'translation' ? 'Translation comment' : 'Source string comment'}
                      </div>
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="Box-row color-fg-muted">No comments.</p>
              )}
              {v.can.comment ? (
                <div class="Box-body">
                  <PostForm ctx={v.ctx} action={`${action}/comment`}>
                    {hidden}
                    <div class="FormControl mb-2">
                      <label class="FormControl-label" for="comment-text">
                        New comment
                      </label>
                      <textarea id="comment-text" name="comment" class="form-control width-full" rows="2" maxlength="1000" />
                    </div>
                    <div class="FormControl mb-2">
                      <label class="FormControl-label" for="comment-scope">
                        Scope
                      </label>
                      <select id="comment-scope" name="scope" class="form-select">
                        <option value="global">Source string comment, for every language</option>
                        <option value="translation">Translation comment, for {v.language.name}</option>
                      </select>
                    </div>
                    <button type="submit" class="btn btn-sm">
                      Comment
                    </button>
                  </PostForm>
                </div>
              ) : null}
            </Panel>

            <Panel id="history-heading" title="History" count={v.history.length}>
              {v.history.length ? (
                <ul>
                  {v.history.map((h) => (
                    <li class="Box-row f6">
                      <div>
                        <span class="text-bold">{h.action}</span> · <Person who={h.author} /> · <TimeAgo at={h.at} />
                      </div>
                      {h.target ? <div class="editor-pre color-fg-muted">{h.target}</div> : null}
                    </li>
                  ))}
                </ul>
              ) : (
                <p class="Box-row color-fg-muted">No changes yet.</p>
              )}
            </Panel>
          </aside>
        </div>
      </div>
    </Layout>
  );
}

/** A filtered set without strings, or a search that failed: the search bar and a message. */
export function EditorEmpty(v: Pick<EditorView, 'ctx' | 'project' | 'component' | 'language' | 'urls' | 'q'> & { message: string; error?: boolean }): SafeHtml {
  return (
    <Layout ctx={v.ctx} title={`${v.language.name} · ${v.component.name} · ${v.project.name}`} crumbs={crumbs(v)} wide>
      <h1 class="h3 mb-2">
        Translate {v.component.name} into {v.language.name}
      </h1>
      <SearchBar editor={v.urls.editor} q={v.q} />
      {v.error ? <FormErrors errors={[v.message]} /> : null}
      <div class="blankslate">
        <h2 class="blankslate-heading">{v.error ? 'The search could not run' : v.message}</h2>
        <p>
          <a href={v.urls.translation}>Back to the translation</a> · <a href={v.urls.editor}>All strings</a>
        </p>
      </div>
    </Layout>
  );
}
