// Every filter of the merge request lists: a case it must include and one it must exclude, the None/Any
// forms, not[…], mutually exclusive pairs and bad values (Grape's 400 bodies).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at, get, idsOf, world } from '../../helpers/merge-requests-list-world.ts';
import { assertSearchIndexesInSync } from '../../helpers/search-index.ts';

type W = Awaited<ReturnType<typeof world>>;
/** ids of the project list of `pub` for a query string, oldest first */
const lister =
  (w: W, h: Record<string, string> = w.meTok) =>
  async (q: string) =>
    idsOf(await get(w.app, `/api/v4/projects/${w.P.pub.id}/merge_requests?sort=asc&${q}`, h));

async function expect400(w: W, q: string, error: string, path = `/api/v4/projects/${w.P.pub.id}/merge_requests`) {
  const res = await get(w.app, `${path}?${q}`, w.meTok);
  assert.equal(res.statusCode, 400, q);
  assert.deepEqual(res.json(), { error }, q);
}

test('state: opened, closed, locked, merged, all (default); other values are refused', async (t) => {
  const w = await world(t);
  const m = {
    opened: await w.mr(w.P.pub),
    closed: await w.mr(w.P.pub, { state: 'closed' }),
    locked: await w.mr(w.P.pub, { state: 'locked' }),
    merged: await w.mr(w.P.pub, { state: 'merged' }),
  };
  const list = lister(w);
  for (const s of ['opened', 'closed', 'locked', 'merged'] as const) assert.deepEqual(await list(`state=${s}`), [m[s].id], s);
  const all = [m.opened.id, m.closed.id, m.locked.id, m.merged.id];
  assert.deepEqual(await list('state=all'), all);
  assert.deepEqual(await list(''), all);
  await expect400(w, 'state=open', 'state does not have a valid value');
});

test('author_id, author_username and their negations; mutually exclusive', async (t) => {
  const w = await world(t);
  const { me, other, alice } = w;
  const byMe = await w.mr(w.P.pub, { author: me });
  const byOther = await w.mr(w.P.pub, { author: other });
  const list = lister(w);
  assert.deepEqual(await list(`author_id=${other.id}`), [byOther.id]);
  assert.deepEqual(await list(`author_id=${alice.id}`), []);
  assert.deepEqual(await list('author_username=other'), [byOther.id]);
  assert.deepEqual(await list('author_username=OTHER'), [byOther.id]);
  assert.deepEqual(await list('author_username=nobody'), []);
  assert.deepEqual(await list(`not[author_id]=${other.id}`), [byMe.id]);
  assert.deepEqual(await list('not[author_username]=me'), [byOther.id]);
  assert.deepEqual(await list('not[author_username]=nobody'), [byMe.id, byOther.id]);
  await expect400(w, `author_id=${me.id}&author_username=me`, 'author_id, author_username are mutually exclusive');
  await expect400(w, `not[author_id]=${me.id}&not[author_username]=me`, 'not[author_id], not[author_username] are mutually exclusive');
  await expect400(w, 'author_id=abc', 'author_id is invalid');
  await expect400(w, 'not[author_id]=abc', 'not[author_id] is invalid');
  // the global list: combined with scope=all
  assert.deepEqual(idsOf(await get(w.app, `/api/v4/merge_requests?scope=all&author_id=${other.id}`, w.meTok)), [byOther.id]);
});

test('assignee_id (id, None, Any), assignee_username, their negations; mutually exclusive; bad values', async (t) => {
  const w = await world(t);
  const { me, other } = w;
  const none = await w.mr(w.P.pub);
  const toMe = await w.mr(w.P.pub, { assignees: [me] });
  const toOther = await w.mr(w.P.pub, { assignees: [other] });
  const list = lister(w);
  assert.deepEqual(await list(`assignee_id=${me.id}`), [toMe.id]);
  assert.deepEqual(await list('assignee_id=None'), [none.id]);
  assert.deepEqual(await list('assignee_id=none'), [none.id]);
  assert.deepEqual(await list('assignee_id=Any'), [toMe.id, toOther.id]);
  assert.deepEqual(await list('assignee_id=ANY'), [toMe.id, toOther.id]);
  assert.deepEqual(await list('assignee_username=other'), [toOther.id]);
  assert.deepEqual(await list('assignee_username[]=me'), [toMe.id]);
  assert.deepEqual(await list('assignee_username=nobody'), []);
  assert.deepEqual(await list(`not[assignee_id]=${me.id}`), [none.id, toOther.id]);
  assert.deepEqual(await list('not[assignee_username]=other'), [none.id, toMe.id]);
  await expect400(w, `assignee_id=${me.id}&assignee_username=me`, 'assignee_id, assignee_username are mutually exclusive');
  await expect400(w, `not[assignee_id]=${me.id}&not[assignee_username]=me`, 'not[assignee_id], not[assignee_username] are mutually exclusive');
  await expect400(w, 'assignee_id=someone', 'assignee_id should be an integer, none, or any, however got someone');
  await expect400(w, 'assignee_username=me,other', 'assignee_username allows one value, but found 2: me, other');
});

