// Writing tree/project/<relation>.ndjson from the database: each top-level relation read page by page
// (keyset on id), the children of a page loaded with one query per child relation (never one per row),
// every line written with backpressure. Memory is bounded by the page size whatever the project's size.
import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { ISSUE_COLUMNS, type Database, type LabelRow, type MilestoneRow, type NoteRow, type ProjectRow } from '../../../db/schema.ts';
import type { FeatureDeps } from '../../deps.ts';
import { PROJECT_JSON, RELATIONS_DIR } from '../archive/layout.ts';
import { NdjsonWriter } from './ndjson.ts';
import { ciCdSettingsJson, projectFeatureJson, projectJson } from './project-json.ts';
import { labelHookAttrs } from '../../merge-requests/mr-events.ts';
import { writeProtectedBranches, writeProtectedTags } from './protected-refs.ts';

export const PAGE = 500;
/** `in (…)` lists are cut to this many values (SQLite's and PostgreSQL's bind limits are far above) */
const CHUNK = 2000;

export interface TreeCounts {
  /** relation name → items written or imported */
  [relation: string]: number;
}

const bool = (n: number | null | undefined) => n === 1;

async function inChunks<T>(ids: number[], load: (chunk: number[]) => Promise<T[]>): Promise<T[]> {
  if (!ids.length) return [];
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) out.push(...(await load(ids.slice(i, i + CHUNK))));
  return out;
}

function groupBy<T, K>(rows: T[], key: (r: T) => K): Map<K, T[]> {
  const m = new Map<K, T[]>();
  for (const r of rows) {
    const k = key(r);
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return m;
}

/** Keyset pages of a project's rows, oldest id first. */
async function* pages<T extends { id: number }>(load: (afterId: number, limit: number) => Promise<T[]>): AsyncGenerator<T[]> {
  let after = 0;
  for (;;) {
    const rows = await load(after, PAGE);
    if (!rows.length) return;
    yield rows;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1].id;
  }
}

/** A label as GitLab's export writes it: its hook attributes and the project's priority. */
export function labelJson(l: LabelRow) {
  return {
    ...labelHookAttrs(l),
    priorities:
      l.priority !== null && l.project_id !== null
        ? [{ project_id: l.project_id, priority: l.priority, created_at: l.created_at, updated_at: l.updated_at }]
        : [],
  };
}

export function milestoneJson(m: MilestoneRow) {
  return {
    id: m.id,
    title: m.title,
    project_id: m.project_id,
    description: m.description,
    due_date: m.due_date,
    created_at: m.created_at,
    updated_at: m.updated_at,
    state: m.state,
    iid: m.iid,
    start_date: m.start_date,
    group_id: m.group_id,
    events: [],
  };
}

const awardJson = (a: { id: number; name: string; user_id: number; awardable_type: string; created_at: string; updated_at: string }) => ({
  id: a.id,
  name: a.name,
  user_id: a.user_id,
  awardable_type: a.awardable_type,
  created_at: a.created_at,
  updated_at: a.updated_at,
});

