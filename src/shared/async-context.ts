// Imported first by every entry point. Node switches its async context frames to the active
// implementation when the first AsyncLocalStorage is made (src/plugins/satisfiesClaim.ts makes
// one at import); until then `process.nextTick` calls the inactive one. Made after nextTick has
// warmed up, the switch leaves nextTick's call site generic and its tick object's property
// definitions on V8's slow runtime path (docs/benchmarks.md, "The authenticated GET"). Made
// here, before anything schedules ticks, nextTick only ever sees one implementation.
import { AsyncLocalStorage } from 'node:async_hooks';

new AsyncLocalStorage();
