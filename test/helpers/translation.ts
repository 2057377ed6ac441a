// Translation fixtures: a public project of this server holding translation files (a real bare
// repository), and a translation project + component created through the API from it.
import assert from 'node:assert/strict';
import type { TestApp } from './build-app.ts';
import { EXTERNAL_URL, ROOT_TOKEN } from './build-app.ts';
import { workTree, type WorkTree } from './git.ts';

export const TOKEN = { authorization: `Token ${ROOT_TOKEN}` };
export const HOST = { host: 'weblate.test' };
export const AS_ROOT = { ...HOST, ...TOKEN };
export const API = 'http://weblate.test/api';
export const SITE = EXTERNAL_URL;

export const CS_PO = `msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: cs\\n"
"Plural-Forms: nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;\\n"

#: src/main.c:10
msgid "Hello, world!"
msgstr "Ahoj, světe!"

#. The fruit
#, fuzzy
msgid "Orange"
msgstr "Pomeranč"

msgid "Apple"
msgstr ""

#, c-format
msgid "%d file"
msgid_plural "%d files"
msgstr[0] "%d soubor"
msgstr[1] "%d soubory"
msgstr[2] "%d souborů"
`;

export const DE_PO = `msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Language: de\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

#: src/main.c:10
msgid "Hello, world!"
msgstr "Hallo, Welt!"

#. The fruit
msgid "Orange"
msgstr "Orange"

msgid "Apple"
msgstr "Apfel"

#, c-format
msgid "%d file"
msgid_plural "%d files"
msgstr[0] "%d Datei"
msgstr[1] "%d Dateien"
`;

export interface Fixture {
  /** the platform project's clone URL (what `repo` is set to) */
  repo: string;
  wt: WorkTree;
  fullPath: string;
}

/** A public platform project whose repository holds `files` on main. */
export async function repoWith(t: { after(fn: () => unknown): void }, ctx: TestApp, files: Record<string, string>, visibility = 'public'): Promise<Fixture> {
  const { project, dir } = await ctx.seed.repoProject({ visibility });
  const ns = await ctx.c.resolve.namespaceById(project.namespace_id);
  const wt = workTree(t, dir);
  for (const [name, content] of Object.entries(files)) wt.write(name, content);
  wt.commit('Add translations');
  wt.push('main');
  const fullPath = `${ns!.full_path}/${project.path}`;
  return { repo: `${ctx.config.externalUrl}/${fullPath}.git`, wt, fullPath };
}

/** POST /api/projects/ as root; returns the body. */
export async function createProject(ctx: TestApp, attrs: Record<string, unknown> = {}) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: AS_ROOT,
    payload: { name: 'Hello', slug: 'hello', web: 'https://hello.example/', ...attrs },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** POST /api/projects/:slug/components/ as root; returns the body. */
export async function createComponent(ctx: TestApp, project: string, attrs: Record<string, unknown>) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/api/projects/${project}/components/`,
    headers: AS_ROOT,
    payload: { name: 'Po', slug: 'po', file_format: 'po', filemask: 'po/*.po', ...attrs },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** A project `hello` with a component `po` over po/cs.po and po/de.po. */
export async function poComponent(
  t: { after(fn: () => unknown): void },
  ctx: TestApp,
  files: Record<string, string> = { 'po/cs.po': CS_PO, 'po/de.po': DE_PO },
) {
  const fixture = await repoWith(t, ctx, files);
  const project = await createProject(ctx);
  const component = await createComponent(ctx, 'hello', { repo: fixture.repo });
  return { fixture, project, component };
}

export async function getJson(ctx: TestApp, url: string, headers: Record<string, string> = AS_ROOT) {
  const res = await ctx.app.inject({ method: 'GET', url, headers });
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json();
}

/** A project `hello` with a monolingual JSON component `app` (`locales/*.json`, template `locales/en.json`) over `files`. */
export async function jsonComponent(t: { after(fn: () => unknown): void }, ctx: TestApp, files: Record<string, string>, attrs: Record<string, unknown> = {}) {
  const fixture = await repoWith(t, ctx, files);
  const project = await createProject(ctx);
  const component = await createComponent(ctx, 'hello', {
    name: 'App',
    slug: 'app',
    repo: fixture.repo,
    file_format: 'json',
    filemask: 'locales/*.json',
    template: 'locales/en.json',
    ...attrs,
  });
  return { fixture, project, component };
}
