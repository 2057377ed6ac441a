// The CI file (GitLab's Gitlab::Ci::Config and Gitlab::Ci::YamlProcessor): YAML (1.1, anchors and `<<`
// merge keys, as Psych reads it), `include: local` files of the same commit and `include: project` files of
// other projects deep-merged under the file, `extends`, then every keyword validated with GitLab's messages
// and each visible job normalised to the JobOptions contract. Remote, template and component includes are
// refused with an error.
import { Lexer, parseDocument, type ScalarTag, stringify, type Tags, type YAMLError } from 'yaml';
import type { JobOptions } from '../job-options.ts';
import { parseDuration } from '../../../lib/duration.ts';
import { validExpression } from './expressions.ts';

export const DEFAULT_STAGES = ['build', 'test', 'deploy'];
const MAX_NESTING = 10;
const MAX_EXTENDS_DEPTH = 11;
// Limits checked before anything is expanded, so that no file can make the parser use unbounded
// time or memory (GitLab's max_yaml_size_bytes, max_yaml_depth, ci_max_includes,
// ci_max_total_yaml_size_bytes, ci_needs_size_limit, Parallel::PARALLEL_LIMIT). Sizes count what a
// file holds once aliases are resolved (deepSize), so an alias bomb is as big as what it expands to.
export const MAX_YAML_SIZE = 2 * 1024 * 1024;
const MAX_YAML_DEPTH = 100;
const MAX_INCLUDES = 150;
const MAX_TOTAL_YAML_SIZE = 10 * 1024 * 1024;
const MAX_NEEDS = 50;
const MAX_PARALLEL = 200;
/** jobs one pipeline may have after `parallel` (GitLab's ci_pipeline_size plan limit) */
const MAX_PIPELINE_JOBS = 2000;
export const TOO_BIG = 'The parsed YAML is too big';
const TOTAL_TOO_BIG = 'Total size of combined CI/CD configuration is too big';

const ROOT_KEYS = ['default', 'include', 'before_script', 'image', 'services', 'after_script', 'variables', 'stages', 'cache', 'workflow'];
const DEFAULT_KEYS = [
  'before_script',
  'image',
  'services',
  'after_script',
  'cache',
  'tags',
  'artifacts',
  'retry',
  'timeout',
  'interruptible',
  'hooks',
  'id_tokens',
];
const PROCESSABLE_KEYS = ['extends', 'stage', 'only', 'except', 'rules', 'variables', 'inherit', 'allow_failure', 'when', 'needs', 'resource_group'];
const JOB_KEYS = [
  ...PROCESSABLE_KEYS,
  'tags',
  'script',
  'type',
  'image',
  'services',
  'start_in',
  'artifacts',
  'cache',
  'dependencies',
  'before_script',
  'after_script',
  'environment',
  'coverage',
  'retry',
  'parallel',
  'interruptible',
  'timeout',
  'release',
  'secrets',
  'hooks',
  'id_tokens',
  'pages',
  'identity',
];
const BRIDGE_KEYS = [...PROCESSABLE_KEYS, 'trigger', 'environment', 'parallel', 'interruptible'];
const JOB_WHEN = ['on_success', 'on_failure', 'always', 'manual', 'delayed'];
const BRIDGE_WHEN = ['on_success', 'on_failure', 'always', 'manual', 'delayed'];
const RULE_WHEN = ['on_success', 'on_failure', 'always', 'never', 'manual', 'delayed'];
const RULE_KEYS = ['if', 'changes', 'exists', 'when', 'start_in', 'allow_failure', 'variables', 'needs', 'interruptible'];
const WORKFLOW_RULE_KEYS = ['if', 'changes', 'exists', 'when', 'variables', 'auto_cancel'];
const ARTIFACTS_KEYS = ['name', 'untracked', 'paths', 'reports', 'when', 'expire_in', 'expose_as', 'exclude', 'public', 'access'];
const ENV_KEYS = ['name', 'url', 'action', 'on_stop', 'auto_stop_in', 'kubernetes', 'deployment_tier'];
const ENV_ACTIONS = ['start', 'stop', 'prepare', 'verify', 'access'];
const TRIGGER_KEYS = ['project', 'branch', 'strategy', 'include', 'forward'];
const NEED_KEYS = ['job', 'artifacts', 'optional', 'pipeline', 'project', 'ref', 'parallel'];
const POLICY_KEYS = ['refs', 'kubernetes', 'variables', 'changes'];
const RETRY_WHEN = [
  'always',
  'unknown_failure',
  'script_failure',
  'api_failure',
  'stuck_or_timeout_failure',
  'runner_system_failure',
  'runner_unsupported',
  'stale_schedule',
  'job_execution_timeout',
  'archived_failure',
  'unmet_prerequisites',
  'scheduler_failure',
  'data_integrity_failure',
];

export type Dict = Record<string, unknown>;

export interface CiRule {
  if?: string;
  changes?: unknown;
  exists?: string[];
  when?: string;
  start_in?: string;
  allow_failure?: boolean;
  variables?: Record<string, string>;
}

export interface CiPolicy {
  refs?: string[];
  variables?: string[];
  changes?: unknown;
}

export interface CiJobSpec {
  name: string;
  stage: string;
  stageIdx: number;
  type: 'build' | 'bridge';
  options: JobOptions;
  when: string;
  /** null: not written in the file (manual jobs then default to allowed to fail) */
  allowFailure: boolean | null;
  tags: string[];
  /** the job's own variables (the file's global ones are in CiConfig.variables) */
  variables: Record<string, string>;
  /** false: the job inherits none of the global variables; a list: only those */
  inheritVariables: boolean | string[];
  environment: string | null;
  rules: CiRule[] | null;
  only: CiPolicy | null;
  except: CiPolicy | null;
  /** `parallel`: N copies, or one per combination of the matrix's values (expanded by compose) */
  parallel?: { total: number; matrix: Record<string, string>[] | null } | null;
}

export interface CiInclude {
  /** `local` for a file of the pipeline's project, `file` for one of another project (GitLab's metadata types) */
  type: 'local' | 'file';
  location: string;
  blob: null;
  raw: null;
  /** `include:project`: `{ project, ref }` */
  extra: Dict;
  /** the project whose file included this one (null: the pipeline's own) */
  context_project: string | null;
  context_sha: null;
}

export interface CiConfig {
  stages: string[];
  variables: Record<string, string>;
  workflowRules: CiRule[] | null;
  workflowName: string | null;
  jobs: CiJobSpec[];
  includes: CiInclude[];
}

export interface ParseResult {
  config: CiConfig | null;
  errors: string[];
  warnings: string[];
  /** what was read before an error (lint reports it even for an invalid file) */
  merged: Dict | null;
  includes: CiInclude[];
}

/**
 * Where an included file is: a path of the pipeline's commit, or (`include:project`) a path of another
 * project at a ref (`HEAD` when none is named).
 */
export interface FileLocation {
  path: string;
  project?: string;
  ref?: string;
}

