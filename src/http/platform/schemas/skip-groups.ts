// The `skip_groups` parameter of the group and namespace lists.
import type { FastifyRequest } from 'fastify';
import { Errors } from '../../../lib/errors.ts';

/** skip_groups also comes comma-separated (CommaSeparatedToIntegerArray); Grape names the whole array when an item is bad. */
export async function splitSkipGroups(req: FastifyRequest): Promise<void> {
  const q = req.query as Record<string, unknown>;
  if (typeof q.skip_groups === 'string') q.skip_groups = q.skip_groups.split(',').filter((s) => s !== '');
  if (Array.isArray(q.skip_groups) && q.skip_groups.some((v) => !/^-?\d+$/.test(String(v)))) throw Errors.param('skip_groups is invalid');
}
