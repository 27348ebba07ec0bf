// `npm run bench`: runs every benchmark in bench/ one after another (or those named:
// `npm run bench -- swap merkle`), each in its own process so figures do not interfere.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
  .map((f) => f.replace(/\.ts$/, ''))
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort((a, b) => (a === 'foundation' ? -1 : b === 'foundation' ? 1 : a.localeCompare(b)));
let failed = 0;
for (const name of benches) {
  console.log(`\n=== bench/${name}.ts`);
  const r = spawnSync(process.execPath, [join(dir, `${name}.ts`)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
