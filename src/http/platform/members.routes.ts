import type { FastifyInstance } from 'fastify';
import type { Container } from '../../container.ts';

export function membersRoutes(app: FastifyInstance, c: Container): void {
  void app;
  void c;
}