/** What the notes of a page need: their award emoji and their authors' names. */
async function notesOf(db: Kysely<Database>, noteableType: string, ids: number[]) {
  const notes = await inChunks(ids, (chunk) =>
    db.selectFrom('notes').selectAll().where('noteable_type', '=', noteableType).where('noteable_id', 'in', chunk).orderBy('id').execute(),
  );
  const noteIds = notes.map((n) => n.id);
  const awards = groupBy(
    await inChunks(noteIds, (chunk) =>
      db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', 'Note').where('awardable_id', 'in', chunk).orderBy('id').execute(),
    ),
    (a) => a.awardable_id,
  );
  const authorIds = [...new Set(notes.map((n) => n.author_id).filter((x): x is number => x !== null))];
  const names = new Map(
    (await inChunks(authorIds, (chunk) => db.selectFrom('users').select(['id', 'name']).where('id', 'in', chunk).execute())).map((u) => [u.id, u.name]),
  );
  const json = (n: NoteRow, noteableTypeName: string) => ({
    id: n.id,
    note: n.body,
    noteable_type: noteableTypeName,
    author_id: n.author_id,
    created_at: n.created_at,
    updated_at: n.updated_at,
    project_id: n.project_id,
    attachment: { url: null },
    line_code: null,
    commit_id: null,
    system: bool(n.system),
    st_diff: null,
    updated_by_id: null,
    type: n.type,
    position: n.position ? JSON.parse(n.position) : null,
    original_position: n.position ? JSON.parse(n.position) : null,
    resolved_at: n.resolved_at,
    resolved_by_id: n.resolved_by_id,
    resolvable: bool(n.resolvable),
    discussion_id: n.discussion_id,
    change_position: null,
    resolved_by_push: null,
    confidential: null,
    internal: bool(n.internal),
    last_edited_at: n.updated_at,
    author: { name: n.author_id !== null ? (names.get(n.author_id) ?? 'Ghost User') : 'Ghost User' },
    award_emoji: (awards.get(n.id) ?? []).map(awardJson),
    events: [],
  });
  return { byNoteable: groupBy(notes, (n) => n.noteable_id), json };
}

async function labelsById(db: Kysely<Database>, ids: number[]): Promise<Map<number, LabelRow>> {
  const rows = await inChunks([...new Set(ids)], (chunk) => db.selectFrom('labels').selectAll().where('id', 'in', chunk).execute());
  return new Map(rows.map((l) => [l.id, l]));
}

async function milestonesById(db: Kysely<Database>, ids: number[]): Promise<Map<number, MilestoneRow>> {
  const rows = await inChunks([...new Set(ids)], (chunk) => db.selectFrom('milestones').selectAll().where('id', 'in', chunk).execute());
  return new Map(rows.map((m) => [m.id, m]));
}

async function writeProjectMembers(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) {
  for await (const rows of pages((after, limit) =>
    db
      .selectFrom('members')
      .innerJoin('users', 'users.id', 'members.user_id')
      .select([
        'members.id',
        'members.access_level',
        'members.user_id',
        'members.expires_at',
        'members.created_by_id',
        'members.created_at',
        'members.updated_at',
        'users.username',
        'users.email',
        'users.name',
        'users.public_email',
      ])
      .where('members.source_type', '=', 'Project')
      .where('members.source_id', '=', project.id)
      .where('members.id', '>', after)
      .orderBy('members.id')
      .limit(limit)
      .execute(),
  )) {
    for (const m of rows) {
      await out.write({
        id: m.id,
        access_level: m.access_level,
        source_type: 'Project',
        user_id: m.user_id,
        notification_level: 3,
        created_at: m.created_at,
        updated_at: m.updated_at,
        created_by_id: m.created_by_id,
        invite_email: null,
        invite_token: null,
        invite_accepted_at: null,
        requested_at: null,
        expires_at: m.expires_at,
        user: { id: m.user_id, public_email: m.public_email, username: m.username, email: m.email, name: m.name },
      });
    }
  }
}

async function writeLabels(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) {
  for await (const rows of pages((after, limit) =>
    db.selectFrom('labels').selectAll().where('project_id', '=', project.id).where('id', '>', after).orderBy('id').limit(limit).execute(),
  )) {
    for (const l of rows) await out.write(labelJson(l));
  }
  // Group labels the project's merge requests and issues use, as GitLab exports them (type GroupLabel).
  const used = await db
    .selectFrom('merge_request_labels')
    .innerJoin('merge_requests', 'merge_requests.id', 'merge_request_labels.merge_request_id')
    .innerJoin('labels', 'labels.id', 'merge_request_labels.label_id')
    .select('labels.id')
    .distinct()
    .where('merge_requests.project_id', '=', project.id)
    .where('labels.group_id', 'is not', null)
    .execute();
  const groupLabels = await labelsById(
    db,
    used.map((r) => r.id),
  );
  for (const l of [...groupLabels.values()].sort((a, b) => a.id - b.id)) await out.write(labelJson(l));
}

