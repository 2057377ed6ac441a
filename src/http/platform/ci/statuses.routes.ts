// Owner: the statuses part of issue 16. Registered in src/http/platform/ci/index.ts.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';

export function statusesRoutes(_app: FastifyInstance, _c: Container): void {}
