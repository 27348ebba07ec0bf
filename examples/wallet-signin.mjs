#!/usr/bin/env node
// Plays the user's wallet in the sign-in flow, for trying the service from a shell: it asks the
// service for the message (what the authorize page does), signs it with a throwaway EVM key, and
// prints the one-time code that the page would hand to your redirect URI. Your backend then
// exchanges that code at the token endpoint (see the README quickstart).
//
//   node examples/wallet-signin.mjs CLIENT_ID REDIRECT_URI "manageClaims manageDynamicStores"
//
// Env: PLATFORM_URL (default http://127.0.0.1:3000), WALLET_KEY (0x + 64 hex; default: a new key).
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const [clientId, redirectUri, scope = ''] = process.argv.slice(2);
if (!clientId || !redirectUri) {
  process.stderr.write('usage: node examples/wallet-signin.mjs CLIENT_ID REDIRECT_URI [SCOPES]\n');
  process.exit(2);
}
const base = process.env.PLATFORM_URL ?? 'http://127.0.0.1:3000';
const account = privateKeyToAccount(process.env.WALLET_KEY ?? generatePrivateKey());

async function post(path, body) {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${json.errorMessage ?? JSON.stringify(json)}`);
  return json;
}

const { requestId, message } = await post('/api/v0/signin/challenge', {
  client_id: clientId,
  redirect_uri: redirectUri,
  scope,
  address: account.address,
});
const signature = await account.signMessage({ message });
const { code } = await post('/api/v0/signin/approve', { requestId, signature });
process.stdout.write(JSON.stringify({ address: account.address, code }) + '\n');
