// GET /merge_requests, /projects/:id/merge_requests, /groups/:id/merge_requests.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';

export function mergeRequestListRoutes(_app: FastifyInstance, _c: Container): void {}
