// Server-side hooks for pushes over smart HTTP. receive-pack runs them with the environment the server
// gives it: the pre-receive hook sends the push's ref updates to the server through a socket the server
// gives receive-pack (fd 3) and prints the server's refusals (protected branches and tags; git itself
// checks fast-forwards against the quarantined objects, so the hook tells a force push apart); the
// reference-transaction hook reports every ref update to the server through the same socket and, while
// git holds the ref locks and before the refs move, waits for the server to answer that it recorded the
// update durably: a ref never moves unless the server that runs the push has it in its journal (and is
// alive).
import fs from 'node:fs';
import path from 'node:path';

// The server answers one line per update: "<message unless a fast-forward>|<message>", "-" for none.
const PRE_RECEIVE = `#!/bin/sh
# Hearth: the server's checks of a push (protected branches and tags, the pushed objects in the
# quarantine directory), asked over fd 3.
status=0
updates=
while read old new ref; do
  case "$ref" in
    refs/heads/*|refs/tags/*) ;;
    *) echo "$HEARTH_MSG_REF $ref"; status=1; continue ;;
  esac
  updates="$updates$old $new $ref
"
done
[ -n "$HEARTH_PUSH_PID" ] && [ "$PPID" = "$HEARTH_PUSH_PID" ] && [ -n "$updates" ] || exit $status
printf 'check %s\\n%s.\\n' "$GIT_QUARANTINE_PATH" "$updates" >&3 || exit 1
while read old new ref; do
  [ -n "$ref" ] || continue
  read -r answer <&3 || exit 1
  force=\${answer%%|*}
  msg=\${answer#*|}
  if [ "$force" != - ] && ! git merge-base --is-ancestor "$old" "$new" 2>/dev/null; then echo "$force"; status=1; continue; fi
  if [ "$msg" != - ]; then echo "$msg"; status=1; fi
done <<EOF
$updates
EOF
exit $status
`;

// Only receive-pack's own transactions (the hook's parent is the process the server started and named
// in HEARTH_PUSH_PID), not those of its children (auto maintenance packing refs). Every report waits
// for the server's answer (so the server has seen it before receive-pack goes on); the answer matters
// for "prepared" only: the refs are locked and about to move, and anything but "ok" (the server
// refused, or is gone: fd 3 closed) makes git abort the transaction.
const REFERENCE_TRANSACTION = `#!/bin/sh
# Hearth: the ref updates of a push, reported to the server (fd 3) before and after the refs move.
[ -n "$HEARTH_PUSH_PID" ] && [ "$PPID" = "$HEARTH_PUSH_PID" ] || exit 0
case "$1" in prepared|committed|aborted) ;; *) exit 0 ;; esac
report="$1
"
while read -r line; do report="$report$line
"; done
printf '%s.\\n' "$report" >&3 || exit 1
read -r answer <&3 || exit 1
[ "$answer" = ok ]
`;

/** Writes the hooks into `dir` (idempotent) and returns it. */
export function installHooks(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  // the post-receive hook of earlier versions wrote a push log; the reference-transaction hook replaces it
  fs.rmSync(path.join(dir, 'post-receive'), { force: true });
  for (const [name, body] of [
    ['pre-receive', PRE_RECEIVE],
    ['reference-transaction', REFERENCE_TRANSACTION],
  ] as const) {
    const file = path.join(dir, name);
    if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== body) {
      fs.writeFileSync(file + '.tmp', body, { mode: 0o755 });
      fs.renameSync(file + '.tmp', file);
    }
  }
  return dir;
}

export interface RefUpdate {
  before: string;
  after: string;
  /** full ref name */
  ref: string;
}

/**
 * Reads the reference-transaction hook's reports from the socket given to receive-pack as fd 3, one
 * at a time and in order, and answers each: "prepared" with what `onPrepared` decides (true: the
 * updates may go ahead), the others once their handler ran.
 */
export function serveRefTransactions(
  socket: NodeJS.ReadWriteStream & { destroyed?: boolean },
  handlers: {
    /**
     * the pre-receive hook's question: one answer line per update ("<unless fast-forward>|<message>", "-"
     * for none); `quarantine`: the directory of the objects the push brings (null: none)
     */
    onCheck?(updates: RefUpdate[], quarantine: string | null): Promise<string[]>;
    onPrepared(updates: RefUpdate[]): Promise<boolean>;
    onCommitted(updates: RefUpdate[]): void;
    onAborted?(updates: RefUpdate[]): void;
  },
): void {
  let text = '';
  let chain: Promise<void> = Promise.resolve();
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer | string) => {
    text += chunk.toString();
    for (let end = text.indexOf('\n.\n'); end >= 0; end = text.indexOf('\n.\n')) {
      const [head, ...lines] = text.slice(0, end).split('\n');
      const space = head.indexOf(' ');
      const state = space < 0 ? head : head.slice(0, space);
      const argument = space < 0 ? '' : head.slice(space + 1);
      text = text.slice(end + 3);
      const updates = lines.filter(Boolean).map((l) => {
        const [before, after, ref] = l.split(' ');
        return { before, after, ref };
      });
      if (state === 'check') {
        chain = chain.then(async () => {
          let answers: string[];
          try {
            answers = handlers.onCheck ? await handlers.onCheck(updates, argument || null) : updates.map(() => '-|-');
          } catch {
            answers = updates.map(() => '-|The push could not be checked.');
          }
          if (!socket.destroyed) socket.write(updates.map((_, i) => (answers[i] ?? '-|-').replace(/\n/g, ' ')).join('\n') + '\n');
        });
        continue;
      }
      chain = chain.then(async () => {
        let ok = false;
        try {
          if (state === 'prepared') ok = await handlers.onPrepared(updates);
          else {
            if (state === 'committed') handlers.onCommitted(updates);
            else if (state === 'aborted') handlers.onAborted?.(updates);
            ok = true;
          }
        } catch {
          ok = false;
        }
        if (!socket.destroyed) socket.write(ok ? 'ok\n' : 'refused\n');
      });
    }
  });
}
