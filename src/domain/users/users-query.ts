// The user list as GitLab's UsersFinder builds it (app/finders/users_finder.rb, app/models/user.rb):
// filters, orderings and the cursor keyset over them.
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { todayDate } from '../../lib/time.ts';
import type { Database, UserRow } from '../../db/schema.ts';
import type { DialectName } from '../../db/connect.ts';
import { ciEquals, inSearchIndex, inSubtreeOf, searchIndexIds, searchMatch, type SearchIndexes } from '../../db/sql.ts';
import { decodeCursor, encodeCursor } from '../../lib/pagination.ts';

export const USER_ORDER_COLUMNS = ['id', 'name', 'username', 'created_at', 'updated_at'] as const;
export type UserOrderColumn = (typeof USER_ORDER_COLUMNS)[number];
export type SortDirection = 'asc' | 'desc';
export interface UserOrder {
  column: UserOrderColumn;
  direction: SortDirection;
}

/** HasUserType: the types that are people or act for them; every other type is "internal". */
export const NON_INTERNAL_USER_TYPES = ['human', 'project_bot', 'service_user', 'service_account'] as const;
const BOT_USER_TYPES = new Set([
  'alert_bot',
  'project_bot',
  'support_bot',
  'visual_review_bot',
  'migration_bot',
  'security_bot',
  'automation_bot',
  'security_policy_bot',
  'admin_bot',
  'suggested_reviewers_bot',
  'service_account',
  'llm_bot',
  'duo_code_review_bot',
]);
/**
 * What non-administrators may list: every state but User::FORBIDDEN_SEARCH_STATES (blocked, banned,
 * ldap_blocked). Spelled as the allowed states so that an index on `state` can serve the count.
 */
export const LISTED_STATES = ['active', 'deactivated', 'blocked_pending_approval'] as const;
/** The states for which GitLab's `user.blocked?` is true. */
const BLOCKED_STATES = new Set(['blocked', 'ldap_blocked', 'blocked_pending_approval', 'banned']);

export const isInternal = (u: Pick<UserRow, 'user_type'>): boolean => !(NON_INTERNAL_USER_TYPES as readonly string[]).includes(u.user_type);
export const isBot = (u: Pick<UserRow, 'user_type' | 'bot'>): boolean => u.bot === 1 || BOT_USER_TYPES.has(u.user_type);
export const isBlocked = (u: Pick<UserRow, 'state'>): boolean => BLOCKED_STATES.has(u.state);

/** Filters after the API layer has removed what the viewer may not use. */
export interface UserFilters {
  username?: string;
  search?: string;
  active?: boolean;
  blocked?: boolean;
  external?: boolean;
  exclude_external?: boolean;
  exclude_internal?: boolean;
  without_project_bots?: boolean;
  created_after?: string;
  created_before?: string;
  extern_uid?: string;
  provider?: string;
  two_factor?: string;
  without_projects?: boolean;
  admins?: boolean;
  custom_attributes?: Record<string, string>;
}

/** The user list before its columns are chosen. */
// biome-ignore lint/complexity/noBannedTypes: Kysely's type of a query with no column chosen yet
export type UserQuery = SelectQueryBuilder<Database, 'users', {}>;

