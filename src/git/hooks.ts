// Server-side hooks for pushes over smart HTTP. receive-pack runs them with the environment the server
// gives it: the pre-receive hook enforces the protection of the default branch (git itself checks
// fast-forwards against the quarantined objects), the post-receive hook reports the accepted ref
// changes to a file the server reads once receive-pack is done.
import fs from 'node:fs';
import path from 'node:path';

const PRE_RECEIVE = `#!/bin/sh
# Hearth: protection of the default branch (values come from the server through the environment).
z=0000000000000000000000000000000000000000
status=0
while read old new ref; do
  case "$ref" in
    refs/heads/*|refs/tags/*) ;;
    *) echo "$HEARTH_MSG_REF $ref"; status=1; continue ;;
  esac
  [ "$ref" = "$HEARTH_PROTECTED_REF" ] || continue
  if [ "$new" = "$z" ]; then echo "$HEARTH_MSG_DELETE"; status=1; continue; fi
  if [ "$old" = "$z" ]; then
    if [ "$HEARTH_CAN_PUSH" != 1 ] && [ "$HEARTH_CAN_INITIAL_PUSH" != 1 ]; then echo "$HEARTH_MSG_PUSH"; status=1; fi
    continue
  fi
  if [ "$HEARTH_CAN_PUSH" != 1 ]; then echo "$HEARTH_MSG_PUSH"; status=1; continue; fi
  if [ "$HEARTH_CAN_FORCE" != 1 ] && ! git merge-base --is-ancestor "$old" "$new"; then echo "$HEARTH_MSG_FORCE"; status=1; fi
done
exit $status
`;

const POST_RECEIVE = `#!/bin/sh
# Hearth: the accepted ref changes, for the server's push events.
cat >> "$HEARTH_PUSH_LOG"
`;

/** Writes the hooks into `dir` (idempotent) and returns it. */
export function installHooks(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, body] of [['pre-receive', PRE_RECEIVE], ['post-receive', POST_RECEIVE]] as const) {
    const file = path.join(dir, name);
    if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== body) {
      fs.writeFileSync(file + '.tmp', body, { mode: 0o755 });
      fs.renameSync(file + '.tmp', file);
    }
  }
  return dir;
}
