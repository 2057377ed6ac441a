import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// The translation platform (Weblate's Project, Component, Translation, Unit, Change): tables of
// their own, apart from the development platform's projects. A translation row carries its own
// statistics, kept up to date by every write that changes its units, so statistics never scan units.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const int = (def: number) => (c: any) => c.notNull().defaultTo(def);
  const text =
    (def = '') =>
    (c: any) =>
      c.notNull().defaultTo(def);

  // access_control: 0 public, 1 protected, 100 private (Weblate's values; private = administrators)
  await id(db.schema.createTable('translation_projects'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('web', 'text', text())
    .addColumn('source_language_id', 'integer', (c) => c.notNull())
    .addColumn('access_control', 'integer', int(0))
    .addColumn('locked', 'integer', int(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('translation_projects_slug').on('translation_projects').column('slug').unique().execute();
  await db.schema.createIndex('translation_projects_name').on('translation_projects').column('name').unique().execute();

  // scan_state: done | failed (scan_error holds why); head: the commit the translations were read from
  await id(db.schema.createTable('components'))
    .addColumn('project_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('vcs', 'text', text('git'))
    .addColumn('repo', 'text', (c) => c.notNull())
    .addColumn('push', 'text', text())
    .addColumn('branch', 'text', text())
    .addColumn('filemask', 'text', (c) => c.notNull())
    .addColumn('template', 'text', text())
    .addColumn('new_base', 'text', text())
    .addColumn('edit_template', 'integer', int(1))
    .addColumn('file_format', 'text', (c) => c.notNull())
    .addColumn('license', 'text', text())
    .addColumn('license_url', 'text', text())
    .addColumn('agreement', 'text', text())
    .addColumn('new_lang', 'text', text('add'))
    .addColumn('language_code_style', 'text', text())
    .addColumn('language_regex', 'text', text('^[^.]+$'))
    .addColumn('check_flags', 'text', text())
    .addColumn('enforced_checks', 'text', text('[]'))
    .addColumn('restricted', 'integer', int(0))
    .addColumn('priority', 'integer', int(100))
    .addColumn('source_language_id', 'integer', (c) => c.notNull())
    .addColumn('locked', 'integer', int(0))
    // a project of this server when `repo` is one of its URLs (read from its bare repository)
    .addColumn('platform_project_id', 'integer')
    .addColumn('head', 'text', text())
    .addColumn('scan_state', 'text', text('done'))
    .addColumn('scan_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('components_project_slug').on('components').columns(['project_id', 'slug']).unique().execute();
  await db.schema.createIndex('components_project_name').on('components').columns(['project_id', 'name']).unique().execute();
  await db.schema.createIndex('components_platform_project').on('components').column('platform_project_id').execute();

  const stats = (t: CreateTableBuilder<any, any>) => {
    for (const k of ['total', 'translated', 'fuzzy', 'approved', 'readonly', 'failing']) {
      t = t.addColumn(k, 'integer', int(0)).addColumn(`${k}_words`, 'integer', int(0)).addColumn(`${k}_chars`, 'integer', int(0));
    }
    return t
      .addColumn('suggestions', 'integer', int(0))
      .addColumn('comments', 'integer', int(0))
      .addColumn('recent_changes', 'integer', int(0))
      .addColumn('last_change', 'text')
      .addColumn('last_author_id', 'integer');
  };
  // language_code: the code as written in the file name; filename: '' for the source of a bilingual component
  await stats(
    id(db.schema.createTable('translations'))
      .addColumn('component_id', 'integer', (c) => c.notNull())
      .addColumn('language_id', 'integer', (c) => c.notNull())
      .addColumn('plural_id', 'integer', (c) => c.notNull())
      .addColumn('language_code', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', text())
      .addColumn('revision', 'text', text())
      .addColumn('is_template', 'integer', int(0))
      .addColumn('is_source', 'integer', int(0)),
  )
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('translations_component_language').on('translations').columns(['component_id', 'language_id']).unique().execute();
  await db.schema.createIndex('translations_language').on('translations').column('language_id').execute();

  // id_hash/content_hash: signed 64-bit integers kept as decimal text (beyond JavaScript's safe integers)
  await id(db.schema.createTable('units'))
    .addColumn('translation_id', 'integer', (c) => c.notNull())
    .addColumn('component_id', 'integer', (c) => c.notNull())
    .addColumn('language_id', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('id_hash', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('source', 'text', text())
    .addColumn('target', 'text', text())
    .addColumn('previous_source', 'text', text())
    .addColumn('context', 'text', text())
    .addColumn('note', 'text', text())
    .addColumn('location', 'text', text())
    .addColumn('flags', 'text', text())
    .addColumn('explanation', 'text', text())
    .addColumn('extra_flags', 'text', text())
    .addColumn('state', 'integer', int(0))
    .addColumn('num_words', 'integer', int(0))
    .addColumn('source_chars', 'integer', int(0))
    .addColumn('priority', 'integer', int(100))
    .addColumn('has_suggestion', 'integer', int(0))
    .addColumn('has_comment', 'integer', int(0))
    .addColumn('has_failing_check', 'integer', int(0))
    .addColumn('failing_checks', 'text', text())
    .addColumn('pending', 'integer', int(0))
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .addColumn('last_updated', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('units_translation_position').on('units').columns(['translation_id', 'position']).execute();
  await db.schema.createIndex('units_translation_hash').on('units').columns(['translation_id', 'id_hash']).execute();
  await db.schema.createIndex('units_state').on('units').columns(['state', 'id']).execute();
  await db.schema.createIndex('units_translation_state').on('units').columns(['translation_id', 'state']).execute();
  await db.schema.createIndex('units_component_hash').on('units').columns(['component_id', 'id_hash']).execute();
  await db.schema.createIndex('units_language').on('units').column('language_id').execute();

  await id(db.schema.createTable('translation_changes'))
    .addColumn('project_id', 'integer')
    .addColumn('component_id', 'integer')
    .addColumn('translation_id', 'integer')
    .addColumn('unit_id', 'integer')
    .addColumn('language_id', 'integer')
    .addColumn('user_id', 'integer')
    .addColumn('author_id', 'integer')
    .addColumn('action', 'integer', (c) => c.notNull())
    .addColumn('target', 'text', text())
    .addColumn('old', 'text', text())
    .addColumn('details', 'text', text('{}'))
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('translation_changes_timestamp').on('translation_changes').columns(['timestamp', 'id']).execute();
  await db.schema.createIndex('translation_changes_project').on('translation_changes').columns(['project_id', 'timestamp']).execute();
  await db.schema.createIndex('translation_changes_component').on('translation_changes').columns(['component_id', 'timestamp']).execute();
  await db.schema.createIndex('translation_changes_translation').on('translation_changes').columns(['translation_id', 'timestamp']).execute();

  // units and changes are not tracked: a row-level trigger per unit would slow scans of large files, and every
  // write to units also updates its translation's statistics row, which is tracked.
  await trackTableVersions(db, dialect, ['translation_projects', 'components', 'translations']);
}