test('reviewer_id and reviewer_username (id, None, Any) and their negations; mutually exclusive', async (t) => {
  const w = await world(t);
  const { me, other } = w;
  const none = await w.mr(w.P.pub);
  const byMe = await w.mr(w.P.pub, { reviewers: [me] });
  const byOther = await w.mr(w.P.pub, { reviewers: [other] });
  const list = lister(w);
  assert.deepEqual(await list(`reviewer_id=${other.id}`), [byOther.id]);
  assert.deepEqual(await list('reviewer_id=None'), [none.id]);
  assert.deepEqual(await list('reviewer_id=Any'), [byMe.id, byOther.id]);
  assert.deepEqual(await list('reviewer_username=me'), [byMe.id]);
  assert.deepEqual(await list('reviewer_username=None'), [none.id]);
  assert.deepEqual(await list('reviewer_username=Any'), [byMe.id, byOther.id]);
  assert.deepEqual(await list('reviewer_username=nobody'), []);
  assert.deepEqual(await list(`not[reviewer_id]=${me.id}`), [none.id, byOther.id]);
  assert.deepEqual(await list('not[reviewer_username]=other'), [none.id, byMe.id]);
  await expect400(w, `reviewer_id=${me.id}&reviewer_username=me`, 'reviewer_id, reviewer_username are mutually exclusive');
  await expect400(w, `not[reviewer_id]=${me.id}&not[reviewer_username]=me`, 'not[reviewer_id], not[reviewer_username] are mutually exclusive');
  await expect400(w, 'not[reviewer_id]=None', 'not[reviewer_id] is invalid');
  await expect400(w, 'reviewer_id=x', 'reviewer_id should be an integer, none, or any, however got x');
});

test('merge_user_id and merge_user_username; mutually exclusive', async (t) => {
  const w = await world(t);
  const byOther = await w.mr(w.P.pub, { state: 'merged', mergeUser: w.other });
  await w.mr(w.P.pub, { state: 'merged', mergeUser: w.me });
  await w.mr(w.P.pub);
  const list = lister(w);
  assert.deepEqual(await list(`merge_user_id=${w.other.id}`), [byOther.id]);
  assert.deepEqual(await list('merge_user_username=other'), [byOther.id]);
  assert.deepEqual(await list('merge_user_username=nobody'), []);
  await expect400(w, `merge_user_id=${w.me.id}&merge_user_username=me`, 'merge_user_id, merge_user_username are mutually exclusive');
});

test('labels: every listed label, None, Any (any case), not[labels] excludes any of them', async (t) => {
  const w = await world(t);
  const bug = await w.label(w.P.pub, 'bug');
  const ui = await w.label(w.P.pub, 'ui');
  const groupLabel = await w.label(null, 'team', w.top);
  const none = await w.mr(w.P.pub);
  const bugOnly = await w.mr(w.P.pub, { labels: [bug] });
  const both = await w.mr(w.P.pub, { labels: [bug, ui] });
  const team = await w.mr(w.P.pub, { labels: [groupLabel] });
  const list = lister(w);
  assert.deepEqual(await list('labels=bug'), [bugOnly.id, both.id]);
  assert.deepEqual(await list('labels=bug,ui'), [both.id]);
  assert.deepEqual(await list('labels[]=bug&labels[]=ui'), [both.id]);
  assert.deepEqual(await list('labels=team'), [team.id]);
  assert.deepEqual(await list('labels=Bug'), []);
  assert.deepEqual(await list('labels=bug,missing'), []);
  assert.deepEqual(await list('labels=None'), [none.id]);
  assert.deepEqual(await list('labels=none'), [none.id]);
  assert.deepEqual(await list('labels=Any'), [bugOnly.id, both.id, team.id]);
  assert.deepEqual(await list('labels=ANY'), [bugOnly.id, both.id, team.id]);
  assert.deepEqual(await list('not[labels]=ui'), [none.id, bugOnly.id, team.id]);
  assert.deepEqual(await list('not[labels]=ui,team'), [none.id, bugOnly.id]);
  assert.deepEqual(await list('labels=bug&not[labels]=ui'), [bugOnly.id]);
  // the global list: the same titles in every project
  const away = await w.label(w.P.away, 'bug');
  const elsewhere = await w.mr(w.P.away, { labels: [away] });
  assert.deepEqual(idsOf(await get(w.app, '/api/v4/merge_requests?scope=all&labels=bug&sort=asc', w.meTok)), [bugOnly.id, both.id, elsewhere.id]);
});

