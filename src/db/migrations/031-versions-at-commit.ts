import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { BUMP_FUNCTION_PG, NOTE_FUNCTION_PG, versionTriggersPg } from '../versions.ts';

// PostgreSQL: table versions are replaced at commit rather than by each statement, so that writers of
// one table no longer wait on its version row for the rest of their transaction (see versions.ts).
// Every tracked table gets the new triggers.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql.raw(NOTE_FUNCTION_PG).execute(db);
  await sql.raw(BUMP_FUNCTION_PG).execute(db);
  const tables = await db.selectFrom('table_versions').select('name').orderBy('name').execute();
  for (const { name } of tables) await versionTriggersPg(db, name);
}
