// Environments and deployments; a successful deployment records the merge requests merged into what it deployed.
import type { FeatureDeps } from '../deps.ts';

export class DeploymentsService {
  constructor(readonly deps: FeatureDeps) {}
}
