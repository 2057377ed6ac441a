import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';

export function treeRoutes(fastify: FastifyInstance, c: Container): void {
  void fastify;
  void c;
}
