// The repository API (/projects/:id/repository/…): one module per resource.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';
import { branchesRoutes } from './branches.routes.ts';
import { tagsRoutes } from './tags.routes.ts';
import { commitsRoutes } from './commits.routes.ts';
import { filesRoutes } from './files.routes.ts';
import { treeRoutes } from './tree.routes.ts';
import { compareRoutes } from './compare.routes.ts';
import { changelogRoutes } from './changelog.routes.ts';
import { commitActionsRoutes } from './commit-actions.routes.ts';

export function repositoryRoutes(app: FastifyInstance, c: Container): void {
  branchesRoutes(app, c);
  tagsRoutes(app, c);
  commitsRoutes(app, c);
  filesRoutes(app, c);
  treeRoutes(app, c);
  compareRoutes(app, c);
  changelogRoutes(app, c);
  commitActionsRoutes(app, c);
}
