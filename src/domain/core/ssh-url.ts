// The SSH clone URL of a project (ssh_url_to_repo, and git_ssh_url / ssh_url of hook payloads), as
// GitLab builds it from gitlab_ssh_host and gitlab_shell_ssh_port: `git@host:group/project.git` on
// port 22, `ssh://git@host:2222/group/project.git` on any other.
//
// Every builder of those URLs knows the server by its EXTERNAL_URL only, so the container registers
// the advertised SSH host and port for its EXTERNAL_URL once (advertiseSsh); an EXTERNAL_URL nobody
// registered advertises its own host and the default port.

/** HEARTH_SSH_PORT's default */
export const DEFAULT_SSH_PORT = 2222;

export interface SshEndpoint {
  host: string;
  port: number;
}

const advertised = new Map<string, SshEndpoint>();

/** What ssh_url_to_repo says for the server at `externalUrl` (createContainer calls this). */
export function advertiseSsh(externalUrl: string, endpoint: SshEndpoint): void {
  advertised.set(externalUrl, endpoint);
}

export function sshEndpoint(externalUrl: string): SshEndpoint {
  return advertised.get(externalUrl) ?? { host: new URL(externalUrl).hostname, port: DEFAULT_SSH_PORT };
}

/** Gitlab.config.gitlab_shell.ssh_path_prefix: "git@host:" on port 22, else "ssh://git@host:port/". */
export function sshPathPrefix(endpoint: SshEndpoint): string {
  const host = endpoint.host.includes(':') && !endpoint.host.startsWith('[') ? `[${endpoint.host}]` : endpoint.host;
  return endpoint.port === 22 ? `git@${host}:` : `ssh://git@${host}:${endpoint.port}/`;
}

/** The SSH clone URL of the project at `fullPath` on the server at `externalUrl`. */
export function sshUrlToRepo(externalUrl: string, fullPath: string): string {
  return `${sshPathPrefix(sshEndpoint(externalUrl))}${fullPath}.git`;
}
