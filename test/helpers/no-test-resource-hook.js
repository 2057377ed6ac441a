// Imported first by every entry module of `npm test` (test-files.js), before node:test loads.
//
// node:test (Node 20 to 22) enables an async hook with a destroy callback for the whole process, to map every async
// resource to the test that created it. A destroy callback makes V8 track every promise for its collection: in
// promise-heavy code (each request through the app, each statement through Kysely) the hook's bookkeeping and the
// garbage it makes took a fifth of the suite's CPU, and a loop of awaited promises runs 13 times slower. Without
// it, an error thrown outside any test's own call chain (an unhandled rejection, an exception in a callback) is
// not pinned on a test: node:test reports it as a diagnostic of the run and sets the exit code, so the run still
// fails. Every other behaviour of the runner stays. HEARTH_TEST_RESOURCE_HOOK=1 keeps the hook (to find which
// test leaks such an error).
import asyncHooks from 'node:async_hooks';

if (process.env.HEARTH_TEST_RESOURCE_HOOK !== '1') {
  const createHook = asyncHooks.createHook;
  asyncHooks.createHook = function (callbacks) {
    // only the runner's own hook: created by its harness module
    if (new Error().stack?.includes('internal/test_runner/harness')) {
      const inert = { enable: () => inert, disable: () => inert };
      return inert;
    }
    return createHook.call(this, callbacks);
  };
}