/**
 * Reads an included file (null when it does not exist). A file of another project that the pipeline's user
 * may not read, or a ref it lacks, is a ConfigError with GitLab's message.
 */
export type ReadFile = (loc: FileLocation) => Promise<string | null>;

export class ConfigError extends Error {}

interface BlobSource {
  info(rev: string): Promise<{ type: string; size: number } | null>;
  read(rev: string): Promise<{ type: string; content?: Buffer } | null>;
}

/**
 * The files of one commit: a blob over max_yaml_size_bytes is refused from its
 * header (a ConfigError), never read into memory.
 */
export function commitReader(repo: BlobSource, sha: string | null): (path: string) => Promise<string | null> {
  return async (path) => {
    if (!sha) return null;
    const head = await repo.info(`${sha}:${path}`);
    if (!head || head.type !== 'blob') return null;
    if (head.size > MAX_YAML_SIZE) throw new ConfigError(TOO_BIG);
    const o = await repo.read(`${sha}:${path}`);
    return o && o.type === 'blob' ? (o.content?.toString('utf8') ?? '') : null;
  };
}

const isDict = (v: unknown): v is Dict => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** Psych's message for a document that is not YAML: "(<unknown>): <problem> at line L column C". */
function yamlErrorMessage(e: YAMLError): string {
  const pos = e.linePos?.[0];
  const at = pos ? ` at line ${pos.line} column ${pos.col}` : '';
  let problem: string;
  switch (e.code) {
    case 'BLOCK_AS_IMPLICIT_KEY':
    case 'MULTILINE_IMPLICIT_KEY':
    case 'BAD_INDENT':
    case 'UNEXPECTED_TOKEN':
    case 'MISSING_CHAR':
      problem = 'did not find expected key while parsing a block mapping';
      break;
    case 'BAD_ALIAS':
      problem = 'found undefined alias';
      break;
    case 'TAB_AS_INDENT':
      problem = 'found character that cannot start any token while scanning for the next token';
      break;
    default:
      problem = e.message
        .split('\n')[0]
        .replace(/ at line \d+, column \d+:?$/, '')
        .toLowerCase();
  }
  return `(<unknown>): ${problem}${at}`;
}

const BOOL = 'tag:yaml.org,2002:bool';
/** Psych's booleans: YAML 1.1 without y/n (which stay strings, as `script: y` must) */
const PSYCH_BOOLS: ScalarTag[] = [
  { identify: (v) => v === true, default: true, tag: BOOL, test: /^(?:[Yy]es|YES|[Tt]rue|TRUE|[Oo]n|ON)$/, resolve: () => true },
  { identify: (v) => v === false, default: true, tag: BOOL, test: /^(?:[Nn]o|NO|[Ff]alse|FALSE|[Oo]ff|OFF)$/, resolve: () => false },
];
const psychTags = (tags: Tags): Tags => [...PSYCH_BOOLS, ...tags.filter((t) => (t as { tag?: string }).tag !== BOOL)];

/**
 * An upper bound of the document's nesting, from its tokens (the lexer is a loop; the parser
 * recurses once per level and would overflow the stack on a deep document): open flow
 * collections, plus the indentation and the block indicators (`- `, `? `, `: `) of each line.
 */
function nestingBound(content: string): number {
  // cheap bound first: no line longer, and no more brackets, than a deep document needs
  let brackets = 0;
  let longest = 0;
  let start = 0;
  for (let i = 0; i < content.length; i++) {
    const c = content.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) brackets++;
    else if (c === 0x0a) {
      longest = Math.max(longest, i - start);
      start = i + 1;
    }
  }
  longest = Math.max(longest, content.length - start);
  if (brackets + longest <= NESTING_SCAN_LIMIT) return brackets + longest;
  let flow = 0;
  let line = 0;
  let max = 0;
  let lineStart = true;
  for (const token of new Lexer().lex(content)) {
    if (token.endsWith('\n')) {
      // a newline, or a block scalar's lines
      line = 0;
      lineStart = true;
      continue;
    }
    if (lineStart && /^ +$/.test(token)) line += token.length;
    else if (token === '-' || token === '?' || token === ':') line++;
    else if (token === '[' || token === '{') flow++;
    else if (token === ']' || token === '}') flow = Math.max(0, flow - 1);
    lineStart = false;
    max = Math.max(max, flow + line);
    if (max > NESTING_SCAN_LIMIT) return max;
  }
  return max;
}
/** well below the nesting at which the parser overflows the stack (about 800 flow levels) */
const NESTING_SCAN_LIMIT = 4 * MAX_YAML_DEPTH;

/**
 * The size of data as GitLab's Gitlab::Utils::DeepSize bounds it: every string by its length plus
 * one per node, an alias counted wherever it is used; more than `limit`, or deeper than
 * max_yaml_depth, is an error (`message`). The walk stops as soon as the limit is passed.
 */
function deepSize(data: unknown, limit: number, message: string): number {
  let size = 0;
  const walk = (v: unknown, depth: number): void => {
    if (depth > MAX_YAML_DEPTH || size > limit) throw new ConfigError(message);
    size += 1;
    if (typeof v === 'string') size += v.length;
    else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (isDict(v)) {
      for (const k in v) {
        size += k.length;
        walk(v[k], depth + 1);
      }
    }
  };
  walk(data, 1);
  if (size > limit) throw new ConfigError(message);
  return size;
}

/**
 * One YAML document as data (Psych: YAML 1.1, duplicate keys keep the last), within GitLab's
 * max_yaml_size_bytes and max_yaml_depth: a bigger or deeper file is refused before it is parsed
 * or expanded. Returns the data and its size.
 */
export function loadYaml(content: string): unknown {
  return loadSized(content).data;
}

function loadSized(content: string): { data: unknown; size: number } {
  if (content.length > MAX_YAML_SIZE || Buffer.byteLength(content) > MAX_YAML_SIZE) throw new ConfigError(TOO_BIG);
  if (nestingBound(content) > NESTING_SCAN_LIMIT) throw new ConfigError(TOO_BIG);
  let data: unknown;
  try {
    const doc = parseDocument(content, { version: '1.1', merge: true, uniqueKeys: false, prettyErrors: true, customTags: psychTags });
    if (doc.errors.length) throw new ConfigError(yamlErrorMessage(doc.errors[0]));
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`(<unknown>): ${e instanceof Error ? e.message.toLowerCase() : 'invalid document'}`);
  }
  return { data, size: deepSize(data, MAX_YAML_SIZE, TOO_BIG) };
}

/** `over` deep-merged onto `base` (new objects; values shared); a budget counts the entries copied. */
function deepMerge(base: Dict, over: Dict, budget?: Budget): Dict {
  const out: Dict = { ...base };
  const keys = Object.keys(over);
  if (budget) spend(budget, Object.keys(out).length + keys.length);
  for (const k of keys) {
    const v = over[k];
    out[k] = isDict(out[k]) && isDict(v) ? deepMerge(out[k] as Dict, v, budget) : v;
  }
  return out;
}

