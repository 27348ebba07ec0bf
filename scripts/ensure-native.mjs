// Makes sure better-sqlite3's native addon matches the Node that runs the project (the pinned
// `node` dev dependency). Machines whose npm is configured with `nodedir` pointing at an older
// system Node's headers (and offline machines where prebuilt binaries cannot be downloaded)
// otherwise compile the addon for the wrong ABI. The fix: fetch the headers for *this* Node
// version from the npm registry (they ship inside the `node-<os>-<arch>` package) and rebuild.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));

function loads() {
  try {
    const Database = require('better-sqlite3');
    new Database(':memory:').close();
    return true;
  } catch (err) {
    return err;
  }
}

const first = loads();
if (first === true) process.exit(0);
if (!existsSync(join(root, 'node_modules', 'better-sqlite3'))) process.exit(0); // not installed yet

const version = process.version.slice(1);
const pkg = `node-${process.platform}-${process.arch}@${version}`;
const cache = join(root, 'node_modules', '.cache', 'node-headers', version);
console.log(
  `[ensure-native] better-sqlite3 does not load on Node ${version} (${String(first.message).split('\n')[0]}); rebuilding against ${pkg} headers`,
);
if (!existsSync(join(cache, 'package', 'include', 'node', 'node_version.h'))) {
  mkdirSync(cache, { recursive: true });
  execFileSync('npm', ['pack', pkg, '--silent'], { cwd: cache, stdio: ['ignore', 'pipe', 'inherit'] });
  const tgz = readdirSync(cache).find((f) => f.endsWith('.tgz'));
  execFileSync('tar', ['xzf', tgz, 'package/include'], { cwd: cache, stdio: 'inherit' });
}
const gyp = require.resolve('node-gyp/bin/node-gyp.js', {
  paths: [process.env.npm_execpath ? dirname(process.env.npm_execpath) : root, root],
});
execFileSync(process.execPath, [gyp, 'rebuild', '--release', `--nodedir=${join(cache, 'package')}`], {
  cwd: join(root, 'node_modules', 'better-sqlite3'),
  stdio: 'inherit',
  env: { ...process.env, npm_config_nodedir: join(cache, 'package') },
});
const second = loads();
if (second !== true) {
  console.error('[ensure-native] better-sqlite3 still does not load:', second);
  process.exit(1);
}
console.log('[ensure-native] better-sqlite3 rebuilt for Node', version);
