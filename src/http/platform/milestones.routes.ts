// /projects/:id/milestones and /groups/:id/milestones.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function milestonesRoutes(_app: FastifyInstance, _c: Container): void {}
