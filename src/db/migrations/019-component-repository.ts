import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.ts';

// H4 (repository operations): the local branch state, push_branch, commit message template, commit_pending_age, merge style
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