async function writeMilestones(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) {
  for await (const rows of pages((after, limit) =>
    db.selectFrom('milestones').selectAll().where('project_id', '=', project.id).where('id', '>', after).orderBy('id').limit(limit).execute(),
  )) {
    for (const m of rows) await out.write(milestoneJson(m));
  }
}

async function writeMergeRequests(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) {
  for await (const mrs of pages((after, limit) =>
    db.selectFrom('merge_requests').selectAll().where('project_id', '=', project.id).where('id', '>', after).orderBy('id').limit(limit).execute(),
  )) {
    const ids = mrs.map((m) => m.id);
    const byMr = <T extends { merge_request_id: number | null }>(rows: T[]) => groupBy(rows, (r) => r.merge_request_id ?? 0);
    const notes = await notesOf(db, 'MergeRequest', ids);
    const awards = groupBy(
      await inChunks(ids, (c) =>
        db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', 'MergeRequest').where('awardable_id', 'in', c).orderBy('id').execute(),
      ),
      (a) => a.awardable_id,
    );
    const approvals = byMr(
      await inChunks(ids, (c) => db.selectFrom('approvals').selectAll().where('merge_request_id', 'in', c).orderBy('created_at').execute()),
    );
    const assignees = byMr(
      await inChunks(ids, (c) => db.selectFrom('merge_request_assignees').selectAll().where('merge_request_id', 'in', c).orderBy('created_at').execute()),
    );
    const reviewers = byMr(
      await inChunks(ids, (c) => db.selectFrom('merge_request_reviewers').selectAll().where('merge_request_id', 'in', c).orderBy('created_at').execute()),
    );
    const labelLinks = await inChunks(ids, (c) =>
      db.selectFrom('merge_request_labels').selectAll().where('merge_request_id', 'in', c).orderBy('created_at').orderBy('label_id').execute(),
    );
    const events = await resourceEventsOf(db, 'merge_request_id', ids);
    const labels = await labelsById(
      db,
      labelLinks.map((l) => l.label_id),
    );
    const milestones = await milestonesById(
      db,
      mrs.map((m) => m.milestone_id).filter((x): x is number => x !== null),
    );
    const linksBy = byMr(labelLinks);

    for (const mr of mrs) {
      const milestone = mr.milestone_id !== null ? milestones.get(mr.milestone_id) : undefined;
      const assigneeRows = assignees.get(mr.id) ?? [];
      await out.write({
        id: mr.id,
        target_branch: mr.target_branch,
        source_branch: mr.source_branch,
        source_project_id: mr.source_project_id,
        author_id: mr.author_id,
        assignee_id: assigneeRows[0]?.user_id ?? null,
        title: mr.title,
        created_at: mr.created_at,
        updated_at: mr.updated_at,
        state: mr.state,
        merge_status: mr.merge_status,
        target_project_id: mr.project_id,
        iid: mr.iid,
        description: mr.description,
        updated_by_id: null,
        merge_error: mr.merge_error,
        merge_params: JSON.parse(mr.merge_params || '{}'),
        merge_when_pipeline_succeeds: bool(mr.merge_when_pipeline_succeeds),
        merge_user_id: mr.merge_user_id,
        merge_commit_sha: mr.merge_commit_sha,
        squash_commit_sha: mr.squash_commit_sha,
        in_progress_merge_commit_sha: null,
        lock_version: 0,
        time_estimate: mr.time_estimate,
        squash: bool(mr.squash),
        last_edited_at: null,
        last_edited_by_id: null,
        discussion_locked: mr.discussion_locked === null ? null : bool(mr.discussion_locked),
        draft: bool(mr.draft),
        allow_maintainer_to_push: bool(mr.allow_collaboration),
        diff_head_sha: mr.sha,
        source_branch_sha: mr.sha,
        target_branch_sha: null,
        merge_request_diff: {
          state: 'collected',
          base_commit_sha: mr.diff_base_sha,
          head_commit_sha: mr.sha,
          start_commit_sha: mr.diff_base_sha,
          created_at: mr.created_at,
          updated_at: mr.updated_at,
        },
        metrics: {
          merged_at: mr.merged_at,
          merged_by_id: mr.state === 'merged' ? mr.merge_user_id : null,
          latest_closed_at: mr.closed_at,
          latest_closed_by_id: mr.closed_by_id,
          created_at: mr.created_at,
          updated_at: mr.updated_at,
        },
        milestone: milestone ? milestoneJson(milestone) : undefined,
        notes: (notes.byNoteable.get(mr.id) ?? []).map((n) => notes.json(n, 'MergeRequest')),
        award_emoji: (awards.get(mr.id) ?? []).map(awardJson),
        approvals: (approvals.get(mr.id) ?? []).map((a) => ({ user_id: a.user_id, created_at: a.created_at, updated_at: a.created_at })),
        merge_request_assignees: assigneeRows.map((a) => ({ user_id: a.user_id, created_at: a.created_at })),
        merge_request_reviewers: (reviewers.get(mr.id) ?? []).map((r) => ({ user_id: r.user_id, created_at: r.created_at, state: r.state })),
        label_links: (linksBy.get(mr.id) ?? []).flatMap((l) => {
          const label = labels.get(l.label_id);
          return label ? [{ target_type: 'MergeRequest', created_at: l.created_at, updated_at: l.created_at, label: labelJson(label) }] : [];
        }),
        ...events(mr.id),
        events: [],
        timelogs: [],
      });
    }
  }
}

