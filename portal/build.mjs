// Builds the web portal into portal/dist (run by `npm install` as part of postinstall, and by
// `npm run build:portal`). Prints the JavaScript budgets; exits 1 when a budget is exceeded.
import { build } from 'vite';

try {
  await build({ configFile: new URL('./vite.config.ts', import.meta.url).pathname });
} catch (err) {
  console.error(`portal build failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
