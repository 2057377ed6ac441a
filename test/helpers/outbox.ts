// The outbox (the jobs table) as tests read it: the last job's id, and the system events written after it.
import type { TestApp } from './build-app.ts';

export async function lastJobId(c: TestApp['c']): Promise<number> {
  const r = await c.db.kysely
    .selectFrom('jobs')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(r?.id ?? 0);
}

/** The payloads of the system events queued after job `jobId`, oldest first. */
export async function eventsAfter(c: TestApp['c'], jobId: number): Promise<Record<string, any>[]> {
  const rows = await c.db.kysely.selectFrom('jobs').select('payload').where('kind', '=', 'system_event').where('id', '>', jobId).orderBy('id').execute();
  return rows.map((r) => JSON.parse(r.payload));
}
