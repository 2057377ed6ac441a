// What the services of the merge-request era take: one object, so a new service is one line in the container.
import type { Db } from '../db/connect.ts';
import type { RepositoryStore } from '../git/storage.ts';
import type { Logger } from 'pino';
import type { Jobs } from '../jobs/registry.ts';
import type { Policy } from './access/policy.ts';
import type { Resolver } from './access/resolve.ts';
import type { RepositoryService } from './repository/repository.service.ts';
import type { SettingsService } from './settings/settings.service.ts';
import type { UsersService } from './users/users.service.ts';

export interface FeatureDeps {
  db: Db;
  settings: SettingsService;
  policy: Policy;
  resolve: Resolver;
  repos: RepositoryStore;
  /** the one write path of repositories */
  repository: RepositoryService;
  users: UsersService;
  log: Logger;
  externalUrl: string;
  /** the background jobs: a service's round of its own kind claims and runs through them */
  jobs: Jobs;
}
