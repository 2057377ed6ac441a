// The project's tab bar: the repository's sections (Files, Commits, Branches, Tags, Compare, Pipelines) for those who
// read the code, Issues with the count of open ones and Boards for those who read the issues, and Settings for those who
// administer the project. The routes say which.
import { raw, type SafeHtml } from '../jsx/jsx-runtime.ts';
import { Tabs } from './components.tsx';

/** What the tab bar knows of a project and its viewer. */
export interface ProjectTabsNav {
  /** "group/project" */
  fullPath: string;
  defaultBranch: string;
  /** may the viewer read the code (files, commits …) */
  readCode: boolean;
  /** the open issues the viewer reads; null or absent when the issues are closed to them */
  openIssues?: number | null;
  /** may the viewer administer the project (a Settings tab to its settings pages) */
  settings?: boolean;
}

export type ProjectSection = 'files' | 'commits' | 'branches' | 'tags' | 'compare' | 'issues' | 'boards';

const seg = (s: string) => s.split('/').map(encodeURIComponent).join('/');
/** Rails' escaping of a ref in a glob segment: slashes and pchar stay. */
export const refSeg = (name: string) => name.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/]/gu, (ch) => encodeURIComponent(ch));

export function ProjectTabs(p: { n: ProjectTabsNav; current: ProjectSection }): SafeHtml {
  const { n } = p;
  const base = `/${seg(n.fullPath)}/-`;
  const ref = refSeg(n.defaultBranch);
  const tabs: { href: string; text: string; current: boolean; count?: number }[] = [];
  if (n.readCode) {
    tabs.push(
      { href: `${base}/tree/${ref}`, text: 'Files', current: p.current === 'files' },
      { href: `${base}/commits/${ref}`, text: 'Commits', current: p.current === 'commits' },
      { href: `${base}/branches`, text: 'Branches', current: p.current === 'branches' },
      { href: `${base}/tags`, text: 'Tags', current: p.current === 'tags' },
      { href: `${base}/compare`, text: 'Compare', current: p.current === 'compare' },
      // the CI/CD area (pipelines, their schedules and triggers); the page itself checks read_pipeline
      { href: `${base}/pipelines`, text: 'Pipelines', current: false },
    );
  }
  if (n.openIssues !== null && n.openIssues !== undefined) {
    tabs.push({ href: `${base}/issues`, text: 'Issues', current: p.current === 'issues', count: n.openIssues });
    tabs.push({ href: `${base}/boards`, text: 'Boards', current: p.current === 'boards' });
  }
  if (n.settings) tabs.push({ href: `${base}/edit`, text: 'Settings', current: false });
  if (!tabs.length) return raw('');
  return <Tabs label="Project" tabs={tabs} />;
}
