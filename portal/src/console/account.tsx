// The account: who is signed in, the social accounts linked to this address (link, unlink), and the
// apps this address signed in to, each revocable. Linking goes to the service's link page, which
// this browser's console session proves at once, then to the provider, which returns the browser
// to CONNECTIONS_RETURN_URL (by default the console) with ?connected= or ?connectionError=.
import { useEffect, useState } from 'preact/hooks';
import { api, call, formatTime, type paths, type SessionInfo } from '../api.ts';
import { ErrorLine, useAction } from '../ui.tsx';

type Authorization =
  paths['/api/v0/account/authorizations']['get']['responses'][200]['content']['application/json']['authorizations'][number];
type Links = paths['/api/v0/connections']['get']['responses'][200]['content']['application/json'];

const PROVIDER_NAMES: Record<string, string> = {
  discord: 'Discord',
  github: 'GitHub',
  google: 'Google',
  twitch: 'Twitch',
  twitter: 'X (Twitter)',
};
const providerName = (id: string) => PROVIDER_NAMES[id] ?? id;

/** What the provider's return said (?connected= / ?connectionError=), read once and removed from the address bar. */
function takeLinkOutcome(): { ok: boolean; text: string } | null {
  const q = new URLSearchParams(location.search);
  const connected = q.get('connected');
  const failed = q.get('connectionError');
  if (connected === null && failed === null) return null;
  history.replaceState(null, '', location.pathname + location.hash);
  return failed !== null
    ? { ok: false, text: failed }
    : { ok: true, text: `Your ${providerName(connected!)} account is linked.` };
}

function LinkedAccounts() {
  const [links, setLinks] = useState<Links | null>(null);
  const [outcome] = useState(takeLinkOutcome);
  const { busy, error, run } = useAction();
  const load = () => run(async () => setLinks(await call(api.GET('/api/v0/connections'))));
  useEffect(() => void load(), []);
  if (links && links.availableProviders.length === 0 && links.connections.length === 0) return null;
  const linked = new Set(links?.connections.map((l) => l.provider));
  return (
    <>
      <h2>Linked accounts</h2>
      {outcome ? (
        <p class={outcome.ok ? 'ok' : 'error'} role="status">
          {outcome.text}
        </p>
      ) : null}
      <ErrorLine error={error} />
      <ul class="list">
        {links?.connections.map((l) => (
          <li class="card row spread" key={l.provider} data-provider={l.provider}>
            <span>
              <strong>{providerName(l.provider)}</strong> {l.username}{' '}
              <span class="muted">since {formatTime(l.linkedAt)}</span>
            </span>
            <button
              type="button"
              class="danger small"
              disabled={busy}
              aria-label={`Unlink ${providerName(l.provider)}`}
              onClick={() =>
                void run(async () => {
                  await call(
                    api.DELETE('/api/v0/connections/{provider}', { params: { path: { provider: l.provider } } }),
                  );
                  await load();
                })
              }
            >
              Unlink
            </button>
          </li>
        ))}
      </ul>
      <p class="row">
        {links?.availableProviders
          .filter((p) => !linked.has(p))
          .map((p) => (
            <button
              type="button"
              class="secondary"
              key={p}
              disabled={busy}
              onClick={() =>
                void run(async () => {
                  const { url } = await call(
                    api.POST('/api/v0/connections/{provider}/start', { params: { path: { provider: p } }, body: {} }),
                  );
                  location.assign(url);
                })
              }
            >
              Link {providerName(p)}
            </button>
          ))}
      </p>
    </>
  );
}

export function AccountPage({ session }: { session: SessionInfo }) {
  const [apps, setApps] = useState<Authorization[] | null>(null);
  const { error, run } = useAction();
  const load = () => run(async () => setApps((await call(api.GET('/api/v0/account/authorizations'))).authorizations));
  useEffect(() => void load(), []);
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account</h1>
      <div class="card">
        <p>
          Signed in as <code>{session.address}</code>
        </p>
        <p class="muted">
          Native address <code>{session.platformAddress}</code> · session ends {formatTime(session.expiresAt)}
        </p>
      </div>
      <LinkedAccounts />
      <h2>Apps you signed in to</h2>
      <ErrorLine error={error} />
      {apps?.length === 0 ? <p>You are not signed in to any app.</p> : null}
      <ul class="list">
        {apps?.map((a) => (
          <li class="card row spread" key={a.authorizationId} data-app={a.appName}>
            <span>
              <strong>{a.appName}</strong>{' '}
              <span class="muted">
                since {formatTime(a.createdAt)} · {a.scopes.join(', ') || 'no scopes'}
              </span>
            </span>
            <button
              type="button"
              class="danger small"
              aria-label={`Revoke ${a.appName}`}
              onClick={() =>
                void run(async () => {
                  await call(
                    api.DELETE('/api/v0/account/authorizations', { body: { authorizationId: a.authorizationId } }),
                  );
                  await load();
                })
              }
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
