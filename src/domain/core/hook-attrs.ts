// The hook_attrs of users and projects that every hook payload embeds (User#hook_attrs, Project#hook_attrs).
import type { Kysely } from 'kysely';
import type { Database, NamespaceRow, ProjectRow, UserRow } from '../../db/schema.ts';
import { levelOf } from './visibility-levels.ts';
import { sshUrlToRepo } from './ssh-url.ts';

export function userHookAttrs(u: Pick<UserRow, 'id' | 'name' | 'username' | 'avatar_url' | 'public_email'>) {
  // User#hook_attrs: the public email, or "[REDACTED]"
  return { id: u.id, name: u.name, username: u.username, avatar_url: u.avatar_url, email: u.public_email || '[REDACTED]' };
}

export function projectHookAttrs(externalUrl: string, p: ProjectRow, ns: NamespaceRow) {
  const full = `${ns.full_path}/${p.path}`;
  const web = `${externalUrl}/${full}`;
  const ssh = sshUrlToRepo(externalUrl, full);
  const http = `${web}.git`;
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    web_url: web,
    avatar_url: null,
    git_ssh_url: ssh,
    git_http_url: http,
    namespace: ns.name,
    visibility_level: levelOf(p.visibility),
    path_with_namespace: full,
    default_branch: p.default_branch,
    ci_config_path: null,
    homepage: web,
    url: ssh,
    ssh_url: ssh,
    http_url: http,
  };
}

/** A project and its namespace, read in the hook writer's transaction (null when the project is gone). */
export async function projectWithNamespace(trx: Kysely<Database>, id: number): Promise<{ project: ProjectRow; namespace: NamespaceRow } | null> {
  const project = await trx.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  if (!project) return null;
  const namespace = await trx.selectFrom('namespaces').selectAll().where('id', '=', project.namespace_id).executeTakeFirstOrThrow();
  return { project, namespace };
}
