// /projects/:id/labels and /groups/:id/labels.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function labelsRoutes(_app: FastifyInstance, _c: Container): void {}
