// Import-cycle check (`npm run check:cycles`, run by .ci/run after the typecheck).
//
// Only runtime imports count: Node strips `import type` (tsconfig's verbatimModuleSyntax makes
// every type-only import say so), so a cycle through one is no cycle at run time. Babel's
// TypeScript preset, told to drop only the imports marked `type` (babel.cycles.json), does the same
// stripping here before the imports are read: the installed TypeScript 7 has no JavaScript API
// for the cruiser to use. Dynamic `import()` counts: it loads the module all the same.

// No cycle is tolerated: the registries that closed one (loops and commands registering themselves
// on import) gave way to one Capability object per folder, listed once in src/capabilities.ts.
// Should a cycle ever have to be tolerated, list it here by its exact set of modules with its reason.
const allowedCycles = [];

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
