// The account: who is signed in, and the apps this address signed in to, each revocable.
// (Usernames and linked social accounts arrive with the accounts and connections routes.)
import { useEffect, useState } from 'preact/hooks';
import { api, call, formatTime, type paths, type SessionInfo } from '../api.ts';
import { ErrorLine, useAction } from '../ui.tsx';

type Authorization = paths['/api/v0/account/authorizations']['get']['responses'][200]['content']['application/json']['authorizations'][number];

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
      <h2>Apps you signed in to</h2>
      <ErrorLine error={error} />
      {apps?.length === 0 ? <p>You are not signed in to any app.</p> : null}
      <ul class="list">
        {apps?.map((a) => (
          <li class="card row spread" key={a.authorizationId} data-app={a.appName}>
            <span>
              <strong>{a.appName}</strong> <span class="muted">since {formatTime(a.createdAt)} · {a.scopes.join(', ') || 'no scopes'}</span>
            </span>
            <button
              type="button"
              class="danger small"
              aria-label={`Revoke ${a.appName}`}
              onClick={() =>
                void run(async () => {
                  await call(api.DELETE('/api/v0/account/authorizations', { body: { authorizationId: a.authorizationId } }));
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
