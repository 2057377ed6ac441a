// Ordered migrations, applied once each, in one transaction per file. Same files for both dialects.
import { sql, type Kysely } from 'kysely';
import type { Db } from './connect.ts';
import type { MigrationContext } from './migration-context.ts';
import * as m001 from './migrations/001-foundation.ts';
import * as m002 from './migrations/002-table-versions.ts';
import * as m003 from './migrations/003-namespaces-projects.ts';
import * as m004 from './migrations/004-projects.ts';
import * as m005 from './migrations/005-system-hooks.ts';
import * as m006 from './migrations/006-languages.ts';
import * as m007 from './migrations/007-translation.ts';
import * as m008 from './migrations/008-version-notifications.ts';
import * as m009 from './migrations/009-pending-pushes.ts';
import * as m010 from './migrations/010-merge-requests.ts';
import * as m011 from './migrations/011-subscriptions.ts';
import * as m014 from './migrations/014-merge-checks.ts';
import * as m016 from './migrations/016-merge-request-lists.ts';
import * as m017 from './migrations/017-unit-edits.ts';
import * as m018 from './migrations/018-suggestions.ts';
import * as m019 from './migrations/019-component-repository.ts';
import * as m020 from './migrations/020-follow.ts';
import * as m021 from './migrations/021-ci.ts';
import * as m022 from './migrations/022-import-export.ts';
import * as m023 from './migrations/023-web-hooks.ts';
import * as m024 from './migrations/024-protected-refs.ts';
import * as m025 from './migrations/025-namespace-extras.ts';
import * as m026 from './migrations/026-repository-extras.ts';
import * as m027 from './migrations/027-events-stars.ts';
import * as m028 from './migrations/028-uploads.ts';
import * as m029 from './migrations/029-keys.ts';
import * as m030 from './migrations/030-merge-journal.ts';
import * as m031 from './migrations/031-versions-at-commit.ts';
import * as m032 from './migrations/032-scale-indexes.ts';
import * as m033 from './migrations/033-sqlite-search.ts';
import * as m034 from './migrations/034-merge-request-visibility.ts';
import * as m035 from './migrations/035-issues.ts';
import * as m036 from './migrations/036-closing-issues.ts';
import * as m037 from './migrations/037-issues-full-text.ts';
import * as m038 from './migrations/038-merge-request-mentions.ts';
import * as m039 from './migrations/039-issue-labels-project.ts';
import * as m040 from './migrations/040-ci-variables.ts';
import * as m041 from './migrations/041-deploy-and-access-tokens.ts';
import * as m042 from './migrations/042-triggers-schedules-job-token-scope.ts';
import * as m043 from './migrations/043-merge-request-pipelines.ts';
import * as m044 from './migrations/044-web-hook-versions.ts';

interface Migration {
  name: string;
  up(db: Kysely<any>, ctx: MigrationContext): Promise<void>;
}

/** Register new migrations here, in order. */
export const MIGRATIONS: Migration[] = [
  { name: '001-foundation', up: m001.up },
  { name: '002-table-versions', up: m002.up },
  { name: '003-namespaces-projects', up: m003.up },
  { name: '004-projects', up: m004.up },
  { name: '005-system-hooks', up: m005.up },
  { name: '006-languages', up: m006.up },
  { name: '007-translation', up: m007.up },
  { name: '008-version-notifications', up: m008.up },
  { name: '009-pending-pushes', up: m009.up },
  { name: '010-merge-requests', up: m010.up },
  { name: '011-subscriptions', up: m011.up },
  { name: '014-merge-checks', up: m014.up },
  { name: '016-merge-request-lists', up: m016.up },
  { name: '017-unit-edits', up: m017.up },
  { name: '018-suggestions', up: m018.up },
  { name: '019-component-repository', up: m019.up },
  { name: '020-follow', up: m020.up },
  { name: '021-ci', up: m021.up },
  { name: '022-import-export', up: m022.up },
  { name: '023-web-hooks', up: m023.up },
  { name: '024-protected-refs', up: m024.up },
  { name: '025-namespace-extras', up: m025.up },
  { name: '026-repository-extras', up: m026.up },
  { name: '027-events-stars', up: m027.up },
  { name: '028-uploads', up: m028.up },
  { name: '029-keys', up: m029.up },
  { name: '030-merge-journal', up: m030.up },
  { name: '031-versions-at-commit', up: m031.up },
  { name: '032-scale-indexes', up: m032.up },
  { name: '033-sqlite-search', up: m033.up },
  { name: '034-merge-request-visibility', up: m034.up },
  { name: '035-issues', up: m035.up },
  { name: '036-closing-issues', up: m036.up },
  { name: '037-issues-full-text', up: m037.up },
  { name: '038-merge-request-mentions', up: m038.up },
  { name: '039-issue-labels-project', up: m039.up },
  { name: '040-ci-variables', up: m040.up },
  { name: '041-deploy-and-access-tokens', up: m041.up },
  { name: '042-triggers-schedules-job-token-scope', up: m042.up },
  { name: '043-merge-request-pipelines', up: m043.up },
  { name: '044-web-hook-versions', up: m044.up },
];

export async function migrate(db: Db): Promise<string[]> {
  const k = db.kysely as unknown as Kysely<any>;
  await k.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
  const applied: string[] = [];
  for (const m of MIGRATIONS) {
    const done = await k.transaction().execute(async (trx) => {
      // processes migrating the same schema take turns; other schemas (the tests' own) do not wait
      if (db.dialect === 'postgres') await sql`select pg_advisory_xact_lock(7411, hashtext(current_schema()))`.execute(trx);
      const row = await trx.selectFrom('schema_migrations').select('name').where('name', '=', m.name).executeTakeFirst();
      if (row) return false;
      await m.up(trx, { dialect: db.dialect });
      await trx.insertInto('schema_migrations').values({ name: m.name, applied_at: new Date().toISOString() }).execute();
      return true;
    });
    if (done) applied.push(m.name);
  }
  return applied;
}
