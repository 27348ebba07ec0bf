// The capabilities the service is made of, each one object listed once. A capability is a folder
// holding its routes, its domain logic and its storage; this list is the only place that names it
// (docs/design.md, "Adding a capability"). Routes and loops load when they are needed, so that the
// CLI lists its commands without loading the service (test/ops/entry-points.test.ts checks it).
import { chainCommands } from './chain/cli.ts';
import { claimCommands } from './claims/cli.ts';
import { pluginDocumentCommands } from './plugin-documents/cli.ts';
import type { Capability } from './shared/capability.ts';
import { signinCommands } from './signin/cli.ts';
import { swapCommands } from './swap/cli.ts';
import type { BackgroundLoop } from './worker/runtime.ts';

export const capabilities: readonly Capability[] = [
  { name: 'operations', routes: async () => (await import('./ops/routes.ts')).operations },
  {
    name: 'signin',
    routes: async () => (await import('./signin/routes.ts')).signin,
    loops: async () => (await import('./signin/loops.ts')).signinLoops,
    commands: signinCommands,
  },
  { name: 'dynamic stores', routes: async () => (await import('./stores/routes.ts')).dynamicStores },
  {
    name: 'claims',
    routes: async () => (await import('./claims/routes.ts')).claims,
    loops: async () => (await import('./claims/loops.ts')).claimLoops,
    commands: claimCommands,
  },
  { name: 'merkle', routes: async () => (await import('./merkle/routes.ts')).merkle },
  { name: 'swap', routes: async () => (await import('./swap/routes.ts')).swap, commands: swapCommands },
  {
    name: 'connections',
    routes: async () => (await import('./connections/routes.ts')).connections,
    loops: async () => (await import('./connections/loops.ts')).connectionLoops,
  },
  {
    name: 'plugin documents',
    routes: async () => (await import('./plugin-documents/routes.ts')).pluginDocuments,
    commands: pluginDocumentCommands,
  },
  {
    name: 'webhooks',
    routes: async () => (await import('./webhooks/routes.ts')).webhooks,
    loops: async () => (await import('./webhooks/loops.ts')).webhookLoops,
  },
  { name: 'accounts', routes: async () => (await import('./accounts/routes.ts')).accounts },
  {
    name: 'collections',
    routes: async () => (await import('./chain/routes.ts')).collections,
    loops: async () => (await import('./chain/loops.ts')).chainLoops,
    commands: chainCommands,
  },
  { name: 'integrations', routes: async () => (await import('./integrations/routes.ts')).integrations },
  { name: 'linked wallets', routes: async () => (await import('./linked-wallets/routes.ts')).linkedWallets },
  { name: 'eligibility', routes: async () => (await import('./eligibility/routes.ts')).eligibility },
  { name: 'portal', routes: async () => (await import('./portal/routes.ts')).portal },
];

/** Every capability's background loops, in list order; a name used twice stops the start. */
export async function loadLoops(): Promise<readonly BackgroundLoop[]> {
  const loops = (await Promise.all(capabilities.map((c) => c.loops?.() ?? []))).flat();
  for (const [i, loop] of loops.entries())
    if (loops.findIndex((l) => l.name === loop.name) !== i)
      throw new Error(`background loop "${loop.name}" declared twice`);
  return loops;
}
