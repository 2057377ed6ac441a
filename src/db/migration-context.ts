// What a migration is told about the database it changes. Apart from the runner (migrate.ts), which
// imports every migration, so that the migrations need not import the runner.
import type { DialectName } from './connect.ts';

export interface MigrationContext {
  dialect: DialectName;
}