async function writeIssues(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) {
  for await (const issues of pages((after, limit) =>
    db.selectFrom('issues').select(ISSUE_COLUMNS).where('project_id', '=', project.id).where('id', '>', after).orderBy('id').limit(limit).execute(),
  )) {
    const ids = issues.map((i) => i.id);
    const byIssue = <T extends { issue_id: number }>(rows: T[]) => groupBy(rows, (r) => r.issue_id);
    const notes = await notesOf(db, 'Issue', ids);
    const awards = groupBy(
      await inChunks(ids, (c) =>
        db.selectFrom('award_emoji').selectAll().where('awardable_type', '=', 'Issue').where('awardable_id', 'in', c).orderBy('id').execute(),
      ),
      (a) => a.awardable_id,
    );
    const assignees = byIssue(
      await inChunks(ids, (c) => db.selectFrom('issue_assignees').selectAll().where('issue_id', 'in', c).orderBy('created_at').orderBy('user_id').execute()),
    );
    const labelLinks = await inChunks(ids, (c) =>
      db.selectFrom('issue_labels').selectAll().where('issue_id', 'in', c).orderBy('created_at').orderBy('label_id').execute(),
    );
    const labels = await labelsById(
      db,
      labelLinks.map((l) => l.label_id),
    );
    const linksBy = byIssue(labelLinks);
    const events = await resourceEventsOf(db, 'issue_id', ids);
    // links from these issues to issues of the same project (by iid: ids change on import)
    const issueLinks = groupBy(
      await inChunks(ids, (c) =>
        db
          .selectFrom('issue_links')
          .innerJoin('issues as t', 't.id', 'issue_links.target_id')
          .select(['issue_links.source_id', 'issue_links.link_type', 'issue_links.created_at', 't.iid as target_iid'])
          .where('issue_links.source_id', 'in', c)
          .where('t.project_id', '=', project.id)
          .orderBy('issue_links.id')
          .execute(),
      ),
      (l) => l.source_id,
    );
    const milestones = await milestonesById(
      db,
      issues.map((i) => i.milestone_id).filter((x): x is number => x !== null),
    );
    for (const i of issues) {
      const milestone = i.milestone_id !== null ? milestones.get(i.milestone_id) : undefined;
      await out.write({
        id: i.id,
        title: i.title,
        author_id: i.author_id,
        project_id: i.project_id,
        created_at: i.created_at,
        updated_at: i.updated_at,
        description: i.description,
        iid: i.iid,
        updated_by_id: i.updated_by_id,
        weight: i.weight,
        confidential: bool(i.confidential),
        due_date: i.due_date,
        lock_version: 0,
        time_estimate: i.time_estimate,
        relative_position: i.relative_position,
        last_edited_at: i.last_edited_at,
        last_edited_by_id: i.last_edited_by_id,
        discussion_locked: i.discussion_locked === null ? null : bool(i.discussion_locked),
        closed_at: i.closed_at,
        closed_by_id: i.closed_by_id,
        state: i.state,
        issue_type: i.issue_type,
        milestone: milestone ? milestoneJson(milestone) : undefined,
        notes: (notes.byNoteable.get(i.id) ?? []).map((n) => notes.json(n, 'Issue')),
        award_emoji: (awards.get(i.id) ?? []).map(awardJson),
        issue_assignees: (assignees.get(i.id) ?? []).map((a) => ({ user_id: a.user_id })),
        label_links: (linksBy.get(i.id) ?? []).flatMap((l) => {
          const label = labels.get(l.label_id);
          return label ? [{ target_type: 'Issue', created_at: l.created_at, updated_at: l.created_at, label: labelJson(label) }] : [];
        }),
        ...events(i.id),
        issue_links: (issueLinks.get(i.id) ?? []).map((l) => ({ target_iid: l.target_iid, link_type: l.link_type, created_at: l.created_at })),
        events: [],
        timelogs: [],
      });
    }
  }
}

