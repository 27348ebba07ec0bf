// GET /signin/authorize: the page a user's browser opens. Self-contained HTML and JS (no external
// assets, no API key). It validates the client and redirect URI before anything else: an unknown
// client or unregistered redirect URI is shown on the page and never redirected to. Other errors go
// back to the app's redirect URI as RFC 6749 §4.1.2.1 error parameters.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { AuthorizeError, redirectWith, validateAuthorizeRequest, type AuthorizeRequest } from './flow.ts';
import { SCOPES } from './scopes.ts';

export const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
export const jsonForScript = (v: unknown) =>
  JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

const STYLE = `
[hidden]{display:none!important}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f4f5f7;color:#1d2330;margin:0;display:flex;justify-content:center}
main{background:#fff;max-width:460px;width:100%;margin:40px 16px;padding:28px;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08)}
h1{font-size:1.3rem;margin:0 0 4px}p{line-height:1.45}.muted{color:#5b6472;font-size:.9rem}
ul{padding-left:20px}li{margin:6px 0}button{display:block;width:100%;padding:12px;margin:10px 0;border-radius:8px;border:1px solid #2f5bea;background:#2f5bea;color:#fff;font-size:1rem;cursor:pointer}
button.secondary{background:#fff;color:#2f5bea}button:disabled{opacity:.6;cursor:default}
.error{color:#b42318;background:#fef3f2;padding:10px;border-radius:8px;white-space:pre-wrap}
code{display:block;word-break:break-all;background:#f0f2f5;padding:10px;border-radius:8px;font-size:.95rem}`;

