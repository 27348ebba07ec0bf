// The container image cannot be built here (no Docker engine on this machine), so this runs what
// the image runs: the Dockerfile's final-stage ENV and exact CMD from the checkout (the image's
// WORKDIR holds the same bin/, src/, node_modules/ and package.json), on the test database, until
// /readyz answers; then the image's HEALTHCHECK command itself, then a clean stop.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../helpers/app.ts';
import { ROOT } from '../helpers/cli.ts';
import { startService } from '../helpers/process.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
const lines = dockerfile
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const finalStage = lines.slice(lines.findLastIndex((l) => /^FROM /i.test(l)));
const jsonArgs = (instruction: string) => {
  const line = finalStage.find((l) => l.startsWith(instruction + ' '));
  assert.ok(line, `${instruction} in the final stage`);
  return JSON.parse(line.slice(line.indexOf('['))) as string[];
};
/** ENV of the final stage (`ENV A=1 B=2` form). */
const imageEnv: Record<string, string> = Object.fromEntries(
  finalStage
    .filter((l) => l.startsWith('ENV '))
    .flatMap((l) => [...l.slice(4).matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])),
);
/** The image runs `node …`: here the pinned Node 24 (the image's base is Node 24 too). */
const local = (argv: string[]) => (argv[0] === 'node' ? [process.execPath, ...argv.slice(1)] : argv);

describe('the container image, without Docker', () => {
  test('Dockerfile: multi-stage, Node 24, non-root, a health check on /healthz', () => {
    const froms = lines.filter((l) => /^FROM /i.test(l));
    assert.ok(froms.length >= 2, 'multi-stage');
    assert.match(froms.at(-1)!, /^FROM node:24[-.\w]*$/);
    const user = finalStage.find((l) => l.startsWith('USER '));
    assert.ok(user && !/^USER (root|0)\b/.test(user), 'runs as a non-root user');
    assert.ok(finalStage.some((l) => l.startsWith('HEALTHCHECK ') && l.includes('/healthz')));
    assert.deepEqual(jsonArgs('CMD'), ['node', 'bin/platform.js', 'serve']);
  });

  test('compose.yaml: the service built from this Dockerfile, on PostgreSQL, started once PostgreSQL is healthy', () => {
    const compose = readFileSync(join(ROOT, 'compose.yaml'), 'utf8');
    assert.match(compose, /^ {2}postgres:\n {4}image: postgres:/m);
    assert.match(compose, /^ {2}platform:\n {4}build: \.$/m);
    assert.match(compose, /DATABASE_URL: postgres:\/\/\S+@postgres:5432\//);
    assert.match(compose, /condition: service_healthy/);
  });

  let db: TestDatabase;
  before(() => {
    db = createTestDatabase();
  });
  after(() => db.drop());

  test("the image's CMD serves, reaches /readyz, and passes the image's HEALTHCHECK", async () => {
    // the image's environment; DATA_DIR points at a temporary directory instead of /data
    const env: Record<string, string> = { ...imageEnv, ...db.env, LOG_LEVEL: 'info' };
    assert.equal(env.HOST, '0.0.0.0');
    const service = await startService(env, { command: local(jsonArgs('CMD')) });
    try {
      const check = finalStage.find((l) => l.startsWith('HEALTHCHECK '))!;
      const argv = local(JSON.parse(check.slice(check.indexOf('['))) as string[]);
      const code = await new Promise<number | null>((resolve) => {
        execFile(
          argv[0],
          argv.slice(1),
          { env: { ...process.env, PORT: String(service.port) }, timeout: PATIENCE_MS },
          (err) => resolve(err ? ((err as { code?: number }).code ?? 1) : 0),
        );
      });
      assert.equal(code, 0, 'HEALTHCHECK passes');
      assert.match(service.stderr(), /listening on http:\/\/0\.0\.0\.0:/);
    } finally {
      assert.equal(await service.stop(), 0);
    }
    // and the health check fails once the service is gone (it is not a check that cannot fail)
    const check = finalStage.find((l) => l.startsWith('HEALTHCHECK '))!;
    const argv = local(JSON.parse(check.slice(check.indexOf('['))) as string[]);
    const down = await new Promise<boolean>((resolve) =>
      execFile(
        argv[0],
        argv.slice(1),
        { env: { ...process.env, PORT: String(service.port) }, timeout: PATIENCE_MS },
        (err) => resolve(err !== null),
      ),
    );
    assert.ok(down, 'HEALTHCHECK fails without a service');
  });
});
