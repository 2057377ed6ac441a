#!/usr/bin/env node
// `npm run lint` (after Biome): the layer map of docs/design-notes.md as a check. It reads every module under
// src/ with TypeScript's parser (imports and statements only; nothing is type-checked) and fails when
// - a folder imports one that sits above it (LAYERS below: the domain never reaches for HTTP, views never
//   for the routes, the plumbing never for the domain), type-only imports included;
// - a route or page module imports another one (shared helpers go in a module of their own);
// - SQL (a Kysely statement or an sql`` template) is written under src/http or src/web: lists are finders
//   and services in the domain;
// - runtime imports form a cycle, between files or between top-level folders;
// - runtime imports form a cycle between the folders of src/domain (its features, and `core`, the floor they
//   all stand on): what two features share moves down into domain/core, or one feature sits below the other;
// - `Errors.raw(` (a status and a body given verbatim) appears in src/domain: the domain raises typed errors
//   (Errors.refused, invalid, rejected, locked, notFound …), and each API renders them in one place;
// - a line of any file under src/ names how the code was built (BUILD_HISTORY: issue or helper numbers)
//   where it should say what the product does.
// `--root <dir>` checks another tree (the check's own test runs it on small fixture trees).
// Plain JavaScript: it runs with node before anything is compiled.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** what each folder of src/ may never import (a top-level file such as container.ts is named without .ts) */
const LAYERS = [
  { from: ['domain'], never: ['http', 'web', 'app', 'container', 'cli'], why: 'the domain knows no HTTP, pages or wiring' },
  { from: ['web'], never: ['http'], why: 'views get what they show from the routes, never import them' },
  { from: ['db', 'git', 'lib', 'formats', 'storage', 'metrics'], never: ['domain', 'jobs'], why: 'plumbing sits below the domain' },
  { from: ['jobs'], never: ['domain'], why: 'the job runner is plumbing: the domain registers its jobs with it' },
  { from: ['http'], never: ['formats'], why: 'the routes reach file formats through the domain' },
];
/** comments that speak of the build ("issue 18, helper E") rather than the product; GitLab's own issues are gitlab-org/gitlab#N */
const BUILD_HISTORY = /issue [0-9]+|helper [A-Z]\b/i;
const SQL_FREE = ['http', 'web'];
const STATEMENTS = new Set(['selectFrom', 'insertInto', 'updateTable', 'deleteFrom']);
const ROUTE_MODULE = /\.(routes|pages)\.tsx?$/;

function argRoot() {
  const i = process.argv.indexOf('--root');
  if (i > 0) return path.resolve(process.argv[i + 1]);
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
}

/** @param {string} dir @returns {string[]} */
function modules(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return modules(p);
    return /\.(ts|tsx|js|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every file under dir, whatever its kind (stylesheets and data included). */
function allFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? allFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** @returns {string[]} a problem per line that names issue or helper numbers */
function buildHistory(root, src) {
  return allFiles(src)
    .sort()
    .flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((text, i) =>
          BUILD_HISTORY.test(text)
            ? [`${path.relative(root, file)}:${i + 1}: a comment names how the code was built (issue/helper numbers): say what the product does`]
            : [],
        ),
    );
}

/** The top-level folder of a module under src/ (or the file's name without extension for src/*.ts). */
function areaOf(src, file) {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length === 1 ? parts[0].replace(/\.[^.]+$/, '') : parts[0];
}

/** The folder directly under src/domain that holds a module (`core` or a feature), or null outside such a folder. */
function featureOf(src, file) {
  const parts = path.relative(path.join(src, 'domain'), file).split(path.sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : null;
}

/** @returns {string | null} the module a relative specifier names */
function resolve(known, from, spec) {
  if (!spec.startsWith('.')) return null;
  const p = path.resolve(path.dirname(from), spec);
  for (const c of [p, p.replace(/\.js$/, '.ts'), p.replace(/\.js$/, '.tsx'), `${p}.ts`, `${p}.tsx`, path.join(p, 'index.ts')]) {
    if (known.has(c)) return c;
  }
  return null;
}

/** Is an import or export declaration erased at runtime? */
function typeOnly(node) {
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const els = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : null;
    return !!els && els.length > 0 && els.every((e) => e.isTypeOnly);
  }
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

/** Imports (with line and whether they survive compilation), SQL statements and `Errors.raw(` calls of one module. */
function scan(file) {
  const text = fs.readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const line = (node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const imports = [];
  const sql = [];
  const rawErrors = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      imports.push({ spec: node.moduleSpecifier.text, line: line(node), runtime: !typeOnly(node) });
      return;
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const name = node.expression.name.text;
      if (STATEMENTS.has(name)) sql.push({ line: line(node), what: `${name}(` });
      if (name === 'raw' && ts.isIdentifier(node.expression.expression) && node.expression.expression.text === 'Errors') rawErrors.push(line(node));
    }
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'import' &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      imports.push({ spec: node.arguments[0].text, line: line(node), runtime: true });
    }
    if (ts.isTaggedTemplateExpression(node)) {
      const tag = node.tag;
      const name = ts.isIdentifier(tag) ? tag.text : ts.isPropertyAccessExpression(tag) && ts.isIdentifier(tag.expression) ? tag.expression.text : null;
      if (name === 'sql') sql.push({ line: line(node), what: 'sql``' });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { imports, sql, rawErrors };
}

/** Strongly connected components with more than one member (Tarjan, iterative: the graph can be deep). */
function cycles(adjacency) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  let next = 0;
  for (const start of adjacency.keys()) {
    if (index.has(start)) continue;
    const work = [[start, [...(adjacency.get(start) ?? [])], 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const [v, edges] = frame;
      if (frame[2] < edges.length) {
        const w = edges[frame[2]++];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, [...(adjacency.get(w) ?? [])], 0]);
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        const component = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1) out.push(component.sort());
      }
    }
  }
  return out;
}

