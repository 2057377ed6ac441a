import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { BUMP_FUNCTION_PG } from '../versions.ts';

// PostgreSQL: the version trigger also notifies (LISTEN hearth_table_versions), so that nodes keep the
// table versions without a query per request. Databases created before this step get the new function.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  if (dialect === 'postgres') await sql.raw(BUMP_FUNCTION_PG).execute(db);
}
