// Imported first by every test process (the entry modules of test-files.js), before node:test loads.
// node:test (Node 20) enables an async hook with a destroy callback for the whole run, only to name the test whose
// asynchronous work threw an uncaught exception: every promise then registers a destroy callback, which cost a fifth
// of the CPU of a request-heavy test file (fuzz.test.ts: 120 s → 100 s of CPU; 8.7 s in registerDestroyHook alone).
// This keeps the hook off. Such an exception still fails the run (node:test reports it as "a resource generated
// asynchronous activity after the test ended" and the process exits 1); it is only not pinned to one test.
// HEARTH_TEST_ASYNC_HOOK=1 turns the hook back on, to find which test it was.
import asyncHooks from 'node:async_hooks';

if (process.env.HEARTH_TEST_ASYNC_HOOK !== '1') {
  const createHook = asyncHooks.createHook;
  asyncHooks.createHook = function (callbacks) {
    const hook = createHook.call(this, callbacks);
    if (new Error().stack?.includes('internal/test_runner/harness')) hook.enable = () => hook;
    return hook;
  };
}