/** The words of a fuzzy search that match anywhere: 3 characters or more, a "quoted phrase" as one (Gitlab::SQL::Pattern). */
const fuzzyWords = (query: string): string[] => (query.match(/"[^"]+"|\S+/g) ?? []).map((w) => w.replace(/^"|"$/g, '')).filter((w) => w.length >= 3);

/** Words of three characters or more match anywhere; a shorter query must match the whole value (Gitlab::SQL::Pattern). */
export function fuzzy(column: string, query: string): Expression<SqlBool> {
  const words = fuzzyWords(query);
  if (!words.length) return ciEquals(column, query);
  const like = (w: string) => '%' + w.toLowerCase().replace(/[\\%_]/g, (ch) => '\\' + ch) + '%';
  return sql<SqlBool>`(${sql.join(
    words.map((w) => sql`lower(${sql.ref(column)}) like ${like(w)} escape '\\'`),
    sql` and `,
  )})`;
}

/**
 * `fuzzy` in any of `columns` of `table` (`a or b`, to be parenthesised by the caller). On SQLite, when the
 * table's search index can answer (every word of 3 characters or more), the rows come from the index and
 * `fuzzy` tests each of them.
 */
export function fuzzyAny<T extends keyof SearchIndexes>(dialect: DialectName, table: T, columns: SearchIndexes[T][], query: string): Expression<SqlBool> {
  const any = sql<SqlBool>`${sql.join(
    columns.map((c) => fuzzy(`${table}.${c}`, query)),
    sql` or `,
  )}`;
  const words = fuzzyWords(query);
  const indexed = dialect === 'sqlite' && words.length ? inSearchIndex(`${table}.id`, table, columns, words) : null;
  return indexed ? sql<SqlBool>`(${indexed} and (${any}))` : any;
}

/**
 * The filtered list, unordered. `admin` widens what is visible (blocked users) and what search
 * matches (private email addresses).
 */
export function filterUsers(db: Kysely<Database>, dialect: DialectName, f: UserFilters, admin: boolean): UserQuery {
  let q: UserQuery = db.selectFrom('users');
  if (!admin) q = q.where('users.state', 'in', [...LISTED_STATES]);
  if (f.username !== undefined) q = q.where(ciEquals('users.username', f.username));
  if (f.admins) q = q.where('users.is_admin', '=', 1);
  // A blank search is no filter (Rails `present?`); "@" alone is a search for nothing.
  if (f.search?.trim()) {
    const term = f.search.replace(/^@/, '').trim().toLowerCase();
    if (!term) return q.where(sql<SqlBool>`1 = 0`);
    const emailColumn = admin ? 'email' : 'public_email';
    const email = ciEquals(`users.${emailColumn}`, term);
    // SQLite: the users of the e-mail address and those the search index finds (words of 3 characters or more),
    // one set of ids that drives the query, each tested by the search (a condition of its own, an OR of two
    // indexes lost to the state's index in the plan)
    const words = fuzzyWords(term);
    const match = dialect === 'sqlite' && words.length ? searchMatch('users', ['name', 'username'], words) : null;
    if (match)
      q = q.where(
        sql<SqlBool>`users.id in (select u.id from "users" as "u" where ${ciEquals(`u.${emailColumn}`, term)} union ${searchIndexIds('users', match)})`,
      );
    q = q.where(sql<SqlBool>`(${email} or ${fuzzy('name', term)} or ${fuzzy('username', term)})`);
  }
  if (f.blocked) q = q.where('users.state', 'in', ['blocked', 'ldap_blocked']);
  if (f.active) q = q.where('users.state', '=', 'active').where('users.user_type', 'in', [...NON_INTERNAL_USER_TYPES]);
  if (f.extern_uid !== undefined && f.provider !== undefined) {
    const { extern_uid, provider } = f;
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('identities')
          .select(sql.lit(1).as('one'))
          .whereRef('identities.user_id', '=', 'users.id')
          .where('identities.provider', '=', provider)
          .where(ciEquals('identities.extern_uid', extern_uid)),
      ),
    );
  }
  if (f.external) q = q.where('users.external', '=', 1);
  if (f.exclude_external) q = q.where('users.external', '=', 0);
  if (f.two_factor === 'enabled') q = q.where('users.two_factor_enabled', '=', 1);
  else if (f.two_factor === 'disabled') q = q.where('users.two_factor_enabled', '=', 0);
  if (f.created_after) q = q.where('users.created_at', '>=', f.created_after);
  if (f.created_before) q = q.where('users.created_at', '<=', f.created_before);
  if (f.without_projects) q = q.where(withoutProjects);
  if (f.custom_attributes) {
    for (const [key, value] of Object.entries(f.custom_attributes)) {
      q = q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('user_custom_attributes')
            .select(sql.lit(1).as('one'))
            .whereRef('user_custom_attributes.user_id', '=', 'users.id')
            .where('user_custom_attributes.key', '=', key)
            .where('user_custom_attributes.value', '=', value),
        ),
      );
    }
  }
  if (f.exclude_internal) q = q.where('users.user_type', 'in', [...NON_INTERNAL_USER_TYPES]);
  if (f.without_project_bots) q = q.where('users.user_type', '!=', 'project_bot');
  return q;
}

