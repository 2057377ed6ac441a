import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';

export function compareRoutes(fastify: FastifyInstance, c: Container): void {
  void fastify;
  void c;
}
