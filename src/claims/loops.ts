// The claim queue: resolves queued attempts in order (claims/queue.ts).
import { registerLoop } from '../worker/runtime.ts';
import { ClaimWorker } from './queue.ts';

registerLoop({
  name: 'claim-queue',
  description: 'resolves queued claim attempts',
  start: (ctx) => new ClaimWorker(ctx).start(),
});
