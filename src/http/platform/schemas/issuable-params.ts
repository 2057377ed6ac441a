// The body parameters merge requests and issues share, coerced as Grape does before validation.
import type { FastifyRequest } from 'fastify';
import { Errors } from '../../../lib/errors.ts';

/** Grape's CommaSeparatedToArray / CommaSeparatedToIntegerArray, and "" for the integer ids that clear. */
export async function normaliseIssuableParams(req: FastifyRequest): Promise<void> {
  const b = req.body as Record<string, unknown> | undefined;
  if (!b || typeof b !== 'object') return;
  for (const key of ['labels', 'add_labels', 'remove_labels']) {
    const v = b[key];
    if (v === undefined || v === null) continue;
    const items = (Array.isArray(v) ? v : [v]).flatMap((x) => (typeof x === 'string' ? x.split(',') : [x]));
    b[key] = items.map((x) => (typeof x === 'string' ? x.trim() : x)).filter((x) => x !== '');
  }
  for (const key of ['assignee_ids', 'reviewer_ids']) {
    const v = b[key];
    if (v === undefined) continue;
    if (v === null || v === '') {
      b[key] = [];
      continue;
    }
    const items = (Array.isArray(v) ? v : [v]).flatMap((x) => (typeof x === 'string' ? (x === '' ? [] : x.split(',')) : [x]));
    if (!items.every((x) => (typeof x === 'string' && /^\s*\d+\s*$/.test(x)) || (typeof x === 'number' && Number.isInteger(x)))) {
      throw Errors.param(`${key} is invalid`);
    }
    b[key] = items.map((x) => Number(x));
  }
  for (const key of ['milestone_id', 'assignee_id']) if (b[key] === '' || b[key] === null) b[key] = 0;
}
