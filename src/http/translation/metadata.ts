// What the translation API says about its own endpoints (reference §9): the DRF view name and
// description of every path (declared by the route in `config.view`, or derived from its URL the way
// DRF names viewsets), the breadcrumbs of the browsable API, and OPTIONS answered with DRF's
// SimpleMetadata on every translation path without each route registering it.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import FindMyWay from 'find-my-way';
import { Errors } from '../../lib/errors.ts';

/** One serializer field as SimpleMetadata describes it (get_field_info). */
export interface DrfField {
  type: string;
  required: boolean;
  read_only: boolean;
  label: string;
  help_text?: string;
  min_length?: number;
  max_length?: number;
  min_value?: number;
  max_value?: number;
  choices?: { value: unknown; display_name: string }[];
  child?: Omit<DrfField, 'required'> & { required?: boolean };
  children?: Record<string, DrfField>;
}

/** The write forms OPTIONS shows an authenticated caller: serializer fields per method. */
export interface DrfActions {
  POST?: Record<string, DrfField>;
  PUT?: Record<string, DrfField>;
}

export interface DrfView {
  /** DRF get_view_name: "Project List", "Project Instance", "Statistics" … */
  name?: string;
  /** the viewset's docstring, plain text */
  description?: string;
  actions?: DrfActions;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** translation API: the view name/description of the browsable API and OPTIONS (metadata.ts) */
    view?: DrfView;
    /** a raw download (file, zip): left alone by the browsable API, handles `?format=` itself */
    raw?: boolean;
  }
}

export const RENDERS = ['application/json', 'text/html'] as const;
export const PARSES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'] as const;

/** The viewsets' docstrings (weblate/api/views.py), by the first segment after /api/; DRF's own for the root. */
const DESCRIPTIONS: Record<string, string> = {
  '': 'The default basic root view for DefaultRouter',
  users: 'Users API.',
  groups: 'Groups API.',
  roles: 'Roles API.',
  projects: 'Translation projects API.',
  components: 'Translation components API.',
  translations: 'Translation components API.',
  memory: 'Memory API.',
  languages: 'Languages API.',
  'component-lists': 'Component lists API.',
  changes: 'Changes API.',
  units: 'Units API.',
  screenshots: 'Screenshots API.',
  addons: 'Add-ons API.',
  categories: 'Categories API.',
};

const isParam = (segment: string) => segment.startsWith(':') || segment.includes('*');
const words = (s: string) => s.split(/[-_]+/).filter(Boolean);
const title = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
/** "projects" → "Project", "categories" → "Category", "component-lists" → "Component List" (the ViewSet class name). */
function singular(segment: string): string {
  const ws = words(segment);
  const last = ws.pop() ?? '';
  const one = /ies$/.test(last) ? last.slice(0, -3) + 'y' : /[^s]s$/.test(last) ? last.slice(0, -1) : last;
  return [...ws, one].map(title).join(' ');
}
/** Django pretty_name of an extra action: "machinery_settings" → "Machinery settings". */
function prettyName(segment: string): string {
  const s = words(segment).join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
}

/** The name and description DRF would give the view serving `url` (a route pattern such as /api/projects/:slug/). */
export function derivedView(url: string): { name: string; description: string } {
  const segments = url.split('?')[0].split('/').filter(Boolean).slice(1); // without "api"
  const description = DESCRIPTIONS[segments[0] && !isParam(segments[0]) ? segments[0] : ''] ?? '';
  const statics = segments.filter((s) => !isParam(s));
  if (!statics.length) return { name: 'Api Root', description: DESCRIPTIONS[''] };
  const last = segments[segments.length - 1];
  if (isParam(last)) return { name: `${singular(statics[statics.length - 1])} Instance`, description };
  if (segments.length === 1) return { name: `${singular(last)} List`, description };
  return { name: prettyName(last), description };
}

/**
 * The key of a path under `ignoreTrailingSlash`, whatever its parameters are called: route files may
 * name them differently (`:id`, `:unit`) and still serve one path.
 */
const keyOf = (url: string) => url.replace(/\/+$/, '').replace(/:[^/]+/g, ':') || '/';

const DRF_METHOD_ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
/** The methods a DRF view dispatches; those a path does not serve answer 405 after authentication. */
const DISPATCHED = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const FIELD_ORDER = [
  'type',
  'required',
  'read_only',
  'label',
  'help_text',
  'min_length',
  'max_length',
  'min_value',
  'max_value',
  'max_digits',
  'decimal_places',
  'child',
  'children',
  'choices',
];