test('milestone: a title, None, Any, Upcoming, Started; not[milestone] keeps merge requests without one', async (t) => {
  const w = await world(t);
  const today = new Date();
  const day = (d: number) => new Date(today.getTime() + d * 86_400_000).toISOString().slice(0, 10);
  const v1 = await w.milestone(w.P.pub, 'v1', { due_date: day(10), start_date: day(-5) });
  const v2 = await w.milestone(w.P.pub, 'v2', { due_date: day(30), start_date: day(5) });
  const none = await w.mr(w.P.pub);
  const one = await w.mr(w.P.pub, { milestone: v1 });
  const two = await w.mr(w.P.pub, { milestone: v2 });
  const list = lister(w);
  assert.deepEqual(await list('milestone=v1'), [one.id]);
  assert.deepEqual(await list('milestone=v3'), []);
  assert.deepEqual(await list('milestone=None'), [none.id]);
  assert.deepEqual(await list('milestone=none'), [none.id]);
  assert.deepEqual(await list('milestone=Any'), [one.id, two.id]);
  assert.deepEqual(await list('milestone=Upcoming'), [one.id]);
  assert.deepEqual(await list('milestone=Started'), [one.id]);
  assert.deepEqual(await list('not[milestone]=v1'), [none.id, two.id]);
  assert.deepEqual(await list('not[milestone]=None'), [one.id, two.id]);
});

test('my_reaction_emoji: a name, None, Any; not[my_reaction_emoji]; ignored for anonymous callers', async (t) => {
  const w = await world(t);
  const none = await w.mr(w.P.pub);
  const thumbs = await w.mr(w.P.pub);
  const tada = await w.mr(w.P.pub);
  const theirs = await w.mr(w.P.pub);
  await w.award(thumbs, w.me, 'thumbsup');
  await w.award(tada, w.me, 'tada');
  await w.award(theirs, w.other, 'thumbsup');
  const list = lister(w);
  assert.deepEqual(await list('my_reaction_emoji=thumbsup'), [thumbs.id]);
  assert.deepEqual(await list('my_reaction_emoji=None'), [none.id, theirs.id]);
  assert.deepEqual(await list('my_reaction_emoji=Any'), [thumbs.id, tada.id]);
  assert.deepEqual(await list('not[my_reaction_emoji]=thumbsup'), [none.id, tada.id, theirs.id]);
  assert.deepEqual(await lister(w, w.otherTok)('my_reaction_emoji=thumbsup'), [theirs.id]);
  assert.deepEqual(await lister(w, {})('my_reaction_emoji=thumbsup'), [none.id, thumbs.id, tada.id, theirs.id]);
});

test('created_after/before and updated_after/before: inclusive bounds; bad datetimes are refused', async (t) => {
  const w = await world(t);
  const a = await w.mr(w.P.pub, { created_at: at(10), updated_at: at(40) });
  const b = await w.mr(w.P.pub, { created_at: at(20), updated_at: at(30) });
  const c = await w.mr(w.P.pub, { created_at: at(30), updated_at: at(20) });
  const list = lister(w);
  assert.deepEqual(await list(`created_after=${at(20)}`), [b.id, c.id]);
  assert.deepEqual(await list(`created_before=${at(20)}`), [a.id, b.id]);
  assert.deepEqual(await list(`created_after=${at(11)}&created_before=${at(29)}`), [b.id]);
  assert.deepEqual(await list(`updated_after=${at(30)}`), [a.id, b.id]);
  assert.deepEqual(await list(`updated_before=${at(30)}`), [b.id, c.id]);
  assert.deepEqual(await list('created_after=2026-01-01T00:20:00%2B00:00'), [b.id, c.id]);
  assert.deepEqual(await list('created_before=2025-12-31'), []);
  await expect400(w, 'created_after=yesterday', 'created_after is invalid');
  await expect400(w, 'updated_before=2026-13-45T99', 'updated_before is invalid');
});