/** An `include:` entry: a local file, or files of another project at a ref. */
interface IncludeEntry {
  location: string;
  project?: string;
  ref?: string;
}

/** `include:` entries as locations, or an error for what this server does not include. */
function includeLocations(value: unknown): IncludeEntry[] {
  const list = Array.isArray(value) ? value : [value];
  const out: IncludeEntry[] = [];
  for (const item of list) {
    if (typeof item === 'string') {
      if (/^https?:\/\//i.test(item)) throw new ConfigError(`Remote file \`${item}\` could not be included: only local and project includes are supported`);
      out.push({ location: item });
      continue;
    }
    if (!isDict(item)) throw new ConfigError(`Include \`${JSON.stringify(item)}\` needs to match exactly one accessor!`);
    const accessors = ['local', 'remote', 'project', 'template', 'component', 'artifact'].filter((k) => k in item);
    if (accessors.length !== 1) throw new ConfigError(`Include \`${JSON.stringify(item)}\` needs to match exactly one accessor!`);
    if (accessors[0] === 'project') {
      // Gitlab::Ci::Config::Entry::Include: `project` with `file` (a path or a list of paths), `ref` optional
      const files = typeof item.file === 'string' ? [item.file] : isStringArray(item.file) ? item.file : null;
      const project = Array.isArray(item.project) ? item.project[0] : item.project;
      if (typeof project !== 'string' || !project || !files?.length || (item.ref !== undefined && typeof item.ref !== 'string')) {
        throw new ConfigError(`Include \`${JSON.stringify(item)}\` needs to match exactly one accessor!`);
      }
      for (const file of files) out.push({ location: file, project: project.toLowerCase(), ref: (item.ref as string | undefined) ?? 'HEAD' });
      continue;
    }
    if (accessors[0] !== 'local') throw new ConfigError(`Include \`${accessors[0]}\` is not supported: only local and project includes are supported`);
    if (typeof item.local !== 'string') throw new ConfigError(`Include \`${JSON.stringify(item)}\` needs to match exactly one accessor!`);
    out.push({ location: item.local });
  }
  return out;
}

/** A local include's path inside the repository (no traversal, no option-looking names), or an error. */
export function localPath(location: string): string {
  const path = location.replace(/^\/+/, '');
  if (!path || path.split('/').some((s) => s === '..' || s === '.' || s === '') || path.startsWith('-') || path.includes('\0')) {
    throw new ConfigError(`Local file \`${location}\` does not exist!`);
  }
  if (/[*?[]/.test(path)) throw new ConfigError(`Local file \`${location}\` does not exist!`);
  if (!/\.ya?ml$/i.test(path)) throw new ConfigError(`Included file \`${location}\` does not have YAML extension!`);
  return path;
}

/** What the files read so far add up to (ci_max_total_yaml_size_bytes). */
interface Budget {
  size: number;
}

function spend(budget: Budget, size: number): void {
  budget.size += size;
  if (budget.size > MAX_TOTAL_YAML_SIZE) throw new ConfigError(TOTAL_TOO_BIG);
}

/** the project and ref a file was read from: local includes inside another project's file are that project's */
interface IncludeContext {
  project?: string;
  ref?: string;
}

async function expandIncludes(
  config: Dict,
  read: ReadFile | null,
  seen: Set<string>,
  budget: Budget,
  includes: CiInclude[],
  context: IncludeContext = {},
): Promise<Dict> {
  if (!('include' in config)) return config;
  const { include, ...rest } = config;
  if (include === null || include === undefined) return rest;
  let merged: Dict = {};
  for (const entry of includeLocations(include)) {
    const { location } = entry;
    const where: IncludeContext = entry.project ? { project: entry.project, ref: entry.ref } : context;
    const path = where.project ? projectPath(where.project, location) : localPath(location);
    const key = where.project ? `${where.project}@${where.ref}:${path}` : path;
    if (seen.has(key)) continue; // GitLab includes a file once
    // counted before the file is read, so that nesting is bounded by the count too
    if (seen.size >= MAX_INCLUDES) throw new ConfigError(`Maximum of ${MAX_INCLUDES} nested includes are allowed!`);
    seen.add(key);
    const name = where.project ? `Project \`${where.project}\` file \`${path}\`` : `Local file \`${location}\``;
    let content: string | null = null;
    try {
      content = read ? await read(where.project ? { path, project: where.project, ref: where.ref } : { path }) : null;
    } catch (e) {
      throw e instanceof ConfigError && e.message === TOO_BIG ? new ConfigError(`\`${location}\`: ${TOO_BIG}`) : e;
    }
    if (content === null) throw new ConfigError(`${name} does not exist!`);
    if (where.project && !content.trim()) throw new ConfigError(`${name} is empty!`);
    includes.push(
      where.project
        ? {
            type: 'file',
            location: path,
            blob: null,
            raw: null,
            extra: { project: where.project, ref: where.ref },
            context_project: context.project ?? null,
            context_sha: null,
          }
        : { type: 'local', location, blob: null, raw: null, extra: {}, context_project: context.project ?? null, context_sha: null },
    );
    let data: unknown = {};
    if (content.trim()) {
      try {
        const loaded = loadSized(content);
        spend(budget, loaded.size);
        data = loaded.data;
      } catch (e) {
        if (e instanceof ConfigError && e.message === TOO_BIG) throw new ConfigError(`\`${location}\`: ${TOO_BIG}`);
        if (e instanceof ConfigError && e.message === TOTAL_TOO_BIG) throw e;
        throw new ConfigError(`${name} does not have valid YAML syntax!`);
      }
    }
    if (!isDict(data)) throw new ConfigError(`${name} does not have valid YAML syntax!`);
    merged = deepMerge(merged, await expandIncludes(data, read, seen, budget, includes, where));
  }
  return deepMerge(merged, rest);
}

/** A path of another project's repository (`include:project`'s `file`), or GitLab's error. */
function projectPath(project: string, location: string): string {
  const path = location.replace(/^\/+/, '');
  if (!path || path.split('/').some((s) => s === '..' || s === '.' || s === '') || path.startsWith('-') || path.includes('\0') || /[*?[]/.test(path)) {
    throw new ConfigError(`Project \`${project}\` file \`${path}\` does not exist!`);
  }
  if (!/\.ya?ml$/i.test(path)) throw new ConfigError(`Included file \`${path}\` does not have YAML extension!`);
  return path;
}

/** `extends`: each entry's bases deep-merged under it, in order (Gitlab::Ci::Config::Extendable). */
function resolveExtends(config: Dict, budget: Budget): Dict {
  const out: Dict = { ...config };
  const resolving = new Set<string>();
  /** per resolved entry, the entries with `extends` on its longest chain (itself included) */
  const levels = new Map<string, number>();
  const resolve = (key: string, depth: number): { entry: Dict; level: number } => {
    const entry = out[key] as Dict;
    const known = levels.get(key);
    if (known !== undefined) return { entry, level: known };
    if (!isDict(entry) || entry.extends === undefined) return { entry, level: 0 };
    if (depth > MAX_EXTENDS_DEPTH) throw new ConfigError(`${key}: nesting too deep in \`extends\``);
    if (resolving.has(key)) throw new ConfigError(`${key}: circular dependency detected in \`extends\``);
    const ext = entry.extends;
    const bases = typeof ext === 'string' ? [ext] : isStringArray(ext) ? ext : null;
    if (!bases) throw new ConfigError(`${key}: invalid extends`);
    const unknown = bases.filter((b) => !(b in out));
    if (unknown.length) throw new ConfigError(`${key}: unknown keys in \`extends\` (${unknown.join(', ')})`);
    resolving.add(key);
    let base: Dict = {};
    let level = 1;
    for (const b of bases) {
      if (!isDict(out[b])) throw new ConfigError(`${key}: invalid base hash in \`extends\``);
      const resolved = resolve(b, depth + 1);
      level = Math.max(level, resolved.level + 1);
      // the depth of the chain, wherever it was first resolved from (the order of the file does not matter)
      if (level > MAX_EXTENDS_DEPTH) throw new ConfigError(`${key}: nesting too deep in \`extends\``);
      base = deepMerge(base, resolved.entry, budget);
    }
    resolving.delete(key);
    const { extends: _drop, ...own } = entry;
    const merged = deepMerge(base, own, budget);
    delete merged.extends;
    out[key] = merged;
    levels.set(key, level);
    return { entry: merged, level };
  };
  for (const key of Object.keys(out)) if (!ROOT_KEYS.includes(key) || key === 'default') resolve(key, 1);
  return out;
}

/** Entry validation: errors collected, each with GitLab's location prefix. */
class Checker {
  readonly errors: string[] = [];
  readonly warnings: string[] = [];
  add(msg: string): void {
    if (!this.errors.includes(msg)) this.errors.push(msg);
  }
  unknownKeys(where: string, value: Dict, allowed: string[]): void {
    const extra = Object.keys(value).filter((k) => !allowed.includes(k));
    if (extra.length) this.add(`${where} config contains unknown keys: ${extra.join(', ')}`);
  }
}

/** A script: a string or nested arrays of strings (≤ 10 levels), flattened; null when invalid. */
function commands(v: unknown, level = 1): string[] | null {
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v) || level > MAX_NESTING) return null;
  const out: string[] = [];
  for (const x of v) {
    if (typeof x === 'string') out.push(x);
    else {
      const inner = commands(x, level + 1);
      if (!inner || !Array.isArray(x)) return null;
      out.push(...inner);
    }
  }
  return out;
}

function scriptEntry(ck: Checker, where: string, v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const c = commands(v);
  if (!c) {
    ck.add(`${where} config should be a string or a nested array of strings up to ${MAX_NESTING} levels deep`);
    return undefined;
  }
  return c;
}

function scalarString(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

function variablesEntry(ck: Checker, where: string, v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  const msg = `${where} config should be a hash of key value pairs, value can be a hash`;
  if (!isDict(v)) {
    ck.add(msg);
    return {};
  }
  const out: Record<string, string> = {};
  for (const [k, raw] of Object.entries(v)) {
    const value = isDict(raw) ? (raw.value === undefined ? '' : scalarString(raw.value)) : scalarString(raw);
    if (value === null) {
      ck.add(msg);
      continue;
    }
    out[k] = value;
  }
  return out;
}

function imageEntry(ck: Checker, where: string, v: unknown): JobOptions['image'] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return { name: v };
  if (isDict(v)) {
    ck.unknownKeys(where, v, ['name', 'entrypoint', 'ports', 'pull_policy', 'docker', 'kubernetes']);
    if (typeof v.name !== 'string') {
      ck.add(`${where} config should be a hash or a string`);
      return undefined;
    }
    if (v.entrypoint !== undefined && !isStringArray(v.entrypoint)) ck.add(`${where} entrypoint should be an array of strings`);
    return { name: v.name, ...(isStringArray(v.entrypoint) ? { entrypoint: v.entrypoint } : {}) };
  }
  ck.add(`${where} config should be a hash or a string`);
  return undefined;
}

function servicesEntry(ck: Checker, where: string, v: unknown): JobOptions['services'] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    ck.add(`${where} config should be a array`);
    return undefined;
  }
  const out: NonNullable<JobOptions['services']> = [];
  v.forEach((s, i) => {
    if (typeof s === 'string') out.push({ name: s });
    else if (isDict(s) && typeof s.name === 'string') {
      ck.unknownKeys(`${where}:service`, s, ['name', 'entrypoint', 'command', 'alias', 'ports', 'variables', 'pull_policy', 'docker', 'kubernetes']);
      out.push({
        name: s.name,
        ...(typeof s.alias === 'string' ? { alias: s.alias } : {}),
        ...(isStringArray(s.entrypoint) ? { entrypoint: s.entrypoint } : {}),
        ...(isStringArray(s.command) ? { command: s.command } : {}),
      });
    } else ck.add(`${where}:service config should be a hash or a string (item ${i})`);
  });
  return out;
}

