// The plugin call thread (call-thread.ts): its own egress client, built from the main thread's
// configuration, makes each signed call; outcomes of one turn go back in one message.
import { parentPort, workerData } from 'node:worker_threads';
import { Egress, type EgressOptions } from '../egress/index.ts';
import { TurnBatcher } from '../shared/turn-batcher.ts';
import { callEndpoint } from './call.ts';
import type { FromCallThread, ToCallThread } from './call-thread.ts';

const port = parentPort!;
const egress = new Egress(workerData as EgressOptions);

// the outcomes of one turn go back in one message
const outcomes = new TurnBatcher<Extract<FromCallThread, { outcomes: unknown }>['outcomes'][number]>((batch) =>
  port.postMessage({ outcomes: batch } satisfies FromCallThread),
);
const send = (entry: Parameters<typeof outcomes.add>[0]) => outcomes.add(entry);

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
