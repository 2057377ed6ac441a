// The web interface's static assets: one stylesheet and one script, each the concatenation of its parts
// (Primer's design tokens and CSS, the diff and highlighting themes, then every `src/web/assets/*.css`
// or `*.js` in name order), named by a content hash and compressed once at start-up. Served at
// `/-/assets/<name>-<hash>.<ext>` with a year's immutable caching: a change is a new URL.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const require = createRequire(import.meta.url);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const OWN = path.join(HERE, 'assets');

export interface Asset {
  name: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
  br: Buffer;
  etag: string;
}

function pkgFile(spec: string): string {
  return require.resolve(spec);
}

/** The parts of the stylesheet that come from packages, in cascade order. */
const CSS_PARTS = [
  '@primer/primitives/dist/css/base/size/size.css',
  '@primer/primitives/dist/css/base/typography/typography.css',
  '@primer/primitives/dist/css/functional/size/size.css',
  '@primer/primitives/dist/css/functional/size/border.css',
  '@primer/primitives/dist/css/functional/size/breakpoints.css',
  '@primer/primitives/dist/css/functional/typography/typography.css',
  '@primer/primitives/dist/css/functional/themes/light.css',
  // Primer CSS 21: the last major with the components a forge needs (Box, UnderlineNav, flash, State,
  // Progress, Subhead, FormControl …); 22 moved them to Primer's component libraries
  '@primer/css/dist/core.css',
  '@primer/css/dist/product.css',
  'highlight.js/styles/github.css',
  'diff2html/bundles/css/diff2html.min.css',
];

const JS_PARTS = ['htmx.org/dist/htmx.min.js'];

function own(ext: string): string[] {
  if (!fs.existsSync(OWN)) return [];
  return fs
    .readdirSync(OWN)
    .filter((f) => f.endsWith(ext))
    .sort()
    .map((f) => path.join(OWN, f));
}

function build(name: string, ext: 'css' | 'js', files: string[]): Asset {
  const parts = files.map((f) => {
    // source maps are not shipped; their comments would make browsers ask for them
    const text = fs.readFileSync(f, 'utf8').replace(/\/[*/]# sourceMappingURL=\S+\s*(\*\/)?/g, '');
    return ext === 'js' ? `${text};\n` : `${text}\n`;
  });
  const body = Buffer.from(parts.join(''));
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 16);
  return {
    name: `${name}-${hash}.${ext}`,
    type: ext === 'css' ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8',
    body,
    gzip: zlib.gzipSync(body, { level: 9 }),
    br: zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
    etag: `"${hash}"`,
  };
}

export interface AssetBundle {
  css: Asset;
  js: Asset;
  byName: Map<string, Asset>;
}

let bundle: AssetBundle | null = null;

/** Built once per process (a few hundred milliseconds; `hearth serve` builds them before it listens). */
export function assets(): AssetBundle {
  if (bundle) return bundle;
  const css = build('app', 'css', [...CSS_PARTS.map(pkgFile), ...own('.css')]);
  const js = build('app', 'js', [...JS_PARTS.map(pkgFile), ...own('.js')]);
  bundle = { css, js, byName: new Map([css, js].map((a) => [a.name, a])) };
  return bundle;
}
