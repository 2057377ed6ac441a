// /projects/:id/environments and /projects/:id/deployments.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function deploymentsRoutes(_app: FastifyInstance, _c: Container): void {}
