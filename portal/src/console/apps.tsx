// Developer apps (OAuth clients): create (secret shown once), edit redirect URIs, rotate the secret,
// delete, and recent sign-ins.
import { useEffect, useState } from 'preact/hooks';
import { api, call, formatTime, type paths } from '../api.ts';
import { CopyButton, ErrorLine, MoreButton, OnceSecret, useAction, usePagedList } from '../ui.tsx';

type App =
  paths['/api/v0/developerApps/fetch']['post']['responses'][200]['content']['application/json']['developerApps'][number];
type Signin =
  paths['/api/v0/developerApps/{clientId}/signins']['get']['responses'][200]['content']['application/json']['signins'][number];

const lines = (text: string) => text.split(/\s+/).filter(Boolean);

function AppCard({ app, onChanged }: { app: App; onChanged: () => void }) {
  const [uris, setUris] = useState(app.redirectUris.join('\n'));
  const [secret, setSecret] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const { busy, error, run } = useAction();
  // read when asked for (the "Recent sign-ins" button), not on mount
  const signins = usePagedList<Signin>(
    (bookmark) =>
      call(
        api.GET('/api/v0/developerApps/{clientId}/signins', {
          params: { path: { clientId: app.clientId }, query: { bookmark } },
        }),
      ).then((r) => ({ docs: r.signins, ...r.pagination })),
    run,
  );
  const id = `app-${app.clientId}`;
  return (
    <article class="card" aria-labelledby={`${id}-name`}>
      <h2 id={`${id}-name`}>{app.name}</h2>
      <p>
        Client ID <code>{app.clientId}</code> <CopyButton text={app.clientId} label="Copy client ID" />
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await call(
              api.PUT('/api/v0/developerApps', { body: { clientId: app.clientId, redirectUris: lines(uris) } }),
            );
            setSaved(true);
            onChanged();
          });
        }}
      >
        <div class="field">
          <label for={`${id}-uris`}>Redirect URIs (one per line)</label>
          <textarea
            id={`${id}-uris`}
            rows={3}
            value={uris}
            onInput={(e) => (setUris((e.currentTarget as HTMLTextAreaElement).value), setSaved(false))}
          />
        </div>
        <div class="row">
          <button type="submit" disabled={busy}>
            Save redirect URIs
          </button>
          {saved ? <span role="status">Saved.</span> : null}
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() =>
              confirm('Rotate the client secret? The current one stops working at once.') &&
              void run(async () =>
                setSecret(
                  (
                    await call(
                      api.PUT('/api/v0/developerApps', { body: { clientId: app.clientId, rotateClientSecret: true } }),
                    )
                  ).clientSecret ?? null,
                ),
              )
            }
          >
            Rotate secret
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => void signins.load()}>
            Recent sign-ins
          </button>
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() =>
              confirm(`Delete ${app.name}? Every sign-in issued to it is revoked.`) &&
              void run(async () => {
                await call(api.DELETE('/api/v0/developerApps', { body: { clientId: app.clientId } }));
                onChanged();
              })
            }
          >
            Delete app
          </button>
        </div>
      </form>
      {secret ? <OnceSecret label="New client secret" value={secret} testId="client-secret" /> : null}
      <ErrorLine error={error} />
      {signins.docs ? (
        signins.docs.length === 0 ? (
          <p>No sign-ins yet.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <caption>Recent sign-ins</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Address</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {signins.docs.map((s) => (
                  <tr key={s.createdAt + s.platformAddress}>
                    <td>{formatTime(s.createdAt)}</td>
                    <td>
                      <code>{s.address}</code>
                    </td>
                    <td>{s.scopes.join(', ') || '—'}</td>
                    <td>{s.status}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <MoreButton list={signins} label="More sign-ins" />
          </div>
        )
      ) : null}
    </article>
  );
}

export function AppsPage() {
  const [apps, setApps] = useState<App[] | null>(null);
  const [name, setName] = useState('');
  const [uris, setUris] = useState('');
  const [created, setCreated] = useState<{ clientId: string; clientSecret: string } | null>(null);
  const { busy, error, run } = useAction();
  const reload = () =>
    run(async () => setApps((await call(api.POST('/api/v0/developerApps/fetch', { body: {} }))).developerApps));
  useEffect(() => void reload(), []);
  return (
    <section aria-labelledby="apps-title">
      <h1 id="apps-title">Developer apps</h1>
      <p class="muted">
        Apps send users to <code>/signin/authorize</code> and exchange the code with their client secret.
      </p>
      <form
        class="card"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            setCreated(await call(api.POST('/api/v0/developerApps', { body: { name, redirectUris: lines(uris) } })));
            setName('');
            setUris('');
            await reload();
          });
        }}
      >
        <h2>New app</h2>
        <div class="field">
          <label for="app-name">Name</label>
          <input
            id="app-name"
            required
            maxLength={64}
            value={name}
            onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for="app-uris">Redirect URIs (one per line)</label>
          <textarea
            id="app-uris"
            rows={2}
            value={uris}
            onInput={(e) => setUris((e.currentTarget as HTMLTextAreaElement).value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Create app
        </button>
      </form>
      {created ? (
        <div class="card">
          <p>
            Client ID <code data-testid="new-client-id">{created.clientId}</code>
          </p>
          <OnceSecret label="Client secret" value={created.clientSecret} testId="client-secret" />
        </div>
      ) : null}
      <ErrorLine error={error} />
      {apps?.length === 0 ? <p>No apps yet.</p> : null}
      {apps?.map((a) => (
        <AppCard app={a} key={a.clientId + a.updatedAt} onChanged={() => void reload()} />
      ))}
    </section>
  );
}
