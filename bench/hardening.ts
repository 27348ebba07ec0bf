// Issue 15 benchmark: what the JSON depth cap costs on the request path. The JSON body parser
// runs a depth scan (src/shared/http-input.ts) before the same secure JSON.parse Fastify uses;
// this compares the two on bodies the API receives, in alternating rounds of the same run, and
// prints the ratio (1.00 = free). `--full` runs longer rounds.
//
// Goal: no measurable cost on small bodies (settled by length or bracket count); on a large batch
// the structural pass costs a fraction of the parse itself.
import { performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from '../src/shared/http-input.ts';
import { median } from './lib/harness.ts';
import { record } from './lib/record.ts';

const full = process.argv.includes('--full');
const roundMs = full ? 2000 : 300;
const rounds = full ? 9 : 5;

const address = (i: number) => `bb1${i.toString(36).padStart(38, 'q')}`;
const bodies: Array<[string, string]> = [
  ['claim attempt (~60 B)', JSON.stringify({ _expectedVersion: -1, pw: { password: 'correct horse' } })],
  [
    'claim creation (~1 KB)',
    JSON.stringify({
      claims: [
        {
          claimId: 'bench-claim-1',
          plugins: [
            { pluginId: 'numUses', instanceId: 'numUses', publicParams: { maxUses: 1000 }, privateParams: {} },
            { pluginId: 'password', instanceId: 'pw', publicParams: {}, privateParams: { password: 'secret' } },
            { pluginId: 'codes', instanceId: 'c1', publicParams: { numCodes: 100 }, privateParams: {} },
          ],
          metadata: { name: 'A claim', description: 'x'.repeat(300), image: 'https://example.com/a.png' },
          rewards: [{ rewardId: 'r1', instanceId: 'r1', metadata: { name: 'reward' } }],
          satisfyMethod: { type: 'AND', conditions: ['pw', { type: 'OR', conditions: ['c1'] }] },
        },
      ],
    }),
  ],
  [
    'store batch, 10,000 addresses (~600 KB)',
    JSON.stringify({
      dynamicDataId: 'x'.repeat(32),
      actions: Array.from({ length: 10_000 }, (_, i) => ({ actionName: 'add', payload: { address: address(i) } })),
    }),
  ],
];

const app = Fastify();
const parse = app.getDefaultJsonParser('error', 'error') as (
  req: unknown,
  body: string,
  done: (err: Error | null, value?: unknown) => void,
) => void;
let sink: unknown;
const plain = (body: string) => parse(null, body, (_e, v) => (sink = v));
const capped = (body: string) => {
  if (jsonDepthExceeds(body, MAX_JSON_DEPTH)) throw new Error('too deep');
  parse(null, body, (_e, v) => (sink = v));
};

/**
 * Time per operation of `a` and `b` on `body`, alternating one call of each so that load on a
 * shared machine hits both alike (in both orders); runs for about `ms`.
 */
function alternate(a: (b: string) => void, b: (b: string) => void, body: string, ms: number): { a: number; b: number } {
  let ta = 0;
  let tb = 0;
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 10; i++) {
      // a then b, then b then a: neither always runs first
      const [first, second] = i % 2 ? [b, a] : [a, b];
      const t0 = performance.now();
      first(body);
      const t1 = performance.now();
      second(body);
      const t2 = performance.now();
      if (i % 2) {
        tb += t1 - t0;
        ta += t2 - t1;
      } else {
        ta += t1 - t0;
        tb += t2 - t1;
      }
    }
    n += 10;
  }
  return { a: (ta / n) * 1000, b: (tb / n) * 1000 };
}

console.log(
  `# JSON body parsing: secure JSON.parse alone vs depth scan + parse (${rounds} rounds of ${roundMs} ms, calls alternated)`,
);
for (const [name, body] of bodies) {
  alternate(plain, capped, body, 100); // warm-up
  const parseUs: number[] = [];
  const cappedUs: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = alternate(plain, capped, body, roundMs);
    parseUs.push(t.a);
    cappedUs.push(t.b);
    ratios.push(t.b / t.a);
  }
  const scan = alternate(
    (s) => jsonDepthExceeds(s, MAX_JSON_DEPTH),
    () => undefined,
    body,
    roundMs,
  ).a;
  console.log(
    `${name.padEnd(40)} parse ${median(parseUs).toFixed(2).padStart(9)} µs  scan+parse ${median(cappedUs).toFixed(2).padStart(9)} µs  time ratio ${median(ratios).toFixed(3)}  (scan alone ${scan.toFixed(2)} µs)`,
  );
  record(`depth scan + parse / parse alone, ${name}`, median(ratios), { better: 'lower' });
}
void sink;
