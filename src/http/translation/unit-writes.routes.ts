// H1 fills this in.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function unitWritesRoutes(_app: FastifyInstance, _c: Container): void {}
