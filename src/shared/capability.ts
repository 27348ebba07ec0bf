// What one capability is: everything the service needs to know about a folder, in one object,
// listed once in src/capabilities.ts (docs/design.md, "Adding a capability").
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import type { BackgroundLoop } from '../worker/runtime.ts';
import type { Command } from './command.ts';

/** A capability's routes. The server registers them inside their own encapsulated Fastify plugin. */
export interface Routes {
  register(app: FastifyInstance, ctx: AppContext): Promise<void> | void;
}

export interface Capability {
  name: string;
  /**
   * Its routes, loaded when the HTTP service is built (the CLI lists commands without loading them).
   * Hooks and decorations they add stay inside their plugin; the server's own (the API-key gate,
   * the error handler, the access table, the input rules) apply to every capability.
   */
  routes?: () => Promise<Routes>;
  /** Background loops: `serve` (unless RUN_WORKER=false) and `platform worker` run them. */
  loops?: () => Promise<readonly BackgroundLoop[]>;
  /** CLI commands (`platform <name> …`). */
  commands?: readonly Command[];
  /** Runs when the HTTP service is built, before any capability's routes (installs per-context services). */
  init?(ctx: AppContext): Promise<void> | void;
}
