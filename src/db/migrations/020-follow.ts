import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.ts';

// H5 (forge follow): the queue of component refreshes after pushes
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
