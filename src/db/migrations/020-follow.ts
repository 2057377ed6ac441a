import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Forge follow (domain/translation/components/follow.ts) needs no table of its own: its queue is the
// outbox (`jobs`, kind translation_follow, payload {"component_id": n}), claimed with leases as the
// mergeability checks are, and the components it rescans are found by `components_platform_project`.
export async function up(_db: Kysely<any>, _ctx: MigrationContext): Promise<void> {}
