// What the repository routes share: the commit entities GitLab returns, the push events of API writes.
import type { Container } from '../../../container.ts';
import type { Actor } from '../../../domain/access/actor.ts';
import type { RepoContext } from '../../../domain/repository/context.ts';
import { commitTitle, commitTrailers, isoTime, type Commit } from '../../../git/objects.ts';
import { recordPushEvents, type RefChange } from '../../../domain/repository/push-events.ts';

/** API::Entities::CommitBasic */
export function commitBasic(commit: Commit, webUrl: string) {
  const { trailers, extended } = commitTrailers(commit.message);
  return {
    id: commit.sha,
    short_id: commit.sha.slice(0, 8),
    created_at: isoTime(commit.committer.time, commit.committer.tz),
    parent_ids: commit.parents,
    title: commitTitle(commit.message),
    message: commit.message,
    author_name: commit.author.name,
    author_email: commit.author.email,
    authored_date: isoTime(commit.author.time, commit.author.tz),
    committer_name: commit.committer.name,
    committer_email: commit.committer.email,
    committed_date: isoTime(commit.committer.time, commit.committer.tz),
    trailers,
    extended_trailers: extended,
    web_url: `${webUrl}/-/commit/${commit.sha}`,
  };
}

export type CommitEntity = ReturnType<typeof commitBasic>;

/** After refs changed through the API (commits, branches, tags): the push events, as for a git push. */
export async function recordRefChanges(c: Container, ctx: RepoContext, actor: Actor, changes: RefChange[]): Promise<void> {
  const settings = await c.settings.get();
  await recordPushEvents({ db: c.db, externalUrl: c.config.externalUrl, settings, project: ctx.project, namespace: ctx.namespace, user: actor.user!, repo: ctx.repo }, changes);
}