/** `order_by` + `sort` with id as the tie-breaker in the same direction. */
export function orderUsers<O>(q: SelectQueryBuilder<Database, 'users', O>, o: UserOrder): SelectQueryBuilder<Database, 'users', O> {
  q = q.orderBy(`users.${o.column}`, o.direction);
  return o.column === 'id' ? q : q.orderBy('users.id', o.direction);
}

/** What a non-administrator's search is ordered by: exact public email, username, name first; then name. */
export function orderBySearchRelevance<O>(q: SelectQueryBuilder<Database, 'users', O>, search: string): SelectQueryBuilder<Database, 'users', O> {
  const term = search.replace(/^@/, '').trim().toLowerCase();
  return q
    .orderBy(
      sql`case when lower(users.public_email) = ${term} then 0 when lower(users.username) = ${term} then 1 when lower(users.name) = ${term} then 2 else 3 end`,
    )
    .orderBy('users.name', 'asc')
    .orderBy('users.id', 'asc');
}

/** The opaque cursor: base64 JSON of the order value and the id of the last row of a page. */
export function userCursor(row: Pick<UserRow, UserOrderColumn>, o: UserOrder): string {
  return encodeCursor(o.column === 'id' ? { id: row.id } : { [o.column]: row[o.column], id: row.id });
}

/** The cursor's position, or null when it does not fit the ordering. */
export function parseUserCursor(cursor: string, o: UserOrder): { value: string | number; id: number } | null {
  const v = decodeCursor(cursor);
  if (!v || !Number.isSafeInteger(v.id)) return null;
  if (o.column === 'id') return { value: v.id as number, id: v.id as number };
  const value = v[o.column];
  return typeof value === 'string' ? { value, id: v.id as number } : null;
}

/** Rows strictly after the cursor in the given order: a row comparison (SQLite ≥ 3.15 and PostgreSQL). */
export function afterCursor<O>(
  q: SelectQueryBuilder<Database, 'users', O>,
  o: UserOrder,
  at: { value: string | number; id: number },
): SelectQueryBuilder<Database, 'users', O> {
  const op = sql.raw(o.direction === 'desc' ? '<' : '>');
  if (o.column === 'id') return q.where(sql<SqlBool>`users.id ${op} ${at.id}`);
  return q.where(sql<SqlBool>`(${sql.ref(`users.${o.column}`)}, users.id) ${op} (${at.value}, ${at.id})`);
}

/**
 * User.without_projects: no project authorization at all — not the owner of a personal project, not a
 * direct member of a project, not a member of a group that holds a project (itself or below it).
 * Unexpired memberships of Guest and above count, as project_authorizations hold them.
 */
function withoutProjects(eb: ExpressionBuilder<Database, 'users'>): Expression<SqlBool> {
  const today = todayDate();
  const live = sql<SqlBool>`m.user_id = users.id and m.access_level >= 10 and (m.expires_at is null or m.expires_at > ${today})`;
  return eb.and([
    eb.not(eb.exists(sql`(select 1 from namespaces n inner join projects p on p.namespace_id = n.id where n.type = 'User' and n.owner_id = users.id)`)),
    eb.not(eb.exists(sql`(select 1 from members m inner join projects p on p.id = m.source_id where m.source_type = 'Project' and ${live})`)),
    eb.not(
      eb.exists(
        sql`(select 1 from members m inner join namespaces g on g.id = m.source_id where m.source_type = 'Namespace' and ${live}
          and exists (select 1 from projects p inner join namespaces pn on pn.id = p.namespace_id where ${inSubtreeOf('pn.traversal_ids', 'g.traversal_ids')}))`,
      ),
    ),
  ]);
}
