// What every view knows about the request it renders: the viewer, the CSRF token of its forms, the flash
// message and the page's markdown. The web plumbing (http/web/web.ts) fills it in; views only read it.
import type { UserRow } from '../db/schema.ts';
import type { Actor } from '../domain/access/actor.ts';
import type { PageMarkdown } from './page-markdown.ts';

export interface Flash {
  kind: 'notice' | 'alert';
  text: string;
}

/** What a page knows about its viewer. */
export interface WebCtx {
  actor: Actor;
  user: UserRow | null;
  /** the session's CSRF token (forms put it in `authenticity_token`), null when signed out */
  csrf: string | null;
  /** the request path and query, for sign-in redirects and active navigation */
  url: string;
  /** a message left by the previous request (redirect after a form) */
  flash: Flash | null;
  externalUrl: string;
  /** the markdown this page shows, rendered while the page is built and filled in when it is sent */
  markdown: PageMarkdown;
  /** on a project's or a group's pages: where the header's search looks (GitLab's `project_id` / `group_id`) */
  searchIn?: { param: 'project_id' | 'group_id'; id: number; what: 'project' | 'group' };
}

/** A full path for a URL: each segment encoded, the slashes kept. */
export function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}
