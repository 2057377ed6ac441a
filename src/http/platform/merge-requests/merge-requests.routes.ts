// One merge request: create, get, update, delete, commits, changes/diffs, participants, resource events, pipelines.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';

export function mergeRequestsRoutes(_app: FastifyInstance, _c: Container): void {}
