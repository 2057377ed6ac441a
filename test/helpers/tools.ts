// Tests that drive a real client (python-gitlab, wlc, Chromium) skip where it is not installed on a
// developer's machine, and fail in CI (CI=true), where .ci/run installs every client.
import assert from 'node:assert/strict';

/** The `skip` option of such a test: a reason outside CI when the tool is missing, else false. */
export function skipWithout(available: boolean, what: string): string | false {
  return !available && process.env.CI !== 'true' ? `${what} is not installed` : false;
}

/** The test's first step: in CI a missing tool is a failure, not a skip. */
export function assertTool(available: boolean, what: string): void {
  assert.ok(available, `${what} is not installed (CI installs it through .ci/run: apt-get install python3-gitlab gitlab-cli wlc chromium)`);
}
