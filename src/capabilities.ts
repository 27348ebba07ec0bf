// The capabilities the service is made of. Each is one folder holding its routes, its domain
// logic and its storage; adding one is a folder plus one line here.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.ts';
import { operations } from './ops/routes.ts';
import { signin } from './signin/routes.ts';
import { merkle } from './merkle/routes.ts';
import { dynamicStores } from './stores/routes.ts';
import { claims } from './claims/routes.ts';
import { swap } from './swap/routes.ts';
import { collections } from './chain/routes.ts';
import { accounts } from './accounts/routes.ts';
import { connections } from './connections/routes.ts';
import { pluginDocuments } from './plugin-documents/routes.ts';
import { webhooks } from './webhooks/routes.ts';
import { integrations } from './integrations/routes.ts';
import { portal } from './portal/routes.ts';
import { eligibility } from './eligibility/routes.ts';

export interface Capability {
  name: string;
  /** Registers routes (and starts background jobs, registering their cleanup in ctx.onClose). */
  register(app: FastifyInstance, ctx: AppContext): Promise<void> | void;
}

export const capabilities: Capability[] = [
  operations,
  signin,
  dynamicStores,
  claims,
  merkle,
  swap,
  connections,
  pluginDocuments,
  webhooks,
  accounts,
  collections,
  integrations,
  eligibility,
  portal,
];
