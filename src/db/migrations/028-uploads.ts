import type { CreateTableBuilder, Kysely } from 'kysely';
import type { MigrationContext } from '../migration-context.ts';

// Project uploads: files attached to markdown (GitLab's uploads table with
// FileUploader). The bytes live in the blob store under `store_key`; the row names them by the 32-hex
// `secret` and the sanitised `filename`, as the markdown link /uploads/<secret>/<filename> does.
export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const id = <T extends string>(t: CreateTableBuilder<T, any>) =>
    dialect === 'postgres' ? t.addColumn('id', 'serial', (c) => c.primaryKey()) : t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  await id(db.schema.createTable('uploads'))
    .addColumn('project_id', 'integer', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('size', bigint, (c) => c.notNull())
    .addColumn('store_key', 'text', (c) => c.notNull())
    .addColumn('uploaded_by_user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('uploads_project_secret').on('uploads').columns(['project_id', 'secret', 'filename']).unique().execute();
}
