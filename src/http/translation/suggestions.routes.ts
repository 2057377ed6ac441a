// H2 fills this in.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function suggestionsRoutes(_app: FastifyInstance, _c: Container): void {}
