import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.ts';

// Project and group web hooks (helper A of issue 18).
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
