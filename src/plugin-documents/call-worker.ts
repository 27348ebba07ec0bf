// The plugin call thread (call-thread.ts): its own egress client, built from the main thread's
// configuration, makes each signed call; outcomes of one turn go back in one message.
import { parentPort, workerData } from 'node:worker_threads';
import { Egress, type EgressOptions } from '../egress/index.ts';
import { callEndpoint } from './call.ts';
import type { FromCallThread, ToCallThread } from './call-thread.ts';

const port = parentPort!;
const egress = new Egress(workerData as EgressOptions);

let outcomes: Extract<FromCallThread, { outcomes: unknown }>['outcomes'] = [];
function send(entry: (typeof outcomes)[number]): void {
  if (outcomes.length === 0) {
    setImmediate(() => {
      const batch = outcomes;
      outcomes = [];
      port.postMessage({ outcomes: batch } satisfies FromCallThread);
    });
  }
  outcomes.push(entry);
}

port.on('message', (msg: ToCallThread) => {
  if ('stats' in msg) {
    port.postMessage({ stats: msg.stats, value: egress.stats() } satisfies FromCallThread);
    return;
  }
  for (const [id, context, now] of msg.calls) {
    callEndpoint(egress, context, now).then(
      (outcome) => send([id, outcome]),
      // not a failed call but a fault of ours: the main thread raises it, as it would have
      (err: unknown) => send([id, null, err instanceof Error ? err.message : String(err)]),
    );
  }
});
