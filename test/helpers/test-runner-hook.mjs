// Imported first by every test process (the entry modules of test-files.js), before node:test loads.
// node:test (Node 20) enables an async hook for the whole run: it maps every async resource, every promise included,
// to the test that started it, with a destroy callback to forget it. It needs that map for two things: to give a
// `test()` called inside `describe()` its suite, and to name the test whose asynchronous work threw an uncaught
// exception. The destroy callback makes every promise register a weak callback, which cost a fifth of the CPU of a
// request-heavy file (fuzz.test.ts: 120 s → 100 s of CPU; 8.7 s in registerDestroyHook alone).
// Here the hook keeps only the first: it records the tests and suites themselves (a `describe` body runs in its
// suite's scope), nothing they start, and has no destroy callback. An uncaught exception still fails the run
// (node:test reports "a resource generated asynchronous activity after the test ended" and the process exits 1); it
// is only not pinned to one test. HEARTH_TEST_ASYNC_HOOK=1 gives node:test its own hook back, to find which test it was.
import asyncHooks from 'node:async_hooks';

if (process.env.HEARTH_TEST_ASYNC_HOOK !== '1') {
  const createHook = asyncHooks.createHook;
  asyncHooks.createHook = function (callbacks) {
    if (!new Error().stack?.includes('internal/test_runner/harness')) return createHook.call(this, callbacks);
    const { init } = callbacks;
    return createHook.call(this, {
      init(asyncId, type, triggerAsyncId, resource) {
        if (type === 'Test') init(asyncId, type, triggerAsyncId, resource);
      },
    });
  };
}
