import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.ts';

// Protected branches and protected tags (helper B of issue 18).
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