function tagsEntry(ck: Checker, where: string, v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isStringArray(v)) {
    ck.add(`${where} config should be an array of strings`);
    return undefined;
  }
  return v;
}

function artifactsEntry(ck: Checker, where: string, v: unknown): JobOptions['artifacts'] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isDict(v)) {
    ck.add(`${where} config should be a hash`);
    return undefined;
  }
  ck.unknownKeys(where, v, ARTIFACTS_KEYS);
  const out: NonNullable<JobOptions['artifacts']> = {};
  if (v.name !== undefined) {
    if (typeof v.name === 'string') out.name = v.name;
    else ck.add(`${where} name should be a string`);
  }
  if (v.untracked !== undefined) {
    if (typeof v.untracked === 'boolean') out.untracked = v.untracked;
    else ck.add(`${where} untracked should be a boolean value`);
  }
  for (const key of ['paths', 'exclude'] as const) {
    if (v[key] === undefined) continue;
    if (isStringArray(v[key])) out[key] = v[key] as string[];
    else ck.add(`${where} ${key} should be an array of strings`);
  }
  if (v.when !== undefined) {
    if (v.when === 'on_success' || v.when === 'on_failure' || v.when === 'always') out.when = v.when;
    else ck.add(`${where} when should be on_success, on_failure or always`);
  }
  if (v.expire_in !== undefined) {
    const text = scalarString(v.expire_in);
    if (text !== null && (text.trim().toLowerCase() === 'never' || parseDuration(text) !== null)) out.expire_in = text;
    else ck.add(`${where} expire in should be a duration`);
  }
  if (v.reports !== undefined) {
    if (!isDict(v.reports)) ck.add(`${where}:reports config should be a hash`);
    else {
      const reports: Record<string, string[]> = {};
      for (const [k, r] of Object.entries(v.reports)) {
        if (typeof r === 'string') reports[k] = [r];
        else if (isStringArray(r)) reports[k] = r;
        else if (isDict(r)) reports[k] = [];
        else ck.add(`${where}:reports ${k} should be an array of strings or a string`);
      }
      out.reports = reports;
    }
  }
  return out;
}

