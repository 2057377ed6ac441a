// /user/keys, /users/:id/keys, /keys/:id, /keys?fingerprint= (issue 20, helper K)
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function keysRoutes(_app: FastifyInstance, _c: Container): void {}
