// A fixed amount of token-endpoint work, in-process, for instruction counts (valgrind --tool=callgrind),
// which do not depend on the machine's load:
//   WINDOW=1000 valgrind --tool=callgrind --smc-check=all-non-file node bench/lib/signin-window.ts
//   WINDOW=3000 …   (the same run with 2000 more requests)
// Every run mints the same number of codes (MINT, default 3500) and warms up on the same 500, so
// (instructions at WINDOW=3000 − instructions at WINDOW=1000) / 2000 is the cost of one request
// with set-up, minting, JIT warm-up and shutdown cancelled out. KIND=exchange|id_token|refresh picks
// the phase (refresh: rotates the tokens of WINDOW exchanges, which are then counted too, so
// subtract the exchange's figure); BENCH_DB=sqlite|postgres (PostgreSQL's own work, in its server
// processes, is not counted). Requests go through app.inject, 16 at a time (as the HTTP bench's 16
// connections), so no HTTP parsing or socket writes are counted.
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { buildApp } from '../../src/server.ts';
import { createApiKey } from '../../src/api-keys/storage.ts';
import { createDeveloperApp } from '../../src/signin/apps.ts';
import { mintSigninCodes } from './signin-codes.ts';
import { createTestDatabase } from '../../test/helpers/app.ts';

const WINDOW = Number(process.env.WINDOW ?? 1000);
const MINT = Number(process.env.MINT ?? 3500);
const WARM = 500;
const KIND = process.env.KIND ?? 'exchange';
const DB = (process.env.BENCH_DB ?? 'sqlite') as 'sqlite' | 'postgres';
const REDIRECT = 'https://app.example/callback';
if (WARM + WINDOW > MINT) throw new Error('MINT must cover the warm-up and the window');

const database = createTestDatabase(DB);
const ctx = await createContext(loadConfig({ ...database.env, LOG_LEVEL: 'silent', PORT: '0' }));
const app = await buildApp(ctx);
const { key } = await createApiKey(ctx.db, 'bench', Date.now());
const { app: client, clientSecret } = await createDeveloperApp(
  ctx.db,
  { name: 'Bench', redirectUris: [REDIRECT] },
  Date.now(),
);
const openid = KIND === 'id_token';
const codes = await mintSigninCodes(ctx.db, client.clientId, REDIRECT, MINT, openid);

const headers = { 'x-api-key': key, 'content-type': 'application/x-www-form-urlencoded' };
const creds = { client_id: client.clientId, client_secret: clientSecret };
const form = (o: Record<string, string>) => new URLSearchParams(o).toString();

/** Sends the bodies 16 at a time; the JSON answers. */
async function send(bodies: string[]): Promise<Array<Record<string, string>>> {
  const out: Array<Record<string, string>> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < bodies.length) {
        const i = next++;
        const res = await app.inject({ method: 'POST', url: '/api/v0/signin/token', headers, payload: bodies[i] });
        if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
        out[i] = res.json();
      }
    }),
  );
  return out;
}
const exchange = (cs: string[]) =>
  send(cs.map((code) => form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...creds })));
const rotate = (answers: Array<Record<string, string>>) =>
  send(answers.map((a) => form({ grant_type: 'refresh_token', refresh_token: a.refresh_token, ...creds })));

const warm = await exchange(codes.slice(0, WARM));
if (KIND === 'refresh') await rotate(warm);
const answers = await exchange(codes.slice(WARM, WARM + WINDOW));
if (KIND === 'refresh') await rotate(answers);
if (openid && !answers[0].id_token) throw new Error('no id_token');
await app.close();
await ctx.close();
await database.drop();
console.log(`${KIND} ${DB}: ${WINDOW} requests done`);
