#!/usr/bin/env node
// The operator CLI. Runs the TypeScript sources directly: Node 24 strips types natively,
// so there is no build step between a checkout and a running service.
import '../src/cli.ts';