export function checkLayers(root) {
  const src = path.join(root, 'src');
  const files = modules(src);
  const known = new Set(files);
  const rel = (f) => path.relative(root, f);
  const problems = [];
  const fileGraph = new Map(files.map((f) => [f, new Set()]));
  const areaGraph = new Map();
  const domainGraph = new Map();
  /** `from→to` → the first module (by path) of folder `from` that imports folder `to` at runtime */
  const domainEdges = new Map();
  for (const file of files) {
    const from = areaOf(src, file);
    const scanned = scan(file);
    if (from === 'domain') {
      for (const at of scanned.rawErrors) {
        problems.push(`${rel(file)}:${at}: Errors.raw( in the domain: raise a typed error (Errors.refused, invalid, rejected, locked …), each API renders it`);
      }
    }
    if (SQL_FREE.includes(from)) {
      for (const s of scanned.sql) problems.push(`${rel(file)}:${s.line}: SQL under src/${from} (${s.what}): put it in a domain finder or service`);
    }
    for (const imp of scanned.imports) {
      const target = resolve(known, file, imp.spec);
      if (!target) continue;
      const to = areaOf(src, target);
      const rule = LAYERS.find((r) => r.from.includes(from) && r.never.includes(to));
      if (rule) problems.push(`${rel(file)}:${imp.line}: ${from} imports ${to} (${imp.spec}): ${rule.why}`);
      if (ROUTE_MODULE.test(file) && ROUTE_MODULE.test(target) && from === 'http') {
        problems.push(`${rel(file)}:${imp.line}: a route module imports another (${imp.spec}): move what they share into a module of its own`);
      }
      if (!imp.runtime) continue;
      fileGraph.get(file).add(target);
      if (from !== to) {
        if (!areaGraph.has(from)) areaGraph.set(from, new Set());
        areaGraph.get(from).add(to);
      }
      const [fromFeature, toFeature] = [featureOf(src, file), featureOf(src, target)];
      if (fromFeature && toFeature && fromFeature !== toFeature) {
        if (!domainGraph.has(fromFeature)) domainGraph.set(fromFeature, new Set());
        domainGraph.get(fromFeature).add(toFeature);
        const edge = `${fromFeature}→${toFeature}`;
        const by = path.relative(path.join(src, 'domain'), file).split(path.sep).join('/');
        if (!domainEdges.has(edge) || by < domainEdges.get(edge)) domainEdges.set(edge, by);
      }
    }
  }
  problems.push(...buildHistory(root, src));
  for (const c of cycles(areaGraph)) problems.push(`src/: the top-level folders ${c.join(', ')} import each other at runtime (a cycle)`);
  for (const c of cycles(domainGraph)) {
    const inCycle = new Set(c);
    const edges = c.flatMap((a) =>
      [...domainGraph.get(a)]
        .filter((b) => inCycle.has(b))
        .sort()
        .map((b) => `${domainEdges.get(`${a}→${b}`)} → ${b}`),
    );
    problems.push(
      `src/domain/: the folders ${c.join(', ')} import each other at runtime (${edges.join(', ')}): move what they share into domain/core, or one below the other`,
    );
  }
  for (const c of cycles(fileGraph)) problems.push(`src/: a runtime import cycle between ${c.map(rel).join(', ')}`);
  return { files: files.length, problems };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { files, problems } = checkLayers(argRoot());
  for (const p of problems) process.stderr.write(`${p}\n`);
  if (problems.length) {
    process.stderr.write(`check-layers: ${problems.length} problem(s) in ${files} modules\n`);
    process.exit(1);
  }
  process.stdout.write(`check-layers: ${files} modules, layers kept, no runtime cycles, no wire bodies built in src/domain\n`);
}
