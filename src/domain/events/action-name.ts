// What an event's author did, in GitLab's words ("pushed new", "accepted", "commented on"): the API's
// `action_name` and the activity feed's sentence say the same thing.
import { EVENT_ACTIONS } from '../core/activity.ts';
import type { EventView } from './events-query.ts';

/** Event#action_name */
export function actionName(v: Pick<EventView, 'event' | 'push'>): string {
  const a = v.event.action;
  if (a === EVENT_ACTIONS.pushed) {
    const action = v.push?.action;
    return action === 'created' ? 'pushed new' : action === 'removed' ? 'deleted' : 'pushed to';
  }
  if (a === EVENT_ACTIONS.closed) return 'closed';
  if (a === EVENT_ACTIONS.merged) return 'accepted';
  if (a === EVENT_ACTIONS.joined) return 'joined';
  if (a === EVENT_ACTIONS.left) return 'left';
  if (a === EVENT_ACTIONS.expired) return 'removed due to membership expiration from';
  if (a === EVENT_ACTIONS.destroyed) return 'destroyed';
  if (a === EVENT_ACTIONS.commented) return 'commented on';
  if (a === EVENT_ACTIONS.created && v.event.target_type === null) return 'created';
  if (a === EVENT_ACTIONS.approved) return 'approved';
  return 'opened';
}
