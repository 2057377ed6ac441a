import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.ts';

// Project uploads (helper F of issue 18).
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
