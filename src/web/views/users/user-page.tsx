// A user's profile (GitLab's /<username>): avatar, name, bio, personal projects and recent activity.
// A private profile or a blocked account shows only the name, as GitLab does, except to the user
// themself and to administrators.
import type { UserRow } from '../../../db/schema.ts';
import type { EventView } from '../../../domain/events/events-query.ts';
import type { ProjectView } from '../../../domain/projects/projects-query.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Avatar, Blankslate, TimeAgo } from '../components.tsx';
import { type EventProjects, EventList, ProjectList } from '../dashboard/lists.tsx';
import { Layout } from '../layout.tsx';

export interface UserPageProps {
  ctx: WebCtx;
  user: UserRow;
  /** what the viewer may see beyond the name: null for a private profile or a blocked account */
  details: { projects: ProjectView[]; events: EventView[]; eventProjects: EventProjects } | null;
  reason: 'private' | 'blocked' | null;
}

export function UserPage(p: UserPageProps): SafeHtml {
  const u = p.user;
  const work = u.job_title && u.organization ? `${u.job_title} at ${u.organization}` : u.job_title || u.organization;
  return (
    <Layout ctx={p.ctx} title={`${u.name} (@${u.username})`} crumbs={[{ text: u.name }]}>
      <div class="d-flex flex-items-center mb-4">
        <Avatar url={u.avatar_url} name={u.name} size={64} />
        <div class="ml-3">
          <h1 class="h2">{u.name}</h1>
          <p class="color-fg-muted mb-0">
            @{u.username}
            {u.state === 'blocked' ? <span class="Label Label--danger ml-2">Blocked</span> : null}
            {u.private_profile ? <span class="Label Label--secondary ml-2">Private profile</span> : null}
          </p>
        </div>
      </div>
      {p.details === null ? (
        <Blankslate title={p.reason === 'blocked' ? 'This user is blocked' : 'This user has a private profile'} />
      ) : (
        <div>
          <section class="mb-4" aria-labelledby="user-about">
            <h2 id="user-about" class="sr-only">
              About
            </h2>
            {u.bio ? <p>{u.bio}</p> : null}
            <ul class="list-style-none color-fg-muted f6">
              {u.pronouns ? <li>Pronouns: {u.pronouns}</li> : null}
              {work ? <li>{work}</li> : null}
              {u.location ? <li>{u.location}</li> : null}
              {u.public_email ? (
                <li>
                  <a href={`mailto:${u.public_email}`}>{u.public_email}</a>
                </li>
              ) : null}
              {u.website_url && /^https?:\/\//i.test(u.website_url) ? (
                <li>
                  <a href={u.website_url} rel="nofollow noopener noreferrer">
                    {u.website_url}
                  </a>
                </li>
              ) : null}
              <li>
                Member since <TimeAgo at={u.created_at} />
              </li>
            </ul>
          </section>
          <section class="mb-4" aria-labelledby="user-projects">
            <h2 id="user-projects" class="h3 mb-2">
              Personal projects
            </h2>
            <ProjectList views={p.details.projects} empty="No personal projects" />
          </section>
          <section aria-labelledby="user-activity">
            <h2 id="user-activity" class="h3 mb-2">
              Activity
            </h2>
            <EventList views={p.details.events} projects={p.details.eventProjects} empty="No activity yet" />
          </section>
        </div>
      )}
    </Layout>
  );
}
