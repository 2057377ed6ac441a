// GET /api/: the API root (DRF DefaultRouter), each registered list with its absolute URL, in
// Weblate's registration order (reference §1.1); lists Hearth does not serve are left out.
import type { FastifyInstance } from 'fastify';
import { apiUrl, drfHeaders } from './drf.ts';

const LISTS = ['projects', 'components', 'translations', 'languages', 'changes', 'units', 'suggestions'];

export function translationRootRoutes(app: FastifyInstance): void {
  app.get('/api/', { config: { api: 'translation' as const, auth: 'optional' as const }, onRequest: drfHeaders('GET, HEAD, OPTIONS') }, async (req) =>
    Object.fromEntries(LISTS.map((name) => [name, apiUrl(req, `/api/${name}/`)])),
  );
}
