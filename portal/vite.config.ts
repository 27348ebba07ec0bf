// Builds the portal: two entries (the console at /, the public claim page at /claim/{id}), hashed
// assets under /assets/, no inline script (the service's CSP allows only 'self'). The build prints
// each entry's gzipped JavaScript (its chunk plus every chunk it imports) and fails over budget.
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

// Overridable for the test that proves an over-budget build fails (PORTAL_BUDGET_KB_<ENTRY>).
export const BUDGETS_KB: Record<string, number> = {
  console: Number(process.env.PORTAL_BUDGET_KB_CONSOLE ?? 300),
  claim: Number(process.env.PORTAL_BUDGET_KB_CLAIM ?? 30),
};

function budgets(): Plugin {
  return {
    name: 'portal-budgets',
    apply: 'build',
    generateBundle(_options, bundle) {
      const chunks = Object.values(bundle).filter((c) => c.type === 'chunk');
      const byName = new Map(chunks.map((c) => [c.fileName, c]));
      const lines: string[] = [];
      const over: string[] = [];
      for (const entry of chunks.filter((c) => c.isEntry)) {
        const seen = new Set<string>();
        const visit = (file: string) => {
          if (seen.has(file)) return;
          seen.add(file);
          for (const i of byName.get(file)?.imports ?? []) visit(i);
        };
        visit(entry.fileName);
        const gz = [...seen].reduce((n, f) => n + gzipSync(byName.get(f)?.code ?? '', { level: 9 }).length, 0);
        const name = entry.name === 'index' ? 'console' : entry.name;
        const budget = BUDGETS_KB[name] ?? 300;
        lines.push(`  ${name.padEnd(8)} ${(gz / 1024).toFixed(1).padStart(6)} KB gzipped JS (budget ${budget} KB)`);
        if (gz > budget * 1024) over.push(`${name}: ${(gz / 1024).toFixed(1)} KB > ${budget} KB`);
      }
      console.log(`\nportal budgets:\n${lines.join('\n')}`);
      if (over.length) this.error(`JavaScript budget exceeded: ${over.join('; ')}`);
    },
  };
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: process.env.PORTAL_OUT_DIR ?? 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL('index.html', import.meta.url)),
        claim: fileURLToPath(new URL('claim.html', import.meta.url)),
      },
    },
  },
  plugins: [budgets()],
});
