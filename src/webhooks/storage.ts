// The webhook capability's table: the status-webhook outbox (outbox.ts writes and reads it).

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveryTable {
  delivery_id: string;
  plugin_id: string;
  claim_id: string;
  instance_id: string;
  claim_attempt_id: string;
  url: string;
  /** The URL's origin (origin.ts): deliveries in flight are limited per origin. */
  origin: string;
  body_enc: string;
  headers_enc: string | null;
  status: DeliveryStatus;
  /** Tries ever made (redeliveries included). */
  attempts: number;
  /** Failed tries in the current schedule; drives the backoff and the give-up. */
  retries: number;
  next_try_at: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  last_status: number | null;
  last_try_at: number | null;
  delivered_at: number | null;
  created_at: number;
}

export interface WebhookTables {
  webhook_deliveries: WebhookDeliveryTable;
}

// Its tables join the database's type (db/schema.ts).
declare module '../db/schema.ts' {
  interface Database extends WebhookTables {}
}
