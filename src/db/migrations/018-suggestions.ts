import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// H2 (suggestions, comments, translations): the suggestions and comments tables (Weblate's Suggestion and
// Comment). Both hang on a unit and go with it (a rescan that drops a string, a removed translation or
// component); their authors may be deleted (the record stays, without its user). A unit's
// has_suggestion / has_comment flags and the translation's suggestions / comments counters are kept by
// the service that writes these rows (units/suggestions.ts), in the same transaction.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());

  // target: plural forms joined by U+001E; author_name/author_email: who the translation is credited to
  // when it is not the user (an upload with author_name/author_email), else the user's own
  await id(db.schema.createTable('suggestions'))
    .addColumn('unit_id', 'integer', (c) => c.notNull().references('units.id').onDelete('cascade'))
    .addColumn('translation_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('author_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('author_email', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('suggestions_unit').on('suggestions').columns(['unit_id', 'id']).execute();
  await db.schema.createIndex('suggestions_translation').on('suggestions').columns(['translation_id', 'id']).execute();
  await db.schema.createIndex('suggestions_user').on('suggestions').column('user_id').execute();

  // scope: global (kept on the source string, seen by every language) | translation | report
  await id(db.schema.createTable('comments'))
    .addColumn('unit_id', 'integer', (c) => c.notNull().references('units.id').onDelete('cascade'))
    .addColumn('translation_id', 'integer', (c) => c.notNull())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('comment', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull().defaultTo('translation'))
    .addColumn('resolved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('comments_unit').on('comments').columns(['unit_id', 'id']).execute();
  await db.schema.createIndex('comments_translation').on('comments').columns(['translation_id', 'id']).execute();
  await db.schema.createIndex('comments_user').on('comments').column('user_id').execute();
}