test('deployed_after/before and environment: merged into a successful deployment of that environment in the window', async (t) => {
  const w = await world(t);
  const staging = await w.mr(w.P.pub, { state: 'merged' });
  const prod = await w.mr(w.P.pub, { state: 'merged' });
  const failed = await w.mr(w.P.pub, { state: 'merged' });
  await w.mr(w.P.pub);
  await w.deploy(w.P.pub, 'staging', [staging, prod], { finished_at: at(100) });
  await w.deploy(w.P.pub, 'production', [prod], { finished_at: at(200) });
  await w.deploy(w.P.pub, 'production', [failed], { finished_at: at(200), status: 'failed' });
  const list = lister(w);
  assert.deepEqual(await list('environment=staging'), [staging.id, prod.id]);
  assert.deepEqual(await list('environment=production'), [prod.id]);
  assert.deepEqual(await list('environment=review'), []);
  assert.deepEqual(await list(`deployed_after=${at(150)}`), [prod.id]);
  assert.deepEqual(await list(`deployed_before=${at(150)}`), [staging.id, prod.id]);
  assert.deepEqual(await list(`deployed_before=${at(100)}`), []);
  assert.deepEqual(await list(`environment=production&deployed_before=${at(150)}`), []);
  await expect400(w, 'deployed_after=soon', 'deployed_after is invalid');
});

test('search and in: every word in the title or the description, case-insensitive; short queries match a whole column', async (t) => {
  const w = await world(t);
  const a = await w.mr(w.P.pub, { title: 'Fix the Login page', description: 'users could not sign in' });
  const b = await w.mr(w.P.pub, { title: 'Refactor', description: 'login helper cleanup' });
  const c = await w.mr(w.P.pub, { title: 'UI', description: null });
  const list = lister(w);
  assert.deepEqual(await list('search=login'), [a.id, b.id]);
  assert.deepEqual(await list('search=LOGIN%20page'), [a.id]);
  assert.deepEqual(await list('search=login&in=title'), [a.id]);
  assert.deepEqual(await list('search=login&in=description'), [b.id]);
  assert.deepEqual(await list('search=login&in=title,description'), [a.id, b.id]);
  assert.deepEqual(await list('search=login&in=nothing'), [a.id, b.id]);
  assert.deepEqual(await list('search=ui'), [c.id]);
  assert.deepEqual(await list('search=100%25'), []);
  assert.deepEqual(await list('search=%22not%20sign%22'), [a.id]);
});

test('search: the same merge requests for mixed case, phrases, %, _, ", non-ASCII, on every list; edits and deletions at once', async (t) => {
  const w = await world(t);
  const sqlite = w.c.db.dialect === 'sqlite';
  const a = await w.mr(w.P.pub, { title: 'Überarbeitung of the LOGIN_form', description: 'Covers 100% of "edge" cases' });
  const b = await w.mr(w.P.pub, { title: 'login form', description: 'ÉCLAIR login' });
  const list = lister(w);
  const search = (q: string, rest = '') => list(`search=${encodeURIComponent(q)}${rest}`);
  const everywhere = async (q: string) => idsOf(await get(w.app, `/api/v4/merge_requests?scope=all&sort=asc&search=${encodeURIComponent(q)}`, w.meTok));
  assert.deepEqual(await search('LOGIN'), [a.id, b.id]);
  assert.deepEqual(await search('login_'), [a.id], '_ is literal');
  assert.deepEqual(await search('100%'), [a.id], '% is literal');
  assert.deepEqual(await search('"edge" cases'), [a.id]);
  assert.deepEqual(await search('of "edge'), [a.id], 'an unpaired " is part of its term');
  assert.deepEqual(await search('login form'), [a.id, b.id], 'both words in the title');
  assert.deepEqual(await search('form cases'), [], 'not one word in each column');
  assert.deepEqual(await search('clair login', '&in=description'), [b.id]);
  assert.deepEqual(await search('clair login', '&in=title'), []);
  assert.deepEqual(await search('berarbeitung'), [a.id]);
  // SQLite matches the column as it is: its LIKE ignores the case of ASCII letters only
  assert.deepEqual(await search('überarbeitung'), sqlite ? [] : [a.id]);
  assert.deepEqual(await search('éclair login'), sqlite ? [] : [b.id]);
  assert.deepEqual(await everywhere('LOGIN_F'), [a.id]);
  assert.deepEqual(await everywhere('login form'), [a.id, b.id]);
  // the index follows edits and deletions
  await w.c.db.kysely.updateTable('merge_requests').set({ title: 'Nothing here', description: null }).where('id', '=', a.id).execute();
  await w.c.db.kysely.deleteFrom('merge_requests').where('id', '=', b.id).execute();
  assert.deepEqual(await search('login'), []);
  assert.deepEqual(await everywhere('login'), []);
  assert.deepEqual(await search('nothing here'), [a.id]);
  await assertSearchIndexesInSync(w.c);
});

