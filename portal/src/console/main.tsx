// The developer console: sign in with a wallet, then API keys, developer apps, claims, dynamic
// stores, plugins and the account. Hash routes (#/keys, #/claims/new, …) keep every page on `/`.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import '../styles.css';
import { loadSession, type SessionInfo } from '../api.ts';
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
  useEffect(() => {
    loadSession().then(setSession, (e: Error) => setLoadError(e.message));
    const ended = () => setSession((s) => (s ? { ...s, signedIn: false, csrfToken: '' } : s));
    addEventListener('console-session-ended', ended);
    return () => removeEventListener('console-session-ended', ended);
  }, []);
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
