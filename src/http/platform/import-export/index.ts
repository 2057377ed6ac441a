// Project export and import: exports (request, status, download), imports (file, remote URL, S3, status)
// and single-relation imports.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';
import { exportRoutes } from './export.routes.ts';
import { importRoutes } from './import.routes.ts';
import { relationImportsRoutes } from './relation-imports.routes.ts';

export function importExportRoutes(app: FastifyInstance, c: Container): void {
  exportRoutes(app, c);
  importRoutes(app, c);
  relationImportsRoutes(app, c);
}