function environmentEntry(ck: Checker, where: string, v: unknown): JobOptions['environment'] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') {
    if (!v.trim()) ck.add(`${where} name can't be blank`);
    return { name: v, action: 'start' };
  }
  if (!isDict(v)) {
    ck.add(`${where} config should be a hash or a string`);
    return undefined;
  }
  ck.unknownKeys(where, v, ENV_KEYS);
  if (typeof v.name !== 'string' || !v.name.trim()) {
    ck.add(`${where} name can't be blank`);
    return undefined;
  }
  const action = v.action === undefined ? 'start' : v.action;
  if (typeof action !== 'string' || !ENV_ACTIONS.includes(action)) ck.add(`${where} action should be start, stop, prepare, verify, or access`);
  if (v.url !== undefined && typeof v.url !== 'string') ck.add(`${where} url should be a string`);
  return { name: v.name, ...(typeof v.url === 'string' ? { url: v.url } : {}), action: String(action) };
}

function needsEntry(ck: Checker, where: string, v: unknown): NonNullable<JobOptions['needs']> | undefined {
  if (v === undefined || v === null) return v === null ? [] : undefined;
  const list = Array.isArray(v) ? v : [v];
  const out: NonNullable<JobOptions['needs']> = [];
  for (const n of list) {
    if (typeof n === 'string') out.push({ job: n, artifacts: true });
    else if (isDict(n)) {
      ck.unknownKeys(`${where}:need`, n, NEED_KEYS);
      if ('pipeline' in n || 'project' in n) {
        ck.add(`${where}:need cross-pipeline needs are not supported`);
        continue;
      }
      if (typeof n.job !== 'string') {
        ck.add(`${where}:need job should be a string`);
        continue;
      }
      if (n.artifacts !== undefined && typeof n.artifacts !== 'boolean') ck.add(`${where}:need artifacts should be a boolean value`);
      if (n.optional !== undefined && typeof n.optional !== 'boolean') ck.add(`${where}:need optional should be a boolean value`);
      out.push({ job: n.job, artifacts: n.artifacts !== false, ...(n.optional === true ? { optional: true } : {}) });
    } else ck.add(`${where}:need has an unsupported type`);
  }
  if (out.length > MAX_NEEDS) ck.add(`${where} config must be less than or equal to ${MAX_NEEDS}`);
  return out;
}

function ruleList(ck: Checker, where: string, v: unknown, keys: string[], whens: string[]): CiRule[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) {
    ck.add(`${where} config should be an array of hashes`);
    return null;
  }
  const out: CiRule[] = [];
  const flat = v.flat(MAX_NESTING) as unknown[];
  for (const r of flat) {
    const w = `${where}:rule`;
    if (!isDict(r)) {
      ck.add(`${w} config should be a hash`);
      continue;
    }
    ck.unknownKeys(w, r, keys);
    const rule: CiRule = {};
    if (r.if !== undefined) {
      if (typeof r.if !== 'string') ck.add(`${w} if should be a string`);
      else if (!validExpression(r.if)) ck.add(`${w} if invalid expression syntax`);
      else rule.if = r.if;
    }
    if (r.changes !== undefined) rule.changes = r.changes;
    if (r.exists !== undefined) {
      const ex =
        typeof r.exists === 'string'
          ? [r.exists]
          : isStringArray(r.exists)
            ? r.exists
            : isDict(r.exists) && isStringArray(r.exists.paths)
              ? r.exists.paths
              : null;
      if (ex) rule.exists = ex;
      else ck.add(`${w}:exists config should be an array of strings`);
    }
    if (r.when !== undefined) {
      if (typeof r.when !== 'string' || !whens.includes(r.when)) ck.add(`${w} when unknown value: ${String(r.when)}`);
      else rule.when = r.when;
    }
    if (r.start_in !== undefined) {
      if (parseDuration(r.start_in) === null) ck.add(`${w} start in should be a duration`);
      else rule.start_in = String(r.start_in);
    }
    if (r.allow_failure !== undefined) {
      if (typeof r.allow_failure !== 'boolean') ck.add(`${w} allow_failure should be a boolean value`);
      else rule.allow_failure = r.allow_failure;
    }
    if (r.variables !== undefined) rule.variables = variablesEntry(ck, `${w}:variables`, r.variables);
    out.push(rule);
  }
  return out;
}

function policyEntry(ck: Checker, where: string, v: unknown): CiPolicy | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || isStringArray(v)) return { refs: typeof v === 'string' ? [v] : v };
  if (!isDict(v)) {
    ck.add(`${where} has to be either an array of conditions or a hash`);
    return null;
  }
  ck.unknownKeys(where, v, POLICY_KEYS);
  const out: CiPolicy = {};
  if (v.refs !== undefined) {
    if (isStringArray(v.refs)) out.refs = v.refs;
    else ck.add(`${where}:refs config should be an array of strings or regular expressions`);
  }
  if (v.variables !== undefined) {
    if (!isStringArray(v.variables)) ck.add(`${where}:variables config should be an array of valid expressions`);
    else if (!v.variables.every(validExpression)) ck.add(`${where}:variables config should be an array of valid expressions`);
    else out.variables = v.variables;
  }
  if (v.changes !== undefined) out.changes = v.changes;
  return out;
}

function triggerEntry(ck: Checker, where: string, v: unknown): JobOptions['trigger'] | undefined {
  if (typeof v === 'string') {
    ck.add(`${where} multi-project pipelines are not supported (trigger: ${v})`);
    return undefined;
  }
  if (!isDict(v)) {
    ck.add(`${where} config should be a hash or a string`);
    return undefined;
  }
  ck.unknownKeys(where, v, TRIGGER_KEYS);
  if (v.project !== undefined) {
    ck.add(`${where} multi-project pipelines are not supported (trigger: project)`);
    return undefined;
  }
  if (v.include === undefined) {
    ck.add(`${where} config must specify either project or include`);
    return undefined;
  }
  const out: NonNullable<JobOptions['trigger']> = {};
  const list = Array.isArray(v.include) ? v.include : [v.include];
  const include: { local: string }[] = [];
  for (const inc of list) {
    if (typeof inc === 'string') include.push({ local: inc });
    else if (isDict(inc) && typeof inc.local === 'string' && Object.keys(inc).length === 1) include.push({ local: inc.local });
    else if (isDict(inc) && ('template' in inc || 'artifact' in inc || 'project' in inc || 'remote' in inc || 'component' in inc)) {
      ck.add(`${where}:include only local includes are supported`);
    } else ck.add(`${where}:include config must be a string, an array of strings or hashes with local`);
  }
  if (include.length > 3) ck.add(`${where}:include config must be less than or equal to 3`);
  out.include = include;
  if (v.strategy !== undefined) {
    if (v.strategy !== 'depend') ck.add(`${where} strategy should be depend`);
    else out.strategy = 'depend';
  }
  if (v.forward !== undefined) {
    if (!isDict(v.forward)) ck.add(`${where}:forward config should be a hash`);
    else {
      ck.unknownKeys(`${where}:forward`, v.forward, ['yaml_variables', 'pipeline_variables']);
      out.forward = {
        ...(typeof v.forward.yaml_variables === 'boolean' ? { yaml_variables: v.forward.yaml_variables } : {}),
        ...(typeof v.forward.pipeline_variables === 'boolean' ? { pipeline_variables: v.forward.pipeline_variables } : {}),
      };
    }
  }
  return out;
}

