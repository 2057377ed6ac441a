// The merge request API: one module per part of a merge request's life.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';
import { mergeRequestListRoutes } from './list.routes.ts';
import { mergeRequestsRoutes } from './merge-requests.routes.ts';
import { mergeRoutes } from './merge.routes.ts';
import { approvalsRoutes } from './approvals.routes.ts';

export function mergeRequestRoutes(app: FastifyInstance, c: Container): void {
  mergeRequestListRoutes(app, c);
  mergeRequestsRoutes(app, c);
  mergeRoutes(app, c);
  approvalsRoutes(app, c);
}
