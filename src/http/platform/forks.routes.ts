// POST /projects/:id/fork, GET /projects/:id/forks, DELETE /projects/:id/fork.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function forksRoutes(_app: FastifyInstance, _c: Container): void {}
