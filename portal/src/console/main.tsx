// The developer console: sign in with a wallet (or a one-time link from the operator, #/link/…),
// then API keys, developer apps, claims, dynamic stores, plugins and the account. Hash routes
// (#/keys, #/claims/new, …) keep every page on `/`. Opened at another address than the service's
// own (localhost for 127.0.0.1, say), where no sign-in can work, it offers the right link instead.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import '../styles.css';
import { api, call, loadSession, rememberSession, type SessionInfo } from '../api.ts';
import { ErrorLine, useAction } from '../ui.tsx';
import { hasWallet, signInWithWallet, signOut, type WalletKind } from '../wallet.ts';
import { KeysPage } from './keys.tsx';
import { AppsPage } from './apps.tsx';
import { ClaimsPage } from './claims.tsx';
import { StoresPage } from './stores.tsx';
import { PluginsPage } from './plugins.tsx';
import { AccountPage } from './account.tsx';
import { EligiblePage } from './eligible.tsx';

const PAGES = [
  ['keys', 'API keys'],
  ['apps', 'Developer apps'],
  ['claims', 'Claims'],
  ['stores', 'Dynamic stores'],
  ['plugins', 'Plugins'],
  ['account', 'Account'],
  ['eligible', 'What can I claim?'],
] as const;

// Back from linking a social account (?connected= or ?connectionError=): the account page says how it went.
if (!location.hash && /[?&](connected|connectionError)=/.test(location.search)) location.hash = '#/account';

/** The service's own origin (PUBLIC_URL), which the server writes into the page. */
const PUBLIC_ORIGIN =
  document.querySelector('meta[name="platform-public-origin"]')?.getAttribute('content') || location.origin;

function WrongOrigin() {
  const right = `${PUBLIC_ORIGIN}${location.pathname}${location.search}${location.hash}`;
  return (
    <main id="main">
      <section class="card narrow" aria-labelledby="origin-title">
        <h1 id="origin-title">Open the console at its own address</h1>
        <p>
          This service's address is <code>{PUBLIC_ORIGIN}</code>, but this page was opened at{' '}
          <code>{location.origin}</code>. Sign-in (with a wallet or a sign-in link) only works at the service's own
          address.
        </p>
        <p>
          <a class="button" href={right} data-testid="right-origin">
            Continue at {PUBLIC_ORIGIN}
          </a>
        </p>
      </section>
    </main>
  );
}

/** Signs in with the token of a one-time link (#/link/<token>), then leaves the token out of the address bar. */
function LinkSignIn({ token, onSignedIn }: { token: string; onSignedIn: (s: SessionInfo) => void }) {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    history.replaceState(null, '', `${location.pathname}${location.search}#/link`);
    call(api.POST('/api/v0/console/link', { body: { token } })).then(
      (s) => {
        history.replaceState(null, '', `${location.pathname}${location.search}#/keys`);
        onSignedIn(rememberSession(s));
        dispatchEvent(new HashChangeEvent('hashchange'));
      },
      (e: Error) => setError(e.message),
    );
  }, [token]);
  return (
    <section class="card narrow" aria-labelledby="link-title">
      <h1 id="link-title">Signing in with a link</h1>
      {error ? (
        <>
          <ErrorLine error={error} />
          <p>
            <a href="#/keys">Sign in with a wallet instead</a>
          </p>
        </>
      ) : (
        <p aria-busy="true">Checking the link…</p>
      )}
    </section>
  );
}

function useHash(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const on = () => setParts(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return parts;
}

function SignIn({ session, onSignedIn }: { session: SessionInfo; onSignedIn: (s: SessionInfo) => void }) {
  const { busy, error, run } = useAction();
  const go = (kind: WalletKind) => run(async () => onSignedIn(await signInWithWallet(kind, session.nativeChainId)));
  return (
    <section class="card narrow" aria-labelledby="signin-title">
      <h1 id="signin-title">Developer console</h1>
      <p>
        Sign in with your wallet to manage API keys, apps, claims and dynamic stores. Signing costs nothing and sends no
        transaction.
      </p>
      <button type="button" id="signin-evm" disabled={busy} onClick={() => go('evm')}>
        Sign in with an EVM wallet
      </button>
      <button type="button" id="signin-keplr" class="secondary" disabled={busy} onClick={() => go('keplr')}>
        Sign in with a Keplr wallet
      </button>
      {!hasWallet('evm') && !hasWallet('keplr') ? (
        <p class="muted">No wallet extension detected in this browser.</p>
      ) : null}
      <ErrorLine error={error} />
    </section>
  );
}

function Console() {
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const route = useHash();
  const [linkToken] = useState(() => (route[0] === 'link' && route[1] ? route[1] : null));
  useEffect(() => {
    loadSession().then(setSession, (e: Error) => setLoadError(e.message));
    const ended = () => setSession((s) => (s ? { ...s, signedIn: false, csrfToken: '' } : s));
    addEventListener('console-session-ended', ended);
    return () => removeEventListener('console-session-ended', ended);
  }, []);
  if (location.origin !== PUBLIC_ORIGIN) return <WrongOrigin />;
  if (loadError)
    return (
      <main id="main">
        <ErrorLine error={loadError} />
      </main>
    );
  if (!session)
    return (
      <main id="main">
        <p aria-busy="true">Loading…</p>
      </main>
    );
  if (linkToken && route[0] === 'link')
    return (
      <main id="main">
        <LinkSignIn token={linkToken} onSignedIn={setSession} />
      </main>
    );
  if (!session.signedIn)
    return (
      <main id="main">
        <SignIn session={session} onSignedIn={setSession} />
      </main>
    );
  const page = route[0] || 'keys';
  return (
    <>
      <header class="top">
        <span class="brand">Console</span>
        <nav aria-label="Console">
          {PAGES.map(([id, label]) => (
            <a href={`#/${id}`} key={id} aria-current={page === id ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="who" title={session.platformAddress}>
          {session.address.slice(0, 8)}…{session.address.slice(-4)}
        </span>
        <button
          type="button"
          class="secondary small"
          onClick={async () => {
            await signOut().catch(() => undefined);
            setSession({ ...session, signedIn: false, csrfToken: '' });
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main">
        {page === 'keys' && <KeysPage />}
        {page === 'apps' && <AppsPage />}
        {page === 'claims' && <ClaimsPage route={route.slice(1)} session={session} />}
        {page === 'stores' && <StoresPage route={route.slice(1)} />}
        {page === 'plugins' && <PluginsPage route={route.slice(1)} />}
        {page === 'account' && <AccountPage session={session} />}
        {page === 'eligible' && <EligiblePage session={session} />}
      </main>
    </>
  );
}

render(<Console />, document.getElementById('app')!);
