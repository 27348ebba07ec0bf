// API keys: create (shown once), list with last use, revoke.
import { useEffect, useState } from 'preact/hooks';
import { api, call, formatTime, type paths } from '../api.ts';
import { ErrorLine, OnceSecret, useAction } from '../ui.tsx';

type Key = paths['/api/v0/apiKeys']['get']['responses'][200]['content']['application/json']['apiKeys'][number];

export function KeysPage() {
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [label, setLabel] = useState('');
  const [created, setCreated] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const reload = () => run(async () => setKeys((await call(api.GET('/api/v0/apiKeys'))).apiKeys));
  useEffect(() => void reload(), []);
  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <p class="muted">
        Server-side callers send a key as <code>x-api-key</code>. Keep keys out of browsers and repositories.
      </p>
      <form
        class="card row"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const r = await call(api.POST('/api/v0/apiKeys', { body: { label } }));
            setCreated(r.key);
            setLabel('');
            setKeys((await call(api.GET('/api/v0/apiKeys'))).apiKeys);
          });
        }}
      >
        <div class="field grow">
          <label for="key-label">Label</label>
          <input
            id="key-label"
            required
            maxLength={128}
            value={label}
            onInput={(e) => setLabel((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      {created ? <OnceSecret label="Your new API key" value={created} testId="new-api-key" /> : null}
      <ErrorLine error={error} />
      {keys && keys.length === 0 ? <p>No keys yet.</p> : null}
      {keys && keys.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Your API keys</caption>
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Id</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>{k.label}</td>
                  <td>
                    <code>{k.id}</code>
                  </td>
                  <td>{formatTime(k.createdAt)}</td>
                  <td>{k.lastUsedAt ? formatTime(k.lastUsedAt) : 'never'}</td>
                  <td>
                    {k.revokedAt ? (
                      `revoked ${formatTime(k.revokedAt)}`
                    ) : (
                      <button
                        type="button"
                        class="danger small"
                        aria-label={`Revoke ${k.label}`}
                        onClick={() => {
                          if (confirm(`Revoke the key "${k.label}"? Callers using it stop working within a second.`)) {
                            void run(async () => {
                              await call(api.DELETE('/api/v0/apiKeys', { body: { id: k.id } }));
                              setKeys((await call(api.GET('/api/v0/apiKeys'))).apiKeys);
                            });
                          }
                        }}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
