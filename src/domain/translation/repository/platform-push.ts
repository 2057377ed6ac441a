// Pushing a component's commits into a project of this server: a push like any other. The request a
// git client would send over smart HTTP (the ref update and a pack of what the project lacks) goes to
// the repository service's receivePack — the one write path: the push journal, branch protection for
// the pushing user (the shared hooks), and the push / repository_update events.
import { Readable } from 'node:stream';
import type { ProjectRow } from '../../../db/schema.ts';
import { ZERO_SHA } from '../../../git/refs.ts';
import type { Repository } from '../../../git/repository.ts';
import { DomainError } from '../../../lib/errors.ts';
import type { Actor } from '../../access/actor.ts';
import { canReadCode } from '../../repository/read-access.ts';
import { RepoError } from '../components/vcs.ts';
import type { TranslationDeps } from '../deps.ts';

function pktLine(s: string): Buffer {
  const body = Buffer.from(s, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

/** The payloads of a run of pkt-lines (flushes skipped). */
function pktPayloads(out: Buffer): Buffer[] {
  const payloads: Buffer[] = [];
  let i = 0;
  while (i + 4 <= out.length) {
    const len = parseInt(out.subarray(i, i + 4).toString('ascii'), 16);
    if (!Number.isFinite(len)) break;
    if (len < 4) {
      i += 4;
      continue;
    }
    payloads.push(out.subarray(i + 4, i + len));
    i += len;
  }
  return payloads;
}

/**
 * receive-pack's answer with side-band-64k: band 1 carries the report (report-status pkt-lines),
 * band 2 what the hooks said (GitLab's refusals), band 3 a fatal error.
 */
function parseAnswer(out: Buffer): { report: string[]; messages: string[] } {
  const data: Buffer[] = [];
  const messages: string[] = [];
  for (const p of pktPayloads(out)) {
    const band = p[0];
    if (band === 1) data.push(p.subarray(1));
    else if (band === 2 || band === 3)
      messages.push(
        ...p
          .subarray(1)
          .toString('utf8')
          .split(/[\r\n]+/),
      );
  }
  const report = pktPayloads(Buffer.concat(data)).map((l) => l.toString('utf8').replace(/\n$/, ''));
  return { report, messages: messages.map((m) => m.trim()).filter(Boolean) };
}

/**
 * Pushes `sha` of `mirror` to `branch` of the project `projectId` as `actor`. A non-fast-forward is
 * refused unless `force`; the project's rules (archived, push_code, protected branches) answer for
 * the actor. Throws RepoError with the reason.
 */
export async function pushToProject(
  deps: TranslationDeps,
  actor: Actor,
  projectId: number,
  mirror: Repository,
  sha: string,
  branch: string,
  force: boolean,
): Promise<void> {
  if (!actor.user) throw new RepoError('Pushing into a project of this server needs a user.');
  let resolved;
  try {
    resolved = await deps.resolve.project(actor, projectId);
  } catch (e) {
    if (e instanceof DomainError) throw new RepoError('The repository was not found.');
    throw e;
  }
  const { project, namespace, access } = resolved;
  if (!canReadCode(actor, project, access)) throw new RepoError('The repository was not found.');
  const refusal = deps.repository.pushRefusal(actor, project, access);
  if (refusal) throw new RepoError(refusal);
  const repo = deps.repos.repository(project as ProjectRow);
  if (!repo.exists()) throw new RepoError('The repository was not found.');
  const ref = `refs/heads/${branch}`;
  const old = (await repo.run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { okCodes: [0, 1] })).stdout.toString().trim() || ZERO_SHA;
  if (old === sha) return;
  const oldKnown = old !== ZERO_SHA && (await mirror.run(['cat-file', '-e', `${old}^{commit}`], { okCodes: [0, 1, 128] })).code === 0;
  if (old !== ZERO_SHA && !force) {
    const ff = oldKnown && (await mirror.run(['merge-base', '--is-ancestor', old, sha], { okCodes: [0, 1] })).code === 0;
    if (!ff) throw new RepoError(`Updates were rejected because the tip of ${branch} is not an ancestor of the pushed commit (non-fast-forward).`);
  }
  const pack = await mirror.run(['pack-objects', '--stdout', '--revs', '--quiet'], {
    input: `${sha}\n${oldKnown ? `^${old}\n` : ''}`,
    maxBytes: 2 * 1024 * 1024 * 1024,
  });
  const request = Buffer.concat([pktLine(`${old} ${sha} ${ref}\0report-status side-band-64k\n`), Buffer.from('0000'), pack.stdout]);
  const out = await deps.repository.receivePack({ actor, project, namespace, access, repo }, Readable.from([request]), {
    env: {},
    log: { error: (...args: unknown[]) => (deps.log.error as (...a: unknown[]) => void)(...args) } as never,
  });
  const chunks: Buffer[] = [];
  for await (const chunk of out) chunks.push(Buffer.from(chunk as Buffer));
  const { report, messages } = parseAnswer(Buffer.concat(chunks));
  // the hooks' own words (e.g. GitLab's protected branch refusal) say more than git's "hook declined"
  const said = messages.filter((m) => !/^(error: )?(hint:|To |! \[)/.test(m));
  const unpack = report.find((l) => l.startsWith('unpack '));
  if (unpack && unpack !== 'unpack ok') throw new RepoError(`Could not push the repository: ${said[0] ?? unpack}`);
  const status = report.find((l) => l.startsWith('ok ') || l.startsWith('ng '));
  if (!status) throw new RepoError(`Could not push the repository: ${said[0] ?? 'no answer from the repository.'}`);
  if (status.startsWith('ng ')) {
    const reason = status.slice(3 + ref.length + 1) || 'rejected';
    throw new RepoError(`Could not push the repository: ${said[0] ?? reason}`);
  }
}
