import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.ts';

// Commit comments and repository housekeeping (helper D of issue 18).
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
