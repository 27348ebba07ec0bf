// Status webhook deliveries (webhooks/deliver.ts): safe with several processes, each delivery
// taken under a lease in the database.
import type { BackgroundLoop } from '../worker/runtime.ts';
import { startDeliveries } from './deliver.ts';

export const webhookLoops: BackgroundLoop[] = [
  {
    name: 'webhook-deliveries',
    description: 'sends due plugin status webhooks, retrying with backoff',
    start: (ctx) => startDeliveries(ctx),
  },
];
