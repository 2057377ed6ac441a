// The site search of translation units (Weblate's /search/?q=…), and the request readers the translation pages
// share with it. The forge's search page (search.pages.ts) answers /search/ with it: the path with the trailing
// slash is Weblate's, the one without GitLab's.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Container } from '../../container.ts';
import { checksum } from '../../domain/translation/units/hash.ts';
import { DomainError, Errors } from '../../lib/errors.ts';
import { urls } from '../../web/views/translation/parts.tsx';
import { type SearchHit, SearchPage } from '../../web/views/translation/translation.tsx';
import { searching } from '../translation/common.ts';
import type { Web } from './web.ts';

const SEARCH_PER_PAGE = 25;

export type Query = Record<string, string | string[] | undefined>;
export const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);

/** `?page=` as a positive integer (1 when absent); anything else is the 404 page. */
export function pageOf(req: FastifyRequest): number {
  const v = one((req.query as Query).page);
  if (v === undefined || v === '') return 1;
  if (!/^[1-9]\d{0,5}$/.test(v)) throw Errors.notFound();
  return Number(v);
}
export const slice = (page: number, size: number) => ({ size, offset: (page - 1) * size });

/** The messages of a refused form: field errors and Weblate's `{"field": "reason"}` bodies alike. */
export function messagesOf(e: unknown): string[] | null {
  if (!(e instanceof DomainError) || e.status >= 500 || e.status === 404 || e.status === 401 || e.status === 403) return null;
  const d = e.detail;
  if (typeof d === 'string') return [d];
  if (d && typeof d === 'object') {
    const out: string[] = [];
    for (const [field, v] of Object.entries(d as Record<string, unknown>)) {
      const label = field === 'detail' || field === 'non_field_errors' ? '' : `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')}: `;
      for (const m of Array.isArray(v) ? v : [v]) out.push(`${label}${String(m)}`);
    }
    if (out.length) return out;
  }
  return [e.message];
}

/** The units the viewer may read that match Weblate's query `q`, 25 a page. */
export async function translationSearchPage(c: Container, web: Web, req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { reads } = c.translation;
  const ctx = await web.context(req);
  const page = pageOf(req);
  const text = one((req.query as Query).q)?.trim() ?? '';
  if (!text) return web.page(reply, SearchPage({ ctx, q: '', total: null, hits: [], page: 1, hasNext: false, errors: null }));
  try {
    const { total, rows, links } = await searching(c, () => reads.units(ctx.actor, text, () => slice(page, SEARCH_PER_PAGE)));
    const hits: SearchHit[] = rows.map((u) => {
      const { project, component } = links.components.get(u.component_id)!;
      const language = links.languageCodes.get(u.language_id)!;
      return {
        id: u.id,
        source: u.source,
        target: u.target,
        context: u.context,
        project: project.name,
        component: component.slug,
        componentName: component.name,
        language,
        href: `${urls.translate(project.slug, component.slug, language)}?checksum=${checksum(BigInt(u.id_hash))}`,
      };
    });
    return web.page(reply, SearchPage({ ctx, q: text, total, hits, page, hasNext: page * SEARCH_PER_PAGE < total, errors: null }));
  } catch (e) {
    if (!(e instanceof DomainError) || e.status !== 400) throw e;
    return web.page(reply, SearchPage({ ctx, q: text, total: null, hits: [], page: 1, hasNext: false, errors: messagesOf(e) }), 400);
  }
}
