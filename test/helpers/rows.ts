// Whole rows for bulk inserts where the services would be too slow or would refuse the state a test
// needs (pagination over thousands of users, the benchmarks' seeds). Every column is written, so a new
// column without a default shows up here once.
import type { NewUser } from '../../src/db/schema.ts';
import { nowIso } from '../../src/lib/time.ts';

/** A confirmed, active human user named `username` (name and e-mail derived), with `attrs` on top. */
export function userRow(username: string, attrs: Partial<NewUser> = {}, now = nowIso()): NewUser {
  return {
    username,
    name: username,
    email: `${username}@example.com`,
    state: 'active',
    password_hash: null,
    password_set_at: null,
    is_admin: 0,
    external: 0,
    bot: 0,
    user_type: 'human',
    private_profile: 0,
    bio: '',
    location: '',
    public_email: null,
    commit_email: null,
    job_title: '',
    pronouns: null,
    website_url: '',
    organization: '',
    messenger_a: '',
    network_a: '',
    network_b: '',
    chat_a: '',
    note: null,
    projects_limit: 100000,
    can_create_group: 1,
    can_create_project: 1,
    two_factor_enabled: 0,
    theme_id: 3,
    color_scheme_id: 1,
    avatar_url: null,
    created_by_id: null,
    created_at: now,
    updated_at: now,
    confirmed_at: now,
    last_sign_in_at: null,
    current_sign_in_at: null,
    last_sign_in_ip: null,
    current_sign_in_ip: null,
    sign_in_count: 0,
    last_activity_on: null,
    failed_attempts: 0,
    locked_at: null,
    ...attrs,
  };
}
