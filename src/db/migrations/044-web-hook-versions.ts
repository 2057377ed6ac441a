import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Project and group webhooks get a table version: whether a project has a hook for its job or pipeline events is
// kept per process until a hook is added, changed or removed (domain/core/hook-listeners.ts).
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  await trackTableVersions(db, dialect, ['web_hooks']);
}
