#!/usr/bin/env node
// The operator CLI. Runs the TypeScript sources directly: Node 24 strips types natively, so there
// is no build step between a checkout and a running service. Reached as `node bin/platform.js`,
// `npm start`, or through the `node_modules/.bin/platform` link (`npx platform`).
import { main } from '../src/cli.ts';

const code = await main(process.argv.slice(2));
// `serve` keeps running on its open server; every other command ends with its exit code.
process.exitCode = code;