/** Issue boards with their lists (GitLab's boards relation: lists with their label or milestone). */
async function writeBoards(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) {
  const boards = await db.selectFrom('boards').selectAll().where('project_id', '=', project.id).orderBy('id').execute();
  if (!boards.length) return;
  const lists = await db
    .selectFrom('board_lists')
    .selectAll()
    .where(
      'board_id',
      'in',
      boards.map((b) => b.id),
    )
    .orderBy('id')
    .execute();
  const labels = await labelsById(
    db,
    lists.map((l) => l.label_id).filter((x): x is number => x !== null),
  );
  const milestones = await milestonesById(
    db,
    lists.map((l) => l.milestone_id).filter((x): x is number => x !== null),
  );
  for (const b of boards) {
    await out.write({
      id: b.id,
      project_id: project.id,
      name: b.name,
      hide_backlog_list: bool(b.hide_backlog_list),
      hide_closed_list: bool(b.hide_closed_list),
      milestone_id: null,
      group_id: null,
      weight: null,
      created_at: b.created_at,
      updated_at: b.updated_at,
      lists: lists
        .filter((l) => l.board_id === b.id)
        .map((l) => {
          const label = l.label_id !== null ? labels.get(l.label_id) : undefined;
          const milestone = l.milestone_id !== null ? milestones.get(l.milestone_id) : undefined;
          return {
            id: l.id,
            board_id: b.id,
            list_type: l.list_type,
            position: l.position,
            user_id: l.user_id,
            max_issue_count: 0,
            max_issue_weight: 0,
            created_at: l.created_at,
            updated_at: l.updated_at,
            ...(label ? { label: labelJson(label) } : {}),
            ...(milestone ? { milestone: milestoneJson(milestone) } : {}),
          };
        }),
    });
  }
}

