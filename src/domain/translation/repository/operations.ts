// A repository operation of `POST …/repository/` (reference §1.3) on the components in scope, as the API
// and the component's repository page run it: Weblate's permission of the operation (REPO_OPERATIONS) on
// every component (the project alone when it has none), then the operation on each.
import type { ComponentRow, TranslationProjectRow } from '../../../db/schema.ts';
import type { Actor } from '../../access/actor.ts';
import type { TranslationPermissions, TranslationPerm } from '../permissions.ts';
import type { ComponentRepository, OperationResult, RepositoryOperation } from './component-repository.ts';

/** REPO_OPERATIONS (views.py): the permission each operation needs */
export const OPERATION_PERMISSION: Record<RepositoryOperation, TranslationPerm> = {
  commit: 'vcs.commit',
  pull: 'vcs.update',
  'pull-rebase': 'vcs.update',
  'pull-merge': 'vcs.update',
  'pull-merge-noff': 'vcs.update',
  push: 'vcs.push',
  reset: 'vcs.reset',
  'reset-keep': 'vcs.reset',
  cleanup: 'vcs.reset',
  'file-sync': 'vcs.reset',
  'file-scan': 'vcs.reset',
};
export const OPERATION_DENIED = 'You do not have permission to perform this action.';

/** The permission of `op` on every component in scope: 401 for the anonymous, 403 otherwise. */
export async function requireOperation(
  perms: TranslationPermissions,
  actor: Actor,
  op: RepositoryOperation,
  project: TranslationProjectRow,
  components: ComponentRow[],
): Promise<void> {
  const perm = OPERATION_PERMISSION[op];
  if (!components.length) return perms.require(actor, perm, { project }, OPERATION_DENIED);
  for (const component of components) await perms.require(actor, perm, { project, component }, OPERATION_DENIED);
}

/** Checks the permission, then runs `op` on each component: false when any failed, their details joined. */
export async function runOperation(
  perms: TranslationPermissions,
  repository: ComponentRepository,
  actor: Actor,
  op: RepositoryOperation,
  scope: { project: TranslationProjectRow; components: ComponentRow[]; translationId?: number },
): Promise<OperationResult> {
  await requireOperation(perms, actor, op, scope.project, scope.components);
  let result = true;
  const details: string[] = [];
  for (const component of scope.components) {
    const done = await repository.operate(actor, component, op, { translationId: scope.translationId });
    if (!done.result) result = false;
    if (done.detail) details.push(done.detail);
  }
  return details.length ? { result, detail: details.join('\n') } : { result };
}