function retryEntry(ck: Checker, where: string, v: unknown): JobOptions['retry'] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0 || v > 2) {
      ck.add(`${where} config must be a non negative integer less than or equal to 2`);
      return undefined;
    }
    return { max: v };
  }
  if (!isDict(v)) {
    ck.add(`${where} config has to be either an integer or a hash`);
    return undefined;
  }
  ck.unknownKeys(where, v, ['max', 'when', 'exit_codes']);
  const max = v.max === undefined ? 0 : v.max;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 0 || max > 2)
    ck.add(`${where} max config must be a non negative integer less than or equal to 2`);
  const when = typeof v.when === 'string' ? [v.when] : v.when;
  if (when !== undefined && (!isStringArray(when) || !when.every((w) => RETRY_WHEN.includes(w))))
    ck.add(`${where} when should be one of: ${RETRY_WHEN.join(', ')}`);
  return { max: Number(max), ...(isStringArray(when) ? { when } : {}) };
}

function inheritEntry(ck: Checker, where: string, v: unknown): { default: boolean | string[]; variables: boolean | string[] } {
  const out = { default: true as boolean | string[], variables: true as boolean | string[] };
  if (v === undefined || v === null) return out;
  if (!isDict(v)) {
    ck.add(`${where} config should be a hash`);
    return out;
  }
  ck.unknownKeys(where, v, ['default', 'variables']);
  for (const k of ['default', 'variables'] as const) {
    if (v[k] === undefined) continue;
    if (typeof v[k] === 'boolean' || isStringArray(v[k])) out[k] = v[k] as boolean | string[];
    else ck.add(`${where}:${k} config should be a boolean value or an array of strings`);
  }
  return out;
}

interface Defaults {
  image?: JobOptions['image'];
  services?: JobOptions['services'];
  before_script?: string[];
  after_script?: string[];
  tags?: string[];
  artifacts?: JobOptions['artifacts'];
  retry?: JobOptions['retry'];
  timeout?: number;
  cache?: unknown[];
}

function cacheEntry(v: unknown): unknown[] | undefined {
  if (v === undefined || v === null) return undefined;
  return Array.isArray(v) ? v : [v];
}

function timeoutEntry(ck: Checker, where: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  const s = parseDuration(v);
  if (s === null || s <= 0) {
    ck.add(`${where} config should be a duration`);
    return undefined;
  }
  if (s > 2_592_000) ck.add(`${where} config should not exceed the limit`);
  return s;
}

function defaultsOf(ck: Checker, root: Dict): Defaults {
  const d: Defaults = {};
  const def = root.default;
  if (def !== undefined && def !== null && !isDict(def)) ck.add('default config should be a hash');
  const dd = isDict(def) ? def : {};
  ck.unknownKeys('default', dd, DEFAULT_KEYS);
  // the deprecated global keywords are defaults too; `default:` wins
  d.image = imageEntry(ck, 'default:image', dd.image) ?? imageEntry(ck, 'image', root.image);
  d.services = servicesEntry(ck, 'default:services', dd.services) ?? servicesEntry(ck, 'services', root.services);
  d.before_script = scriptEntry(ck, 'default:before_script', dd.before_script) ?? scriptEntry(ck, 'before_script', root.before_script);
  d.after_script = scriptEntry(ck, 'default:after_script', dd.after_script) ?? scriptEntry(ck, 'after_script', root.after_script);
  d.tags = tagsEntry(ck, 'default:tags', dd.tags);
  d.artifacts = artifactsEntry(ck, 'default:artifacts', dd.artifacts);
  d.retry = retryEntry(ck, 'default:retry', dd.retry);
  d.timeout = timeoutEntry(ck, 'default:timeout', dd.timeout);
  d.cache = cacheEntry(dd.cache) ?? cacheEntry(root.cache);
  return d;
}

const inherits = (spec: boolean | string[], key: string) => (Array.isArray(spec) ? spec.includes(key) : spec);

function coverageEntry(ck: Checker, where: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !/^\/.*\/$/s.test(v)) {
    ck.add(`${where} config must be a regular expression`);
    return undefined;
  }
  try {
    new RegExp(v.slice(1, -1));
  } catch {
    ck.add(`${where} config must be a regular expression`);
    return undefined;
  }
  return v;
}

/** Entry::Product::Parallel: an integer (2..200) or `matrix:` (every combination, at most 200). */
function parallelEntry(ck: Checker, where: string, v: unknown): CiJobSpec['parallel'] {
  if (v === undefined || v === null) return null;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) ck.add(`${where} config should be an integer or a hash`);
    else if (v < 1) ck.add(`${where} config must be greater than or equal to 1`);
    else if (v > MAX_PARALLEL) ck.add(`${where} config must be less than or equal to ${MAX_PARALLEL}`);
    else return { total: v, matrix: null };
    return null;
  }
  if (!isDict(v)) {
    ck.add(`${where} config should be an integer or a hash`);
    return null;
  }
  ck.unknownKeys(where, v, ['matrix']);
  if (!Array.isArray(v.matrix) || !v.matrix.length) {
    ck.add(`${where}:matrix config should be an array of hashes`);
    return null;
  }
  // Entry::Product::Matrix: the number of jobs (the sum over entries of the product of their
  // value counts) is checked before a single combination is built
  const entries: [string, string[]][][] = [];
  let total = 0;
  for (const entry of v.matrix) {
    if (!isDict(entry)) {
      ck.add(`${where}:matrix config should be an array of hashes`);
      return null;
    }
    const vars: [string, string[]][] = [];
    let product = 1;
    for (const [key, raw] of Object.entries(entry)) {
      const values = Array.isArray(raw) ? raw.map(scalarString) : [scalarString(raw)];
      if (values.some((x) => x === null) || !values.length) {
        ck.add(`${where}:matrix:variables config should be a hash of key value pairs`);
        return null;
      }
      vars.push([key, values as string[]]);
      product *= values.length;
    }
    entries.push(vars);
    total += product;
  }
  if (total > MAX_PARALLEL) {
    ck.add(`${where}:matrix config generates too many jobs (maximum is ${MAX_PARALLEL})`);
    return null;
  }
  const combos: Record<string, string>[] = [];
  for (const vars of entries) {
    let partial: Record<string, string>[] = [{}];
    for (const [key, values] of vars) partial = partial.flatMap((c) => values.map((x) => ({ ...c, [key]: x })));
    combos.push(...partial);
  }
  return { total: combos.length, matrix: combos };
}