export function layout(title: string, body: string, nonce: string, script = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${esc(title)}</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main>${body}</main>${script ? `<script nonce="${nonce}">${script}</script>` : ''}</body></html>`;
}

// Runs in the browser. EVM: EIP-1193 `eth_requestAccounts` + `personal_sign`. Native: Keplr-style
// `enable` / `getKey` / `signArbitrary`. The server builds the message; the page only relays it.
const CLIENT_JS = String.raw`
const P = JSON.parse(document.getElementById('params').textContent);
const $ = (id) => document.getElementById(id);
function show(id, text) { const el = $(id); el.textContent = text; el.hidden = false; }
function busy(on) { for (const b of document.querySelectorAll('button')) b.disabled = on; }
async function api(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.errorMessage || ('HTTP ' + res.status));
  return json;
}
function challengeBody(address) {
  const b = { client_id: P.client_id, address };
  for (const k of ['redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'nonce']) if (P[k] !== undefined) b[k] = P[k];
  return b;
}
function toHex(text) { return '0x' + Array.from(new TextEncoder().encode(text), (x) => x.toString(16).padStart(2, '0')).join(''); }
function finish(result) {
  if (result.redirectUrl) { show('status', 'Signed in. Returning to ' + P.appName + '…'); window.location.assign(result.redirectUrl); return; }
  $('actions').hidden = true;
  show('status', 'Signed in. Copy this code into ' + P.appName + ':');
  show('code', result.code);
}
async function run(fn) {
  $('error').hidden = true; busy(true);
  try { finish(await fn()); } catch (e) { show('error', (e && e.message) || String(e)); busy(false); }
}
async function evm() {
  const eth = window.ethereum;
  if (!eth || typeof eth.request !== 'function') throw new Error('No EVM wallet found (window.ethereum).');
  const accounts = await eth.request({ method: 'eth_requestAccounts' });
  if (!accounts || !accounts[0]) throw new Error('The wallet returned no account.');
  const account = accounts[0];
  const ch = await api('/api/v0/signin/challenge', challengeBody(account));
  show('status', 'Sign the message in your wallet…');
  const signature = await eth.request({ method: 'personal_sign', params: [toHex(ch.message), account] });
  return api('/api/v0/signin/approve', { requestId: ch.requestId, signature });
}
async function native() {
  const k = window.keplr;
  if (!k || typeof k.signArbitrary !== 'function') throw new Error('No Keplr-style wallet found (window.keplr).');
  await k.enable(P.nativeChainId);
  const key = await k.getKey(P.nativeChainId);
  const ch = await api('/api/v0/signin/challenge', challengeBody(key.bech32Address));
  show('status', 'Sign the message in your wallet…');
  const sig = await k.signArbitrary(P.nativeChainId, key.bech32Address, ch.message);
  return api('/api/v0/signin/approve', { requestId: ch.requestId, signature: sig.signature, publicKey: sig.pub_key.value });
}
$('evm').addEventListener('click', () => run(evm));
$('native').addEventListener('click', () => run(native));
$('deny').addEventListener('click', () => {
  if (P.denyUrl) window.location.assign(P.denyUrl);
  else { $('actions').hidden = true; show('status', 'Sign-in cancelled. You can close this page.'); }
});
`;

function consentPage(ctx: AppContext, req: AuthorizeRequest, nonce: string): string {
  const scopes = SCOPES.filter((s) => req.scopes.includes(s.scopeId));
  const params = {
    client_id: req.app.client_id,
    ...(req.redirectUri !== null ? { redirect_uri: req.redirectUri } : {}),
    ...(req.scopes.length ? { scope: req.scopes.join(' ') } : {}),
    ...(req.state !== null ? { state: req.state } : {}),
    ...(req.codeChallenge !== null ? { code_challenge: req.codeChallenge, code_challenge_method: 'S256' } : {}),
    ...(req.nonce !== null ? { nonce: req.nonce } : {}),
    appName: req.app.name,
    nativeChainId: ctx.config.signinNativeChainId,
    denyUrl:
      req.redirectUri !== null
        ? redirectWith(req.redirectUri, { error: 'access_denied', ...(req.state !== null ? { state: req.state } : {}) })
        : null,
  };
  const target =
    req.redirectUri !== null
      ? `You will be returned to <b>${esc(new URL(req.redirectUri).origin)}</b>.`
      : 'You will get a code to copy into the app.';
  const body = `
<h1>Sign in to ${esc(req.app.name)}</h1>
<p class="muted">${esc(req.app.description)}</p>
<p>${esc(req.app.name)} asks you to prove that you own your wallet address${scopes.length ? ' and to allow:' : '.'}</p>
${scopes.length ? `<ul id="scopes">${scopes.map((s) => `<li><b>${esc(s.scopeName)}</b> <span class="muted">(${esc(s.scopeId)})</span><br><span class="muted">${esc(s.description)}</span></li>`).join('')}</ul>` : '<p class="muted" id="scopes">No API scopes requested.</p>'}
<p class="muted">${target} Signing costs nothing and sends no transaction.</p>
<div id="actions">
<button id="evm" type="button">Sign in with an EVM wallet</button>
<button id="native" type="button" class="secondary">Sign in with a Keplr wallet</button>
<button id="deny" type="button" class="secondary">Cancel</button>
</div>
<p id="status" hidden></p><code id="code" hidden></code><p id="error" class="error" hidden></p>
<script type="application/json" id="params">${jsonForScript(params)}</script>`;
  return layout(`Sign in to ${req.app.name}`, body, nonce, CLIENT_JS);
}

const errorPage = (message: string, nonce: string) =>
  layout(
    'Sign-in error',
    `<h1>This sign-in link is not valid</h1><p class="error" id="error">${esc(message)}</p><p class="muted">Go back to the app and try again.</p>`,
    nonce,
  );

/** The headers of a self-contained page (this one, the connections flow's): no framing, no referrer, scripts and styles by nonce only. Returns the nonce. */
export function pageHeaders(reply: FastifyReply): string {
  const nonce = randomBytes(16).toString('base64');
  reply
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header(
      'content-security-policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
  return nonce;
}

/** The longest value each parameter may have (documented through the querystring schema below). */
const MAX_LENGTH = {
  response_type: 64,
  client_id: 128,
  redirect_uri: 2048,
  scope: 1024,
  state: 1024,
  code_challenge: 128,
  code_challenge_method: 16,
  nonce: 1024,
  prompt: 64,
} as const;

const Query = Type.Object(
  Object.fromEntries(
    Object.entries(MAX_LENGTH).map(([k, maxLength]) => [k, Type.Optional(Type.String({ maxLength }))]),
  ),
  { additionalProperties: true }, // display-only parameters (claimId, …) are ignored
);

/** Until client_id and redirect_uri are known good, an error is shown on the page, never redirected (RFC 6749 §4.1.2.1). */
const HELD = ['client_id', 'redirect_uri'];

export function registerAuthorizePage(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>(
    '/signin/authorize',
    // The schema documents the parameters; the page itself answers a repeated or over-long one
    // (an error page or an error redirect, as RFC 6749 §4.1.2.1 says), so validation is only attached.
    {
      attachValidation: true,
      schema: {
        tags: ['sign-in'],
        summary: 'The authorization page (HTML) an app sends its users to',
        querystring: Query,
      },
    },
    async (request, reply) => {
      const nonce = pageHeaders(reply);
      const q = request.query;
      const repeated = Object.entries(q).find(([, v]) => Array.isArray(v))?.[0];
      const overLong = Object.entries(MAX_LENGTH).find(([k, max]) => typeof q[k] === 'string' && q[k].length > max);
      const problem =
        repeated !== undefined
          ? { key: repeated, message: `Parameter ${repeated} must not be repeated.` }
          : overLong
            ? { key: overLong[0], message: `Parameter ${overLong[0]} must be at most ${overLong[1]} characters.` }
            : undefined;
      // a parameter with a problem is never used, not even echoed back as the state
      const str = (k: string) => (typeof q[k] === 'string' && k !== problem?.key ? (q[k] as string) : undefined);
      let req: AuthorizeRequest;
      try {
        if (problem && HELD.includes(problem.key)) throw new AuthorizeError('invalid_request', problem.message, false);
        req = await validateAuthorizeRequest(ctx, {
          client_id: str('client_id') ?? '',
          redirect_uri: str('redirect_uri'),
          scope: str('scope'),
          state: str('state'),
          code_challenge: str('code_challenge'),
          code_challenge_method: str('code_challenge_method'),
          nonce: str('nonce'),
        });
        if (problem) throw new AuthorizeError('invalid_request', problem.message, true);
        // RFC 6749 §4.1.2.1: missing is invalid_request; another value is unsupported_response_type
        if (!str('response_type'))
          throw new AuthorizeError('invalid_request', 'response_type is required (it must be code).', true);
        if (str('response_type') !== 'code')
          throw new AuthorizeError('unsupported_response_type', 'response_type must be code.', true);
        // OpenID Connect Core §3.1.2.6: every sign-in is a new wallet signature, so no silent one
        if (str('prompt')?.split(' ').includes('none'))
          throw new AuthorizeError(
            'login_required',
            'prompt=none cannot be honoured: every sign-in needs a wallet signature.',
            true,
          );
      } catch (err) {
        if (!(err instanceof AuthorizeError)) throw err;
        const redirectUri = str('redirect_uri');
        if (err.redirectable && redirectUri !== undefined) {
          const state = str('state');
          return reply.header('content-type', 'text/plain; charset=utf-8').redirect(
            redirectWith(redirectUri, {
              error: err.oauthError,
              error_description: err.message,
              ...(state !== undefined ? { state } : {}),
            }),
            302,
          );
        }
        return reply.code(400).send(errorPage(err.message, nonce));
      }
      return reply.send(consentPage(ctx, req, nonce));
    },
  );
}
