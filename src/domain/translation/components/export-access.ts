// Who may clone a component's git export (EXTERNAL_URL/git/<project>/<component>/, its mirror). The
// mirror holds every branch and file of the component's repository, not only its translations, so
// when that repository is a project of this server the export asks what cloning the project asks:
// read_code on it, for the caller, at each request (a project made private later closes the export
// too; a project that is gone closes it). Other sources (http(s) URLs, administrators' local paths):
// whoever may see the component.
import type { Actor } from '../../access/actor.ts';
import type { Resolver } from '../../access/resolve.ts';
import type { ComponentRow } from '../../../db/schema.ts';
import { DomainError } from '../../../lib/errors.ts';
import { canReadCode } from '../../repository/read-access.ts';

/** The caller, who may see `component`, may also clone its mirror. */
export async function mayCloneExport(resolve: Resolver, actor: Actor, component: Pick<ComponentRow, 'platform_project_id'>): Promise<boolean> {
  if (component.platform_project_id === null) return true;
  try {
    const source = await resolve.project(actor, component.platform_project_id);
    return canReadCode(actor, source.project, source.access);
  } catch (e) {
    if (e instanceof DomainError && e.status === 404) return false;
    throw e;
  }
}