/** One job per parallel instance ("name 1/3", "name: [a, b]"); the names each job name became. */
function expandParallel(jobs: CiJobSpec[]): { jobs: CiJobSpec[]; instances: Map<string, string[]> } {
  const out: CiJobSpec[] = [];
  const instances = new Map<string, string[]>();
  for (const j of jobs) {
    if (!j.parallel) {
      out.push(j);
      continue;
    }
    const { total, matrix } = j.parallel;
    const names: string[] = [];
    for (let i = 0; i < total; i++) {
      const vars = matrix ? matrix[i] : {};
      const name = matrix ? `${j.name}: [${Object.values(vars).join(', ')}]` : `${j.name} ${i + 1}/${total}`;
      names.push(name);
      out.push({
        ...j,
        name,
        parallel: null,
        options: { ...j.options },
        variables: { ...j.variables, ...vars, CI_NODE_INDEX: String(i + 1), CI_NODE_TOTAL: String(total) },
      });
    }
    instances.set(j.name, names);
  }
  // needs and dependencies on a parallel job mean every one of its instances
  for (const j of out) {
    if (j.options.needs) j.options.needs = j.options.needs.flatMap((n) => (instances.get(n.job) ?? [n.job]).map((job) => ({ ...n, job })));
    if (j.options.dependencies) j.options.dependencies = j.options.dependencies.flatMap((d) => instances.get(d) ?? [d]);
  }
  return { jobs: out, instances };
}

function jobEntry(ck: Checker, name: string, job: Dict, d: Defaults, hasWorkflowRules: boolean): CiJobSpec | null {
  const where = `jobs:${name}`;
  const bridge = !('script' in job) && 'trigger' in job;
  ck.unknownKeys(where, job, bridge ? BRIDGE_KEYS : JOB_KEYS);
  if (name.length > 255) ck.add(`${where} name is too long (maximum is 255 characters)`);
  const inherit = inheritEntry(ck, `${where}:inherit`, job.inherit);
  const def = (key: keyof Defaults) => (inherits(inherit.default, key) ? d[key] : undefined);

  let stage = 'test';
  const rawStage = job.stage ?? job.type;
  if (rawStage !== undefined && rawStage !== null) {
    if (typeof rawStage !== 'string') ck.add(`${where}:stage config should be a string`);
    else stage = rawStage;
  }

  const whens = bridge ? BRIDGE_WHEN : JOB_WHEN;
  let when = 'on_success';
  if (job.when !== undefined && job.when !== null) {
    if (typeof job.when !== 'string' || !whens.includes(job.when)) ck.add(`${where} when should be one of: ${whens.join(', ')}`);
    else when = job.when;
  }

  let allowFailure: boolean | null = null;
  if (job.allow_failure !== undefined && job.allow_failure !== null) {
    if (typeof job.allow_failure === 'boolean') allowFailure = job.allow_failure;
    else if (isDict(job.allow_failure))
      allowFailure = false; // exit_codes: failed unless the code is listed
    else ck.add(`${where} allow_failure should be a hash or a boolean value`);
  }

  const rules = ruleList(ck, `${where}:rules`, job.rules, RULE_KEYS, RULE_WHEN);
  if (rules !== null) {
    const clash = ['only', 'except', 'start_in'].filter((k) => job[k] !== undefined && job[k] !== null);
    if (clash.length) ck.add(`${where} config key may not be used with \`rules\`: ${clash.join(', ')}`);
  }
  // Processable#validate_against_warnings
  const lastRule = Array.isArray(job.rules) ? (job.rules as unknown[]).at(-1) : undefined;
  if (!hasWorkflowRules && rules !== null && isDict(lastRule) && Object.keys(lastRule).join() === 'when' && lastRule.when !== 'never') {
    ck.warnings.push(
      `${where} may allow multiple pipelines to run for a single action due to \`rules:when\` clause with no \`workflow:rules\` - read more: https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-warnings`,
    );
  }
  let only = policyEntry(ck, `${where}:only`, job.only);
  const except = policyEntry(ck, `${where}:except`, job.except);
  if (!only && rules === null && !hasWorkflowRules) only = { refs: ['branches', 'tags'] };

  const options: JobOptions = {};
  let start_in: string | undefined;
  if (when === 'delayed') {
    const s = parseDuration(job.start_in);
    if (job.start_in === undefined || s === null) ck.add(`${where} start in should be a duration`);
    else if (s > 604_800) ck.add(`${where} start in should not exceed the limit`);
    else start_in = String(job.start_in);
  } else if (job.start_in !== undefined && rules === null) ck.add(`${where} start in must be blank`);

  if (bridge) {
    const trigger = triggerEntry(ck, `${where}:trigger`, job.trigger);
    if (trigger) options.trigger = trigger;
  } else {
    const script = scriptEntry(ck, `${where}:script`, job.script);
    if (script && !script.length) ck.add(`${where} script can't be blank`);
    if (script) options.script = script;
    const before = 'before_script' in job ? scriptEntry(ck, `${where}:before_script`, job.before_script) : def('before_script');
    if (before) options.before_script = before as string[];
    const after = 'after_script' in job ? scriptEntry(ck, `${where}:after_script`, job.after_script) : def('after_script');
    if (after) options.after_script = after as string[];
    const image = 'image' in job ? imageEntry(ck, `${where}:image`, job.image) : def('image');
    if (image) options.image = image as JobOptions['image'];
    const services = 'services' in job ? servicesEntry(ck, `${where}:services`, job.services) : def('services');
    if (services) options.services = services as JobOptions['services'];
    const artifacts = 'artifacts' in job ? artifactsEntry(ck, `${where}:artifacts`, job.artifacts) : def('artifacts');
    if (artifacts) options.artifacts = artifacts as JobOptions['artifacts'];
    if (job.dependencies !== undefined && job.dependencies !== null) {
      if (isStringArray(job.dependencies)) options.dependencies = [...new Set(job.dependencies)];
      else ck.add(`${where} dependencies should be an array of strings`);
    }
    const coverage = coverageEntry(ck, `${where}:coverage`, job.coverage);
    if (coverage) options.coverage = coverage;
    const timeout = 'timeout' in job ? timeoutEntry(ck, `${where}:timeout`, job.timeout) : def('timeout');
    if (timeout) options.timeout = timeout as number;
    const retry = 'retry' in job ? retryEntry(ck, `${where}:retry`, job.retry) : def('retry');
    if (retry) options.retry = retry as JobOptions['retry'];
    const cache = 'cache' in job ? cacheEntry(job.cache) : def('cache');
    if (cache) options.cache = cache as unknown[];
    if (start_in) options.start_in = start_in;
  }
  const env = environmentEntry(ck, `${where}:environment`, job.environment);
  if (env) options.environment = env;
  const needs = 'needs' in job ? needsEntry(ck, `${where}:needs`, job.needs) : undefined;
  if (needs) options.needs = needs;
  if (options.dependencies && needs) {
    const missing = options.dependencies.filter((dep) => !needs.some((n) => n.job === dep));
    if (missing.length) ck.add(`${where} dependencies the ${missing.join(', ')} should be part of needs`);
  }
  const tags = 'tags' in job ? tagsEntry(ck, `${where}:tags`, job.tags) : (def('tags') as string[] | undefined);
  if (job.resource_group !== undefined && typeof job.resource_group !== 'string') ck.add(`${where} resource group should be a string`);
  if (job.extends !== undefined) ck.add(`${where} extends should be an array of strings or a string`);

  return {
    name,
    stage,
    stageIdx: 0,
    type: bridge ? 'bridge' : 'build',
    options,
    when,
    allowFailure,
    tags: tags ?? [],
    variables: variablesEntry(ck, `${where}:variables`, job.variables),
    inheritVariables: inherit.variables,
    environment: env?.name ?? null,
    parallel: parallelEntry(ck, `${where}:parallel`, job.parallel),
    rules,
    only,
    except,
  };
}

