// A milestone's page (the web_url of project and group milestones): title, state, dates, description.
import type { MilestoneWithUrl } from '../../../domain/milestones/milestones.service.ts';
import type { WebCtx } from '../../context.ts';
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';
import { Markdown, TimeAgo } from '../components.tsx';
import { type Crumb, Layout } from '../layout.tsx';

export function MilestonePage(p: {
  ctx: WebCtx;
  milestone: MilestoneWithUrl;
  crumbs: Crumb[];
  project?: { fullPath: string; defaultBranch: string };
}): SafeHtml {
  const m = p.milestone;
  const open = m.state === 'active';
  return (
    <Layout ctx={p.ctx} title={`${m.title} · Milestones`} crumbs={[...p.crumbs, { text: 'Milestones' }, { text: m.title }]}>
      <div class="d-flex flex-items-center mb-2">
        <span class={open ? 'State State--open mr-2' : 'State State--closed mr-2'}>{open ? 'Open' : 'Closed'}</span>
        <span class="color-fg-muted">
          Milestone %{m.iid} · created <TimeAgo at={m.created_at} />
        </span>
      </div>
      <h1 class="h2 mb-3">{m.title}</h1>
      <dl class="d-flex mb-3">
        <div class="mr-4">
          <dt class="text-bold">Start date</dt>
          <dd class="ml-0">{m.start_date ?? 'None'}</dd>
        </div>
        <div>
          <dt class="text-bold">Due date</dt>
          <dd class="ml-0">{m.due_date ?? 'None'}</dd>
        </div>
      </dl>
      {m.description ? <Markdown text={m.description} ctx={p.ctx} project={p.project} /> : <p class="color-fg-muted">No description.</p>}
    </Layout>
  );
}
