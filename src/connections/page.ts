// The link page (`GET /connections/{provider}/link?request=…`), where `start` sends the user's
// browser: it names the wallet and the provider, and the wallet signs the link text there (or the
// browser's own console session of that wallet stands for the signature, and the route redirects at
// once). Self-contained HTML and JS like the sign-in page, with the same headers.
import { esc, jsonForScript, layout } from '../signin/page.ts';
import { PROVIDER_NAMES, type ProviderId } from './providers.ts';
import type { ConnectionRequestTable } from './storage.ts';

// Runs in the browser. The service built the text; the page checks that the wallet is the one the
// link is for before asking it to sign anything, then posts the signature and follows the answer.
const CLIENT_JS = String.raw`
const P = JSON.parse(document.getElementById('params').textContent);
const $ = (id) => document.getElementById(id);
function show(id, text) { const el = $(id); el.textContent = text; el.hidden = false; }
function busy(on) { for (const b of document.querySelectorAll('button')) b.disabled = on; }
function toHex(text) { return '0x' + Array.from(new TextEncoder().encode(text), (x) => x.toString(16).padStart(2, '0')).join(''); }
function notThisWallet(account) { return new Error("Your wallet's account " + account + ' is not ' + P.address + ', the wallet this link is for. Nothing was signed.'); }
async function prove(body) {
  const res = await fetch(P.proofPath, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.errorMessage || ('HTTP ' + res.status));
  return json;
}
async function evm() {
  const eth = window.ethereum;
  if (!eth || typeof eth.request !== 'function') throw new Error('No EVM wallet found (window.ethereum).');
  const accounts = await eth.request({ method: 'eth_requestAccounts' });
  const account = accounts && accounts[0];
  if (!account) throw new Error('The wallet returned no account.');
  if (account.toLowerCase() !== P.address.toLowerCase()) throw notThisWallet(account);
  show('status', 'Sign the message in your wallet…');
  const signature = await eth.request({ method: 'personal_sign', params: [toHex(P.message), account] });
  return prove({ request: P.requestId, signature });
}
async function native() {
  const k = window.keplr;
  if (!k || typeof k.signArbitrary !== 'function') throw new Error('No Keplr-style wallet found (window.keplr).');
  await k.enable(P.nativeChainId);
  const key = await k.getKey(P.nativeChainId);
  if (key.bech32Address !== P.address) throw notThisWallet(key.bech32Address);
  show('status', 'Sign the message in your wallet…');
  const sig = await k.signArbitrary(P.nativeChainId, key.bech32Address, P.message);
  return prove({ request: P.requestId, signature: sig.signature, publicKey: sig.pub_key.value });
}
async function run(fn) {
  $('error').hidden = true; busy(true);
  try {
    const r = await fn();
    show('status', 'Wallet proven. Continuing to ' + P.providerName + '…');
    window.location.assign(r.url);
  } catch (e) { $('status').hidden = true; show('error', (e && e.message) || String(e)); busy(false); }
}
$('sign').addEventListener('click', () => run(P.chain === 'ETH' ? evm : native));
$('cancel').addEventListener('click', () => window.location.assign(P.cancelUrl));
`;

export function linkPage(input: {
  row: ConnectionRequestTable;
  message: string;
  nativeChainId: string;
  cancelUrl: string;
  /** The address of another wallet's console session in this browser, if any. */
  otherSession: string | null;
  nonce: string;
}): string {
  const { row } = input;
  const provider = row.provider as ProviderId;
  const name = PROVIDER_NAMES[provider];
  const params = {
    requestId: row.request_id,
    address: row.address,
    chain: row.chain,
    message: input.message,
    providerName: name,
    proofPath: `/api/v0/connections/${provider}/link`,
    nativeChainId: input.nativeChainId,
    cancelUrl: input.cancelUrl,
  };
  const body = `
<h1>Link a ${esc(name)} account to a wallet</h1>
<p>Wallet</p><code data-testid="link-wallet">${esc(row.address)}</code>
<p>Continuing sends you to ${esc(name)}. The ${esc(name)} account signed in there, in this browser, will be linked to this wallet, and this wallet can then make the claims that are limited to that account.</p>
<p class="muted">Prove that this wallet is yours by signing a message: it costs nothing and sends no transaction. Continue only if you started this link yourself.</p>
${input.otherSession ? `<p class="error" data-testid="other-session">You are signed in to this service as ${esc(input.otherSession)}, not as this wallet. If you did not start this link, close this page.</p>` : ''}
<div id="actions">
<button id="sign" type="button">${row.chain === 'ETH' ? 'Sign with an EVM wallet' : 'Sign with a Keplr wallet'}</button>
<button id="cancel" type="button" class="secondary">Cancel</button>
</div>
<p id="status" hidden></p><p id="error" class="error" role="alert" hidden></p>
<script type="application/json" id="params">${jsonForScript(params)}</script>`;
  return layout(`Link a ${name} account`, body, input.nonce, CLIENT_JS);
}

export const linkErrorPage = (message: string, nonce: string) =>
  layout(
    'Link error',
    `<h1>This link is not valid</h1><p class="error" id="error">${esc(message)}</p><p class="muted">Go back to the app or the console and start again.</p>`,
    nonce,
  );
