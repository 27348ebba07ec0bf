// The plugin call thread (call-thread.ts): its own egress client, built from the main thread's
// configuration, makes each signed call; outcomes of one turn go back in one message.
import { parentPort, workerData } from 'node:worker_threads';
import { Egress, type EgressOptions } from '../egress/index.ts';
import { TurnBatcher } from '../shared/turn-batcher.ts';
import { callWith, specFromText, type CallOutcome } from './call.ts';
import { CALL_VALUES, FAILED, FAULT, OK, readCall, type FromCallThread, type ToCallThread } from './call-messages.ts';

const port = parentPort!;
const egress = new Egress(workerData as EgressOptions);

// the outcomes of one turn go back in one message, as one flat array (OUTCOME_VALUES values each)
const outbox = new TurnBatcher<unknown>((values) => port.postMessage({ outcomes: values } satisfies FromCallThread));
function send(id: number, kind: number, a: unknown, b: unknown): void {
  outbox.add(id);
  outbox.add(kind);
  outbox.add(a);
  outbox.add(b);
}
const settled = (id: number, o: CallOutcome) =>
  o.ok ? send(id, OK, o.response, undefined) : send(id, FAILED, o.error, o.detail);

port.on('message', (msg: ToCallThread) => {
  if ('stats' in msg) {
    port.postMessage({ stats: msg.stats, value: egress.stats() } satisfies FromCallThread);
    return;
  }
  const m = msg.calls;
  for (let at = 0; at < m.length; at += CALL_VALUES) {
    const { id, now, specText, fields } = readCall(m, at);
    // callWith is async: whatever it throws comes back as its rejection
    callWith(egress, specFromText(specText), fields, now).then(
      (outcome) => settled(id, outcome),
      // not a failed call but a fault of ours: the main thread raises it, as it would have
      (err: unknown) => send(id, FAULT, err instanceof Error ? err.message : String(err), undefined),
    );
  }
});
