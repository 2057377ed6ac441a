// The merge request entities of a response: the views the merge requests module loads, mapped with what
// the request adds (where references are relative to, label details, HTML, the instance's user settings).
// The API routes and the web pages share it.
import type { Container } from '../../../container.ts';
import type { MergeRequestRow } from '../../../db/schema.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import type { DetailOptions, FoundMergeRequest } from '../../../domain/merge-requests/merge-requests.service.ts';
import type { ReferenceFrom } from '../../../domain/merge-requests/rules.ts';
import {
  type MergeRequestBasicEntity,
  type MergeRequestEntity,
  type MergeRequestEntityContext,
  type MergeRequestSimpleEntity,
  toMergeRequest,
  toMergeRequestBasic,
  toMergeRequestSimple,
} from '../entities/merge-request.entity.ts';
import { userViewContext } from '../entities/user.entity.ts';

export interface PresentOptions {
  view?: 'simple';
  withLabelsDetails?: boolean;
  /** what `references.relative` is relative to (the project or group of a project/group list) */
  from?: ReferenceFrom;
  renderHtml?: boolean;
}

async function entityContext(c: Container, opts: PresentOptions): Promise<MergeRequestEntityContext> {
  return {
    externalUrl: c.config.externalUrl,
    users: userViewContext(c.config.externalUrl, await c.settings.get()),
    from: opts.from ?? null,
    withLabelsDetails: opts.withLabelsDetails === true,
    renderHtml: opts.renderHtml,
  };
}

/** Entities of a page of merge requests (MergeRequestBasic, or MergeRequestSimple for view=simple). */
export async function presentMergeRequests(
  c: Container,
  rows: MergeRequestRow[],
  opts: PresentOptions = {},
): Promise<(MergeRequestBasicEntity | MergeRequestSimpleEntity)[]> {
  if (opts.view === 'simple') return (await c.mergeRequests.simpleViews(rows)).map((v) => toMergeRequestSimple(v, c.config.externalUrl));
  const [views, ctx] = await Promise.all([c.mergeRequests.views(rows), entityContext(c, opts)]);
  return views.map((v) => toMergeRequestBasic(v, ctx));
}

/** Entities::MergeRequest of one merge request the caller found (references relative to its project, or to `from`). */
export async function presentMergeRequest(
  c: Container,
  actor: Actor,
  found: FoundMergeRequest,
  opts: DetailOptions & { renderHtml?: boolean; from?: ReferenceFrom } = {},
): Promise<MergeRequestEntity> {
  const [{ view, detail }, ctx] = await Promise.all([
    c.mergeRequests.detail(actor, found, opts),
    entityContext(c, { from: opts.from ?? { project: found.project }, renderHtml: opts.renderHtml }),
  ]);
  return toMergeRequest(view, ctx, detail);
}