/** SimpleMetadata's key order for a field (get_field_info), whatever order the route declared it in. */
function fieldInfo(field: DrfField): Record<string, unknown> {
  const src = field as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of FIELD_ORDER)
    if (src[k] !== undefined)
      out[k] = k === 'children' ? fieldsInfo(src[k] as Record<string, DrfField>) : k === 'child' ? fieldInfo(src[k] as DrfField) : src[k];
  for (const [k, v] of Object.entries(src)) if (!(k in out) && v !== undefined) out[k] = v;
  return out;
}
const fieldsInfo = (fields: Record<string, DrfField>) => Object.fromEntries(Object.entries(fields).map(([k, f]) => [k, fieldInfo(f)]));

interface PathEntry {
  /** the pattern as first registered, e.g. /api/languages/:code/ */
  url: string;
  methods: Set<string>;
  /** the routes serving the path (their options objects, read when OPTIONS is registered) */
  routes: RouteOptions[];
  declared: DrfView;
  /** who answers OPTIONS: nobody yet, a route of its own, or ours */
  options: 'none' | 'own' | 'ours';
  /** Allow as last computed, and for how many methods (a route registered later makes it stale) */
  allowMemo?: { methods: number; value: string };
}

/** Every translation path of one app: its methods, declared view and the routes serving it. */
export class DrfViews {
  private readonly paths = new Map<string, PathEntry>();
  /** route pattern → its entry: every request asks, and the patterns are few */
  private readonly byPattern = new Map<string, PathEntry>();
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 1000 });

  /** Records a translation route (from onRoute); returns its path's entry. */
  collect(route: RouteOptions): PathEntry {
    const key = keyOf(route.url ?? '');
    let entry = this.paths.get(key);
    if (!entry) {
      entry = { url: route.url ?? '', methods: new Set(), routes: [], declared: {}, options: 'none' };
      this.paths.set(key, entry);
    }
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (m === 'OPTIONS') {
        entry.options = 'own'; // the route file answers OPTIONS itself
        continue;
      }
      if (m === 'GET' && !entry.methods.has('GET')) {
        try {
          this.router.on('GET', route.url ?? '', () => {}, { key });
        } catch {
          /* the same shape under another parameter name */
        }
      }
      entry.methods.add(m);
    }
    entry.routes.push(route);
    const view = route.config?.view;
    if (view) {
      entry.declared.name ??= view.name;
      entry.declared.description ??= view.description;
      if (view.actions) entry.declared.actions = { ...view.actions, ...entry.declared.actions };
    }
    return entry;
  }

  entry(url: string): PathEntry | undefined {
    const known = this.byPattern.get(url);
    if (known) return known;
    const entry = this.paths.get(keyOf(url));
    if (entry) this.byPattern.set(url, entry);
    return entry;
  }

  entries(): PathEntry[] {
    return [...this.paths.values()];
  }

  /** The view of a route pattern; the route's own `config.view` first, then what the path declares, then DRF's derivation. */
  view(url: string, own?: DrfView): { name: string; description: string } {
    const declared = this.entry(url)?.declared;
    const name = own?.name ?? declared?.name;
    const description = own?.description ?? declared?.description;
    if (name !== undefined && description !== undefined) return { name, description };
    const derived = derivedView(url);
    return { name: name ?? derived.name, description: description ?? derived.description };
  }

  /** DRF's Allow for a path: its methods in DRF's order, HEAD with GET, and OPTIONS. */
  allow(entry: PathEntry): string {
    if (entry.allowMemo?.methods === entry.methods.size) return entry.allowMemo.value;
    const methods = new Set(entry.methods);
    if (methods.has('GET')) methods.add('HEAD');
    methods.add('OPTIONS');
    const value = DRF_METHOD_ORDER.filter((m) => methods.has(m)).join(', ');
    entry.allowMemo = { methods: entry.methods.size, value };
    return value;
  }

  /** DRF get_breadcrumbs: every prefix of the path (ending in /) that a GET translation view serves, with its name. */
  breadcrumbs(path: string): { name: string; path: string }[] {
    const out: { name: string; path: string }[] = [];
    let prefix = '';
    for (const segment of path.split('/').filter(Boolean)) {
      prefix += `/${segment}`;
      const found = this.router.find('GET', `${prefix}/`);
      if (!found) continue;
      const entry = this.paths.get((found.store as { key: string }).key);
      if (entry) out.push({ name: this.view(entry.url).name, path: `${prefix}/` });
    }
    return out;
  }

  /** The OPTIONS body (DRF SimpleMetadata.determine_metadata). */
  metadata(req: FastifyRequest, entry: PathEntry): Record<string, unknown> {
    const { name, description } = this.view(entry.url);
    const body: Record<string, unknown> = { name, description, renders: [...RENDERS], parses: [...PARSES] };
    // IsAuthenticatedOrReadOnly lets any signed-in user see the write forms; Weblate's own checks are not consulted.
    if (req.actor?.user && entry.declared.actions) {
      const actions: Record<string, unknown> = {};
      for (const m of ['POST', 'PUT'] as const) {
        const fields = entry.declared.actions[m];
        if (fields && entry.methods.has(m)) actions[m] = fieldsInfo(fields);
      }
      if (Object.keys(actions).length) body.actions = actions;
    }
    return body;
  }
}

const asArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * OPTIONS on every translation path, the methods a path does not serve, and its Allow header.
 *
 * Paths known when the app finishes registering get their OPTIONS route then (so a route file may
 * still register its own OPTIONS); a path first seen after that gets it at once. The OPTIONS route runs
 * the path's own onRequest hooks (drfHeaders: Vary and Allow).
 *
 * DRF's order (APIView.initial, then dispatch): authentication and permission classes come before the
 * method, so an unsafe method a path does not serve answers 401 (`WWW-Authenticate: Token`) to an
 * anonymous caller (IsAuthenticatedOrReadOnly) and 405 only to an authenticated one; a safe method it
 * does not serve is 405 for everyone. Each such method of a known path gets a route answering so.
 *
 * Allow is DRF's `allowed_methods`: the methods the path's routes serve, read when the request comes
 * (so a route registered later counts), set after the route's own onRequest hooks, errors included.
 */
export function drfOptions(app: FastifyInstance, views: DrfViews): (instance: FastifyInstance, route: RouteOptions) => void {
  let settled = false;

  const allowFor = (req: FastifyRequest): string | null => {
    const entry = views.entry(req.routeOptions.url ?? '');
    return entry?.methods.size ? views.allow(entry) : null;
  };
  const setAllow = function drfAllow(req: FastifyRequest, reply: FastifyReply, done: () => void) {
    const allow = allowFor(req);
    if (allow) reply.header('allow', allow);
    done();
  };

  const setVary = function drfVary(_req: FastifyRequest, reply: FastifyReply, done: () => void) {
    reply.header('vary', 'Accept');
    done();
  };

  const handler = async function drfOptionsHandler(req: FastifyRequest, reply: FastifyReply) {
    const entry = views.entry(req.routeOptions.url ?? '');
    if (!entry)
      return reply
        .code(404)
        .type('application/json')
        .send(JSON.stringify({ detail: 'Not found.' }));
    if (reply.getHeader('allow') === undefined) reply.header('allow', views.allow(entry));
    if (reply.getHeader('vary') === undefined) reply.header('vary', 'Accept');
    return reply.type('application/json').send(JSON.stringify(views.metadata(req, entry)));
  };

  /** A method the path does not serve, after authentication (DRF http_method_not_allowed). */
  const notAllowed = async function drfMethodNotAllowed(req: FastifyRequest, reply: FastifyReply) {
    if (!SAFE.has(req.method) && !req.actor?.user) throw Errors.unauthorized();
    return reply
      .code(405)
      .type('application/json')
      .send(JSON.stringify({ detail: `Method "${req.method}" not allowed.` }));
  };
  const ours = new Set<unknown>([handler, notAllowed]);

  const register = (instance: FastifyInstance, entry: PathEntry, url: string) => {
    entry.options = 'ours';
    const source = entry.routes.find((r) => asArray(r.method).includes('GET')) ?? entry.routes[0];
    instance.route({
      method: 'OPTIONS',
      url,
      config: { api: 'translation', auth: 'optional', scopes: ['read_api'] },
      onRequest: asArray(source?.onRequest) as any,
      schema: { hide: true } as any,
      handler,
    });
  };

  const registerNotAllowed = (instance: FastifyInstance, entry: PathEntry) => {
    for (const method of DISPATCHED) {
      if (entry.methods.has(method)) continue;
      instance.route({
        method,
        url: entry.url,
        config: { api: 'translation', auth: 'optional' },
        onRequest: [setAllow, setVary] as any,
        schema: { hide: true } as any,
        handler: notAllowed,
      });
    }
  };

  // Loaded when the app becomes ready, after the routes registered synchronously before it.
  app.register(async function drfOptionsRoutes(instance) {
    const served = views.entries().filter((e) => e.methods.size);
    for (const entry of served) if (entry.options === 'none') register(instance, entry, entry.url);
    // the body of a method not served is never read (DRF parses lazily): no 400 or 415 before the 401/405
    instance.register(async function drfNotAllowedRoutes(inner) {
      inner.removeAllContentTypeParsers();
      inner.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));
      for (const entry of served) registerNotAllowed(inner, entry);
    });
    settled = true;
  });

  /** From onRoute: Allow set for the route; a translation route added after the paths settled gets its OPTIONS now. */
  return (instance, route) => {
    if (ours.has(route.handler)) return;
    route.onRequest = [...(asArray(route.onRequest) as any[]), setAllow];
    const entry = views.collect(route);
    if (settled && entry.options === 'none' && entry.methods.size)
      register(instance, entry, (route as RouteOptions & { routePath?: string }).routePath ?? route.url);
  };
}
