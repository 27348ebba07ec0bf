#!/usr/bin/env node
// The operator CLI. Runs the TypeScript sources directly: Node 24 strips types natively, so there
// is no build step between a checkout and a running service. Reached as `node bin/platform.js`,
// `npm start`, or through the `node_modules/.bin/platform` link (`npx platform`).
//
// This file is plain JavaScript so that an older Node gets one clear line instead of
// ERR_UNKNOWN_FILE_EXTENSION: the version is checked before any TypeScript is imported.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `platform needs Node.js 24 or newer; this is Node.js ${process.versions.node}. ` +
      'Install Node 24, or run the one pinned in this checkout: node_modules/.bin/node bin/platform.js\n',
  );
  process.exit(1);
}

// Node's compile cache keeps each module's type-stripped, compiled form on disk (NODE_COMPILE_CACHE,
// or <tmpdir>/node-compile-cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a CLI command starts
// in about half the time once the cache is warm. A cache that cannot be written is skipped silently.
// First, before anything schedules ticks: keeps process.nextTick on V8's fast path (src/shared/async-context.ts).
await import('../src/shared/async-context.ts');

const { enableCompileCache } = await import('node:module');
enableCompileCache?.();

const { main } = await import('../src/cli.ts');
const code = await main(process.argv.slice(2));
// `serve` keeps running on its open server; every other command ends with its exit code.
process.exitCode = code;
