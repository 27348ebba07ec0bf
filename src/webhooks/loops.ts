// Status webhook deliveries (webhooks/deliver.ts): safe with several processes, each delivery
// taken under a lease in the database.
import { registerLoop } from '../worker/runtime.ts';
import { startDeliveries } from './deliver.ts';

registerLoop({
  name: 'webhook-deliveries',
  description: 'sends due plugin status webhooks, retrying with backoff',
  start: (ctx) => startDeliveries(ctx),
});
