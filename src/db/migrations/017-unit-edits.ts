import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.ts';

// H1 (units): units.pending_author, translation_projects.translation_review, and whatever unit edits need
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