/** The resource events (label, milestone, state) of merge requests or issues, as GitLab exports them. */
async function resourceEventsOf(db: Kysely<Database>, key: 'merge_request_id' | 'issue_id', ids: number[]) {
  const owner = (r: { merge_request_id: number | null; issue_id: number | null }) => r[key] ?? 0;
  const labelEvents = await inChunks(ids, (c) => db.selectFrom('resource_label_events').selectAll().where(key, 'in', c).orderBy('id').execute());
  const milestoneEvents = await inChunks(ids, (c) => db.selectFrom('resource_milestone_events').selectAll().where(key, 'in', c).orderBy('id').execute());
  const stateEvents = groupBy(
    await inChunks(ids, (c) => db.selectFrom('resource_state_events').selectAll().where(key, 'in', c).orderBy('id').execute()),
    owner,
  );
  const labels = await labelsById(
    db,
    labelEvents.map((e) => e.label_id).filter((x): x is number => x !== null),
  );
  const milestones = await milestonesById(
    db,
    milestoneEvents.map((e) => e.milestone_id).filter((x): x is number => x !== null),
  );
  const labelEventsBy = groupBy(labelEvents, owner);
  const milestoneEventsBy = groupBy(milestoneEvents, owner);
  return (id: number) => ({
    resource_label_events: (labelEventsBy.get(id) ?? []).map((e) => {
      const label = e.label_id !== null ? labels.get(e.label_id) : undefined;
      return { action: e.action, user_id: e.user_id, created_at: e.created_at, label: label ? labelJson(label) : null };
    }),
    resource_milestone_events: (milestoneEventsBy.get(id) ?? []).map((e) => {
      const m = e.milestone_id !== null ? milestones.get(e.milestone_id) : undefined;
      return { action: e.action, state: e.state, user_id: e.user_id, created_at: e.created_at, milestone: m ? milestoneJson(m) : null };
    }),
    resource_state_events: (stateEvents.get(id) ?? []).map((e) => ({
      state: e.state,
      user_id: e.user_id,
      created_at: e.created_at,
      source_commit: e.source_commit,
    })),
  });
}

const STATUS_TYPES: Record<string, string> = { build: 'Ci::Build', bridge: 'Ci::Bridge', generic: 'GenericCommitStatus' };

/** The worst status of a stage's jobs (Ci::HasStatus composite status, simplified). */
function stageStatus(statuses: string[]): string {
  for (const s of ['failed', 'canceled', 'running', 'pending', 'preparing', 'waiting_for_resource', 'created', 'manual', 'scheduled', 'skipped', 'success']) {
    if (statuses.includes(s)) return s;
  }
  return statuses[0] ?? 'created';
}

async function writePipelines(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) {
  for await (const pipelines of pages((after, limit) =>
    db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', project.id).where('id', '>', after).orderBy('id').limit(limit).execute(),
  )) {
    const ids = pipelines.map((p) => p.id);
    const builds = groupBy(
      await inChunks(ids, (c) => db.selectFrom('ci_builds').selectAll().where('pipeline_id', 'in', c).orderBy('stage_idx').orderBy('id').execute()),
      (b) => b.pipeline_id,
    );
    for (const p of pipelines) {
      const stages = groupBy(builds.get(p.id) ?? [], (b) => `${b.stage_idx}\u0000${b.stage}`);
      await out.write({
        id: p.id,
        ref: p.ref,
        sha: p.sha,
        before_sha: p.before_sha,
        created_at: p.created_at,
        updated_at: p.updated_at,
        tag: bool(p.tag),
        yaml_errors: p.yaml_errors,
        committed_at: p.committed_at,
        project_id: p.project_id,
        status: p.status,
        started_at: p.started_at,
        finished_at: p.finished_at,
        duration: p.duration,
        queued_duration: p.queued_duration,
        user_id: p.user_id,
        failure_reason: p.failure_reason,
        iid: p.iid,
        source: p.source,
        protected: false,
        config_source: 'repository_source',
        coverage: p.coverage,
        variables: JSON.parse(p.variables || '[]'),
        notes: [],
        stages: [...stages.values()].map((jobs) => ({
          name: jobs[0].stage,
          status: stageStatus(jobs.map((j) => j.status)),
          position: jobs[0].stage_idx,
          created_at: jobs[0].created_at,
          updated_at: jobs[0].updated_at,
          statuses: jobs.map((b) => ({
            id: b.id,
            project_id: b.project_id,
            status: b.status,
            finished_at: b.finished_at,
            created_at: b.created_at,
            updated_at: b.updated_at,
            started_at: b.started_at,
            queued_at: b.queued_at,
            coverage: b.coverage,
            name: b.name,
            options: JSON.parse(b.options || '{}'),
            allow_failure: bool(b.allow_failure),
            stage: b.stage,
            stage_idx: b.stage_idx,
            tag: bool(b.tag),
            ref: b.ref,
            sha: b.sha,
            user_id: b.user_id,
            type: STATUS_TYPES[b.type] ?? 'Ci::Build',
            target_url: b.target_url,
            description: b.description,
            erased_at: b.erased_at,
            artifacts_expire_at: b.artifacts_expire_at,
            environment: b.environment,
            yaml_variables: JSON.parse(b.yaml_variables || '[]'),
            tag_list: JSON.parse(b.tag_list || '[]'),
            when: b.when,
            timeout: b.timeout,
            retried: bool(b.retried),
            failure_reason: b.failure_reason,
            scheduling_type: 'stage',
          })),
        })),
      });
    }
  }
}