test('source_branch, target_branch, source_project_id, wip, iids[]', async (t) => {
  const w = await world(t);
  const a = await w.mr(w.P.pub, { source_branch: 'feature', target_branch: 'main', title: 'Draft: a', draft: true });
  const b = await w.mr(w.P.pub, { source_branch: 'fix', target_branch: 'stable', source_project_id: w.P.away.id });
  const list = lister(w);
  assert.deepEqual(await list('source_branch=feature'), [a.id]);
  assert.deepEqual(await list('source_branch=nope'), []);
  assert.deepEqual(await list('target_branch=stable'), [b.id]);
  assert.deepEqual(await list(`source_project_id=${w.P.away.id}`), [b.id]);
  assert.deepEqual(await list('wip=yes'), [a.id]);
  assert.deepEqual(await list('wip=no'), [b.id]);
  await expect400(w, 'wip=maybe', 'wip does not have a valid value');
  assert.deepEqual(await list('iids[]=2'), [b.id]);
  assert.deepEqual(await list('iids[]=1&iids[]=2'), [a.id, b.id]);
  assert.deepEqual(await list('iids[]=9'), []);
  await expect400(w, 'iids[]=x', 'iids is invalid');
});

test('approved, approved_by_ids (all of them, at most 5; None, Any) and approver_ids', async (t) => {
  const w = await world(t);
  const { me, other, alice } = w;
  const none = await w.mr(w.P.pub);
  const mine = await w.mr(w.P.pub, { approvedBy: [me] });
  const both = await w.mr(w.P.pub, { approvedBy: [me, other] });
  const list = lister(w);
  assert.deepEqual(await list('approved=yes'), [mine.id, both.id]);
  assert.deepEqual(await list('approved=no'), [none.id]);
  await expect400(w, 'approved=maybe', 'approved does not have a valid value');
  assert.deepEqual(await list(`approved_by_ids[]=${me.id}`), [mine.id, both.id]);
  assert.deepEqual(await list(`approved_by_ids[]=${me.id}&approved_by_ids[]=${other.id}`), [both.id]);
  assert.deepEqual(await list(`approved_by_ids=${me.id},${other.id}`), [both.id]);
  assert.deepEqual(await list(`approved_by_ids[]=${alice.id}`), []);
  assert.deepEqual(await list('approved_by_ids=None'), [none.id]);
  assert.deepEqual(await list('approved_by_ids=Any'), [mine.id, both.id]);
  // only the first five ids count
  assert.deepEqual(await list(`approved_by_ids=${me.id},${other.id},${me.id},${me.id},${me.id},${alice.id}`), [both.id]);
  await expect400(w, 'approved_by_ids=someone', "approved_by_ids should be an array, 'None' or 'Any'");
  // no approval rules exist: nobody is an individual approver
  assert.deepEqual(await list('approver_ids=None'), [none.id, mine.id, both.id]);
  assert.deepEqual(await list('approver_ids=Any'), []);
  assert.deepEqual(await list(`approver_ids[]=${me.id}`), []);
  await expect400(w, 'approver_ids=x', "approver_ids should be an array, 'None' or 'Any'");
});

test('three filters together on the group and global lists', async (t) => {
  const w = await world(t);
  const bug = await w.label(w.P.subpub, 'bug');
  const hit = await w.mr(w.P.subpub, { labels: [bug], assignees: [w.alice], state: 'opened' });
  await w.mr(w.P.subpub, { labels: [bug], assignees: [w.alice], state: 'closed' });
  await w.mr(w.P.subpub, { labels: [bug], assignees: [w.bob] });
  await w.mr(w.P.subpub, { assignees: [w.alice] });
  const q = `labels=bug&state=opened&assignee_id=${w.alice.id}`;
  assert.deepEqual(idsOf(await get(w.app, `/api/v4/groups/${w.top.id}/merge_requests?${q}`, w.meTok)), [hit.id]);
  assert.deepEqual(idsOf(await get(w.app, `/api/v4/merge_requests?scope=all&${q}&order_by=updated_at`, w.meTok)), [hit.id]);
  assert.deepEqual(idsOf(await get(w.app, `/api/v4/merge_requests?scope=all&${q}&order_by=updated_at`)), [hit.id]);
});
