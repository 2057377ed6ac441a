import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';
import { trackTableVersions } from '../versions.ts';

// Languages of the translation API and their plural definitions (Weblate's Language and Plural):
// seeded from the bundled language data at startup (src/domain/translation/languages/seed.ts).
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  await id(db.schema.createTable('languages'))
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('direction', 'text', (c) => c.notNull().defaultTo('ltr'))
    .addColumn('population', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // source: 0 default, 1 gettext, 2 manual, 3 CLDR with zero, 4 CLDR, 5 Android, 6 Qt
  await id(db.schema.createTable('language_plurals'))
    .addColumn('language_id', 'integer', (c) => c.notNull())
    .addColumn('source', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('formula', 'text', (c) => c.notNull())
    .addColumn('type', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('language_plurals_language').on('language_plurals').columns(['language_id', 'source']).execute();

  // alias code → language code (aliases.csv), shown read-only on each language
  await db.schema
    .createTable('language_aliases')
    .addColumn('alias', 'text', (c) => c.primaryKey())
    .addColumn('code', 'text', (c) => c.notNull())
    .execute();

  await trackTableVersions(db, dialect, ['languages', 'language_plurals']);
}
