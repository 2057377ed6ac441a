// PUT …/merge, …/rebase, GET …/merge_ref, POST …/cancel_merge_when_pipeline_succeeds.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';

export function mergeRoutes(_app: FastifyInstance, _c: Container): void {}
