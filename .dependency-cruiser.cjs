// Import-cycle check (`npm run check:cycles`, run by .ci/run after the typecheck).
//
// Only runtime imports count: Node strips `import type` (tsconfig's verbatimModuleSyntax makes
// every type-only import say so), so a cycle through one is no cycle at run time. Babel's
// TypeScript preset, told to drop only the imports marked `type` (babel.cycles.json), does the same
// stripping here before the imports are read: the installed TypeScript 7 has no JavaScript API
// for the cruiser to use. Dynamic `import()` counts: it loads the module all the same.

// Cycles known and tolerated until the work named in their reason removes them. Each is matched
// by its exact set of modules: a new cycle, or one of these growing, fails the check.
// A registry's cycles: `registry` loads `list`, whose side-effect imports run each capability's
// `file`, which calls the registry's register function.
const registryCycles = (registry, list, file, capabilities, reason) =>
  capabilities.map((capability) => ({ reason, cycle: [registry, list, `src/${capability}/${file}`] }));

const allowedCycles = [
  ...registryCycles(
    'src/worker/runtime.ts',
    'src/worker/loops.ts',
    'loops.ts',
    ['claims', 'signin', 'chain', 'connections', 'webhooks'],
    'loop registry (registerLoop). Ends when a capability is one object listed once, declaring its loops; ' +
      'removing it now means editing the loops of signin/, connections/ and webhooks/, which other work changes.',
  ),
  ...registryCycles(
    'src/cli.ts',
    'src/commands.ts',
    'cli.ts',
    ['signin', 'claims', 'swap', 'plugin-documents', 'chain'],
    'command registry (registerCommand). Ends the same way, each capability declaring its commands.',
  ),
];

module.exports = {
  forbidden: [
    {
      name: 'no-runtime-cycle',
      severity: 'error',
      comment: 'A runtime import cycle: modules that load each other (type-only imports excepted).',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    moduleSystems: ['es6'],
    babelConfig: { fileName: 'babel.cycles.json' },
    knownViolations: allowedCycles.map(({ cycle }) => ({
      type: 'cycle',
      from: cycle[0],
      to: cycle[1],
      rule: { name: 'no-runtime-cycle', severity: 'error' },
      cycle: cycle.map((name) => ({ name, dependencyTypes: [] })),
    })),
  },
};
