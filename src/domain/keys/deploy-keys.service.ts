// Deploy keys (issue 20, helper D): GitLab's DeployKey (a row of `keys` with type 'deploy') enabled on
// projects through deploy_keys_projects, each with its own can_push.
import type { FeatureDeps } from '../deps.ts';

export class DeployKeysService {
  constructor(readonly deps: FeatureDeps) {}
}
