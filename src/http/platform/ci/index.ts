// CI: pipelines, jobs, runners (the runner API and the protocol runners speak), artifacts, commit statuses,
// CI/CD variables.
import type { FastifyInstance } from 'fastify';
import type { Container } from '../../../container.ts';
import { artifactsRoutes } from './artifacts.routes.ts';
import { jobTokenScopeRoutes } from './job-token-scope.routes.ts';
import { jobsRoutes } from './jobs.routes.ts';
import { pipelineSchedulesRoutes } from './pipeline-schedules.routes.ts';
import { pipelinesRoutes } from './pipelines.routes.ts';
import { runnerProtocolRoutes } from './runner-protocol.routes.ts';
import { runnersRoutes } from './runners.routes.ts';
import { statusesRoutes } from './statuses.routes.ts';
import { variablesRoutes } from './variables.routes.ts';
import { triggersRoutes } from './triggers.routes.ts';

export function ciRoutes(app: FastifyInstance, c: Container): void {
  pipelinesRoutes(app, c);
  jobsRoutes(app, c);
  runnersRoutes(app, c);
  runnerProtocolRoutes(app, c);
  artifactsRoutes(app, c);
  statusesRoutes(app, c);
  variablesRoutes(app, c);
  triggersRoutes(app, c);
  pipelineSchedulesRoutes(app, c);
  jobTokenScopeRoutes(app, c);
}