/** Environments with their deployments nested (Hearth's shape; GitLab's export has no environments). */
async function writeEnvironments(db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) {
  for await (const envs of pages((after, limit) =>
    db.selectFrom('environments').selectAll().where('project_id', '=', project.id).where('id', '>', after).orderBy('id').limit(limit).execute(),
  )) {
    const deployments = groupBy(
      await inChunks(
        envs.map((e) => e.id),
        (c) => db.selectFrom('deployments').selectAll().where('environment_id', 'in', c).orderBy('id').execute(),
      ),
      (d) => d.environment_id,
    );
    for (const e of envs) {
      await out.write({
        id: e.id,
        name: e.name,
        slug: e.slug,
        external_url: e.external_url,
        state: e.state,
        tier: e.tier,
        created_at: e.created_at,
        updated_at: e.updated_at,
        deployments: (deployments.get(e.id) ?? []).map((d) => ({
          id: d.id,
          iid: d.iid,
          ref: d.ref,
          tag: bool(d.tag),
          sha: d.sha,
          user_id: d.user_id,
          status: d.status,
          created_at: d.created_at,
          updated_at: d.updated_at,
          finished_at: d.finished_at,
        })),
      });
    }
  }
}

const RELATIONS: [string, (db: Kysely<Database>, project: ProjectRow, out: NdjsonWriter) => Promise<void>][] = [
  ['labels', writeLabels],
  ['milestones', writeMilestones],
  ['issues', writeIssues],
  ['project_members', writeProjectMembers],
  ['merge_requests', writeMergeRequests],
  ['ci_pipelines', writePipelines],
  ['environments', writeEnvironments],
  ['protected_branches', writeProtectedBranches],
  ['protected_tags', writeProtectedTags],
  ['boards', writeBoards],
];

export async function writeTree(deps: FeatureDeps, project: ProjectRow, dir: string, opts: { description?: string } = {}): Promise<TreeCounts> {
  const db = deps.db.kysely;
  const relDir = path.join(dir, RELATIONS_DIR);
  fs.mkdirSync(relDir, { recursive: true });
  fs.writeFileSync(path.join(dir, PROJECT_JSON), JSON.stringify(projectJson(project, opts.description)));
  // single-object relations: one JSON without a trailing newline (GitLab's write_relation)
  fs.writeFileSync(path.join(relDir, 'project_feature.ndjson'), JSON.stringify(projectFeatureJson(project)));
  fs.writeFileSync(path.join(relDir, 'ci_cd_settings.ndjson'), JSON.stringify(ciCdSettingsJson(project)));
  const counts: TreeCounts = {};
  for (const [name, write] of RELATIONS) {
    const out = new NdjsonWriter(path.join(relDir, `${name}.ndjson`));
    try {
      await write(db, project, out);
    } finally {
      await out.close();
    }
    counts[name] = out.count;
  }
  return counts;
}
