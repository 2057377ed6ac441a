// /projects/:id/deploy_keys and /deploy_keys (issue 20, helper D)
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function deployKeysRoutes(_app: FastifyInstance, _c: Container): void {}
