// How long a test waits for something that must happen (a child process to end, an attempt to
// resolve, an indexer to catch up) before it fails saying what did not happen.
//
// No test may depend on the machine's speed: a loaded 2-core laptop can be 20 times slower than an
// idle one, so a limit tuned to a fast machine fails there although nothing is wrong. This bound is
// only there to turn a real hang into a readable failure; no slow machine reaches it. Never lower it
// to make a test fail sooner: a test that must see something *not* happen observes it another way
// (a ManualClock, an event, a later state), never by waiting a fixed time.
//
// The test runner (scripts/test.mjs) has a longer safety net per test still, so this message wins.
export const PATIENCE_MS = 10 * 60_000;
