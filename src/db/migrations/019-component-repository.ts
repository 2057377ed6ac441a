import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Repository operations of translation components, Weblate's Component fields:
// - push_branch: the branch a push goes to ('' = the component's branch);
// - commit_message / add_message / delete_message / merge_message: the message templates
//   ({{ language_name }}, {{ project_name }}, {{ component_name }}, {{ stats.translated }} …);
// - commit_pending_age: hours after which pending edits are committed by the worker (Weblate: 24);
// - merge_style: how pull brings upstream in: rebase (Weblate's default) | merge | merge_noff;
// - push_on_commit: push after every commit (off by default: a push goes where `push` points, or back
//   to the origin, which should be asked for).
// The upstream branch's head lives in the mirror (refs/remotes/origin/<branch>), the local branch with
// translators' commits in refs/heads/<branch> (components.head); see repository/component-repository.ts.
// The default message templates as this migration made them, a frozen copy: a later change of the
// product's defaults (domain/translation/repository/messages.ts) must not make a fresh database
// differ from a migrated one.
const DEFAULT_COMMIT_MESSAGE =
  'Translated using Hearth ({{ language_name }})\n\nCurrently translated at {{ stats.translated_percent }}% ({{ stats.translated }} of {{ stats.all }} strings)\n\nTranslation: {{ project_name }}/{{ component_name }}\nTranslate-URL: {{ url }}';
const DEFAULT_ADD_MESSAGE = 'Added translation using Hearth ({{ language_name }})\n\n';
const DEFAULT_DELETE_MESSAGE = 'Deleted translation using Hearth ({{ language_name }})\n\n';
const DEFAULT_MERGE_MESSAGE = "Merge branch '{{ component_remote_branch }}' into Hearth.\n\n";

export async function up(db: Kysely<any>, _ctx: MigrationContext): Promise<void> {
  const text = (def: string) => (c: any) => c.notNull().defaultTo(def);
  const columns: [string, 'text' | 'integer', (c: any) => any][] = [
    ['push_branch', 'text', text('')],
    ['commit_message', 'text', text(DEFAULT_COMMIT_MESSAGE)],
    ['add_message', 'text', text(DEFAULT_ADD_MESSAGE)],
    ['delete_message', 'text', text(DEFAULT_DELETE_MESSAGE)],
    ['merge_message', 'text', text(DEFAULT_MERGE_MESSAGE)],
    ['commit_pending_age', 'integer', (c: any) => c.notNull().defaultTo(24)],
    ['merge_style', 'text', text('rebase')],
    ['push_on_commit', 'integer', (c: any) => c.notNull().defaultTo(0)],
  ];
  for (const [name, type, build] of columns) await db.schema.alterTable('components').addColumn(name, type, build).execute();
  // the worker's round looks for pending edits across components every poll: an index over the few
  // pending rows (their component and age), not a scan of every unit
  await db.schema.createIndex('units_pending_component_updated').on('units').columns(['pending', 'component_id', 'last_updated']).execute();
}
