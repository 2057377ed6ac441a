// Approvals of a merge request (GitLab lib/api/merge_request_approvals.rb, MergeRequests::ApprovalService
// and RemoveApprovalService, Approvable): one approval per user, by those with approve_merge_request
// (Developer and above); the author only where the project allows it (merge_requests_author_approval,
// off by default). Approving writes the system note, the reviewer state and the merge_request event
// ('approved' / 'unapproved') in one transaction.
import type { Kysely } from 'kysely';
import type { Database, MergeRequestRow } from '../../db/schema.ts';
import { isUniqueViolation } from '../../db/sql.ts';
import { Errors } from '../../lib/errors.ts';
import { nowIso } from '../../lib/time.ts';
import type { Actor } from '../access/actor.ts';
import { Policy } from '../access/policy.ts';
import type { FeatureDeps } from '../deps.ts';
import { settingsOf } from '../core/project-settings.ts';
import type { FoundMergeRequest } from './merge-requests.service.ts';
import type { NotesService } from '../notes/notes.service.ts';

export interface ApprovalRow {
  user_id: number;
  created_at: string;
}

export interface ApprovalState {
  approvals: ApprovalRow[];
  userHasApproved: boolean;
  userCanApprove: boolean;
}

/** Writes the merge_request system-hook event in the approval's transaction (the core service's recordEvent). */
export type RecordEvent = (trx: Kysely<Database>, mr: MergeRequestRow, action: 'approved' | 'unapproved') => Promise<void>;

export class ApprovalsService {
  constructor(
    readonly deps: FeatureDeps,
    private readonly notes: NotesService,
  ) {}

  private get db(): Kysely<Database> {
    return this.deps.db.kysely;
  }

  /** The approvals, oldest first. */
  async approvals(mergeRequestId: number, db: Kysely<Database> = this.db): Promise<ApprovalRow[]> {
    return db
      .selectFrom('approvals')
      .select(['user_id', 'created_at'])
      .where('merge_request_id', '=', mergeRequestId)
      .orderBy('created_at')
      .orderBy('user_id')
      .execute();
  }

  /** approve_merge_request, and the author rule of the project. */
  private mayApprove(actor: Actor, f: FoundMergeRequest): boolean {
    const user = actor.user;
    if (!user || !f.access.abilities.has('approve_merge_request')) return false;
    if (f.mr.author_id === user.id && settingsOf(f.project).merge_requests_author_approval !== true) return false;
    return true;
  }

  async state(actor: Actor, f: FoundMergeRequest): Promise<ApprovalState> {
    const approvals = await this.approvals(f.mr.id);
    const userHasApproved = !!actor.user && approvals.some((a) => a.user_id === actor.user!.id);
    return { approvals, userHasApproved, userCanApprove: !userHasApproved && this.mayApprove(actor, f) };
  }

  /**
   * POST …/approve: 403 without approve_merge_request, 409 when `sha` is not the source head, 401 when the
   * user cannot approve (already approved, or the author) — GitLab's answers.
   */
  async approve(actor: Actor, f: FoundMergeRequest, sha: string | undefined, recordEvent: RecordEvent): Promise<void> {
    Policy.require(f.access, 'approve_merge_request', 'Merge Request', 'read_merge_request');
    if (sha !== undefined && f.mr.sha !== sha) throw Errors.conflict(`SHA does not match HEAD of source branch: ${f.mr.sha ?? ''}`);
    if (!this.mayApprove(actor, f)) throw Errors.unauthorized();
    const user = actor.user!;
    try {
      await this.db.transaction().execute(async (trx) => {
        const existing = await trx
          .selectFrom('approvals')
          .select('user_id')
          .where('merge_request_id', '=', f.mr.id)
          .where('user_id', '=', user.id)
          .executeTakeFirst();
        if (existing) throw Errors.unauthorized();
        await trx.insertInto('approvals').values({ merge_request_id: f.mr.id, user_id: user.id, created_at: nowIso() }).execute();
        await this.reviewerState(trx, f.mr.id, user.id, 'approved');
        await this.notes.addSystemNote(trx, 'MergeRequest', f.mr, user.id, 'approved this merge request');
        await recordEvent(trx, f.mr, 'approved');
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw Errors.unauthorized();
      throw e;
    }
  }

  /** POST …/unapprove: 403 without approve_merge_request, 404 when the user has not approved. */
  async unapprove(actor: Actor, f: FoundMergeRequest, recordEvent: RecordEvent): Promise<void> {
    Policy.require(f.access, 'approve_merge_request', 'Merge Request', 'read_merge_request');
    const user = actor.user!;
    await this.db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('approvals').where('merge_request_id', '=', f.mr.id).where('user_id', '=', user.id).executeTakeFirst();
      if (!gone.numDeletedRows) throw Errors.notFound();
      await this.reviewerState(trx, f.mr.id, user.id, 'unapproved');
      await this.notes.addSystemNote(trx, 'MergeRequest', f.mr, user.id, 'unapproved this merge request');
      await recordEvent(trx, f.mr, 'unapproved');
    });
  }

  /** A reviewer who approves or takes the approval back: their review state follows. */
  private async reviewerState(trx: Kysely<Database>, mergeRequestId: number, userId: number, state: string): Promise<void> {
    await trx.updateTable('merge_request_reviewers').set({ state }).where('merge_request_id', '=', mergeRequestId).where('user_id', '=', userId).execute();
  }
}