/** Validates and normalises a configuration already merged (includes and extends applied). */
function compose(ck: Checker, root: Dict): Omit<CiConfig, 'merged' | 'includes'> | null {
  const jobsConfig: [string, unknown][] = [];
  for (const [key, value] of Object.entries(root)) if (!ROOT_KEYS.includes(key)) jobsConfig.push([key, value]);

  let stages = DEFAULT_STAGES;
  if (root.stages !== undefined && root.stages !== null) {
    if (!isStringArray(root.stages)) ck.add('stages config should be an array of strings');
    else stages = root.stages;
  }
  const allStages = [...(stages.includes('.pre') ? [] : ['.pre']), ...stages, ...(stages.includes('.post') ? [] : ['.post'])];

  const variables = variablesEntry(ck, 'variables', root.variables);
  let workflowRules: CiRule[] | null = null;
  let workflowName: string | null = null;
  if (root.workflow !== undefined && root.workflow !== null) {
    if (!isDict(root.workflow)) ck.add('workflow config should be a hash');
    else {
      ck.unknownKeys('workflow', root.workflow, ['rules', 'name', 'auto_cancel']);
      workflowRules = ruleList(ck, 'workflow:rules', root.workflow.rules, WORKFLOW_RULE_KEYS, ['always', 'never']);
      if (root.workflow.name !== undefined) {
        if (typeof root.workflow.name !== 'string' || root.workflow.name.length > 255) ck.add('workflow name should be a string of at most 255 characters');
        else workflowName = root.workflow.name;
      }
    }
  }
  const defaults = defaultsOf(ck, root);

  const visible = jobsConfig.filter(([name]) => !name.startsWith('.'));
  if (!visible.length) ck.add('jobs config should contain at least one visible job');
  const jobs: CiJobSpec[] = [];
  for (const [name, value] of visible) {
    if (!isDict(value) || (!('script' in value) && !('trigger' in value))) {
      ck.add(`jobs ${name} config should implement the script:, run:, or trigger: keyword`);
      continue;
    }
    const spec = jobEntry(ck, name, value, defaults, workflowRules !== null);
    if (spec) jobs.push(spec);
  }
  if (ck.errors.length) return null;

  // YamlProcessor's checks across jobs
  const byName = new Map(jobs.map((j) => [j.name, j]));
  for (const j of jobs) {
    const idx = allStages.indexOf(j.stage);
    if (idx < 0) ck.add(`${j.name} job: chosen stage does not exist; available stages are ${allStages.join(', ')}`);
    j.stageIdx = idx;
  }
  if (ck.errors.length) return null;
  for (const j of jobs) {
    for (const n of j.options.needs ?? []) {
      const other = byName.get(n.job);
      if (!other) {
        if (!n.optional) ck.add(`${j.name} job: undefined need: ${n.job}`);
      } else if (other.stageIdx > j.stageIdx) ck.add(`${j.name} job: need ${n.job} is not defined in current or prior stages`);
    }
    for (const dep of j.options.dependencies ?? []) {
      const other = byName.get(dep);
      if (!other) ck.add(`${j.name} job: undefined dependency: ${dep}`);
      else if (other.stageIdx > j.stageIdx) ck.add(`${j.name} job: dependency ${dep} is not defined in current or prior stages`);
    }
  }
  if (ck.errors.length) return null;
  // what `parallel` makes of the jobs, counted before it is built
  const instances = (name: string) => byName.get(name)?.parallel?.total ?? 1;
  const size = jobs.reduce((n, j) => n + instances(j.name), 0);
  if (size > MAX_PIPELINE_JOBS) {
    ck.add(
      `The number of jobs has exceeded the limit of ${MAX_PIPELINE_JOBS}. Try splitting the configuration with parent-child-pipelines https://docs.gitlab.com/ee/ci/troubleshooting.html#pipeline-with-many-jobs-fails-to-start`,
    );
    return null;
  }
  for (const j of jobs) {
    const needs = (j.options.needs ?? []).reduce((n, need) => n + instances(need.job), 0);
    if (needs > MAX_NEEDS) {
      ck.add(`${j.name}: one job can only need ${MAX_NEEDS} others, but you have listed ${needs}. See needs keyword documentation for more details`);
    }
  }
  if (ck.errors.length) return null;
  const expanded = expandParallel(jobs).jobs;
  // GitLab's order: by stage, then as written
  expanded.sort((a, b) => a.stageIdx - b.stageIdx);
  return { stages: allStages, variables, workflowRules, workflowName, jobs: expanded };
}

/**
 * Parses a CI file: `read` gives the files `include: local` names (null: includes are refused as
 * missing). Never throws for a bad file: the errors come back (GitLab's messages).
 */
export async function parseCiConfig(content: string, read: ReadFile | null): Promise<ParseResult> {
  const ck = new Checker();
  const includes: CiInclude[] = [];
  let merged: Dict | null = null;
  try {
    const { data, size } = loadSized(content);
    if (!isDict(data)) throw new ConfigError('Invalid configuration format');
    const budget: Budget = { size: 0 };
    spend(budget, size);
    const expanded = await expandIncludes(data, read, new Set(), budget, includes);
    const extended = resolveExtends(expanded, budget);
    // what lint shows and what jobs carry: bounded with every shared value counted where it is used
    deepSize(extended, MAX_TOTAL_YAML_SIZE, TOTAL_TOO_BIG);
    merged = extended;
    const composed = compose(ck, merged);
    if (!composed) return { config: null, errors: ck.errors, warnings: ck.warnings, merged, includes };
    return { config: { ...composed, includes }, errors: [], warnings: ck.warnings, merged, includes };
  } catch (e) {
    if (e instanceof ConfigError) return { config: null, errors: [e.message], warnings: [], merged, includes };
    throw e;
  }
}

/** The merged configuration as lint's merged_yaml shows it. */
export function mergedYaml(merged: Dict | null): string {
  if (!merged) return '';
  return `---\n${stringify(merged, { version: '1.1', aliasDuplicateObjects: false })}`;
}
