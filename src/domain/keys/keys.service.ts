// Users' SSH keys (issue 20, helper K): GitLab's Key model — create with validation (a parseable OpenSSH
// public key, the application settings' key restrictions, a fingerprint nobody uses yet), list, find by
// id or fingerprint, delete; key_create/key_destroy system hook events.
import type { FeatureDeps } from '../deps.ts';

export class KeysService {
  constructor(readonly deps: FeatureDeps) {}
}
