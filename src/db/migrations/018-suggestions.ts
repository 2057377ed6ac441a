import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.ts';

// H2 (suggestions, comments, translations): the suggestions and comments tables
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
