// What the outbox tables hold that is not done yet, for the metrics endpoint: the queued or running
// jobs of each kind and the pending hook deliveries, each with the creation time of the oldest.
import type { Db } from './connect.ts';

export interface OutboxBacklog {
  jobs: { kind: string; n: number; oldest: string | null }[];
  deliveries: { n: number; oldest: string | null };
}

export async function outboxBacklog(db: Db): Promise<OutboxBacklog> {
  const k = db.kysely;
  const [jobs, deliveries] = await Promise.all([
    k
      .selectFrom('jobs')
      .select((eb) => ['kind', eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('state', 'in', ['queued', 'running'])
      .groupBy('kind')
      .execute(),
    k
      .selectFrom('hook_deliveries')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow(),
  ]);
  return {
    jobs: jobs.map((j) => ({ kind: j.kind, n: Number(j.n), oldest: j.oldest as string | null })),
    deliveries: { n: Number(deliveries.n), oldest: deliveries.oldest as string | null },
  };
}
