// Owner: the export part of issue 17. Registered in src/http/platform/import-export/index.ts.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';

export function exportRoutes(_app: FastifyInstance, _c: Container): void {}
