// What a client asks the SSH server to run (SSH_ORIGINAL_COMMAND), read as gitlab-shell reads it
// (commandargs/shell.go): split into words as a POSIX shell would (quotes and backslashes, nothing
// expanded), "git upload-pack" as Git for Windows spells it becomes git-upload-pack, no words at all
// is the greeting ("discover"). Only the three git services with one path are run.
import type { GitCommand } from '../domain/repository/git-access.ts';

export type ParsedCommand =
  | { kind: 'discover' }
  | { kind: 'git'; command: GitCommand; path: string }
  /** a command that is not served: gitlab-shell's "Unknown command" */
  | { kind: 'unknown'; name: string }
  /** a git service with other arguments than one path: gitlab-shell's "Disallowed command" */
  | { kind: 'disallowed' }
  /** words that do not parse (an open quote): "Failed to parse command" */
  | { kind: 'invalid'; error: string };

const GIT_COMMANDS: ReadonlySet<string> = new Set(['git-upload-pack', 'git-receive-pack', 'git-upload-archive']);

/** The longest command line read (OpenSSH's own limit is about 256 KiB; git sends a few dozen bytes). */
export const MAX_COMMAND_LENGTH = 4096;

/** go-shellwords' Parse without its expansions: words, or an error for an unterminated quote or escape. */
export function shellWords(line: string): string[] | Error {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote === "'") {
      if (ch === "'") quote = null;
      else word += ch;
      continue;
    }
    if (ch === '\\') {
      if (i + 1 >= line.length) return new Error('invalid command line string');
      const next = line[++i];
      // inside double quotes a backslash escapes only these
      if (quote === '"' && !'"\\$`\n'.includes(next)) word += ch;
      if (next !== '\n') word += next;
      inWord = true;
      continue;
    }
    if (quote === '"') {
      if (ch === '"') quote = null;
      else word += ch;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\n') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    word += ch;
    inWord = true;
  }
  if (quote) return new Error('invalid command line string');
  if (inWord) words.push(word);
  return words;
}

/**
 * The repository path of a git service's argument: a leading `/` (ssh://host/group/project.git) and
 * the `.git` suffix go; what remains is checked by git access like any path.
 */
export function repositoryPath(arg: string): string {
  return arg
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
}

export function parseCommand(line: string): ParsedCommand {
  if (line.length > MAX_COMMAND_LENGTH) return { kind: 'invalid', error: 'command too long' };
  const parsed = shellWords(line);
  if (parsed instanceof Error) return { kind: 'invalid', error: parsed.message };
  let words = parsed;
  if (words.length > 1 && words[0] === 'git') words = [`git-${words[1]}`, ...words.slice(2)];
  if (!words.length) return { kind: 'discover' };
  const name = words[0];
  if (!GIT_COMMANDS.has(name)) return { kind: 'unknown', name: line };
  if (words.length !== 2) return { kind: 'disallowed' };
  return { kind: 'git', command: name as GitCommand, path: repositoryPath(words[1]) };
}
