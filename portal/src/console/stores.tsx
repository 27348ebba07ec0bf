// Dynamic stores: create; add and remove addresses; CSV import (up to 100,000 addresses, sent
// through the batch route 10,000 at a time, with progress); export; activity; the whitelist snippet.
import { useEffect, useState } from 'preact/hooks';
import { scanAddresses } from '../address-text.ts';
import { api, call, formatTime, type paths } from '../api.ts';
import { CopyButton, download, ErrorLine, MoreButton, useAction, usePagedList } from '../ui.tsx';

type Store = paths['/api/v0/dynamicStore/{id}']['get']['responses'][200]['content']['application/json']['doc'];
type Activity =
  paths['/api/v0/dynamicStores/activity']['get']['responses'][200]['content']['application/json']['history']['docs'][number];

export const MAX_IMPORT = 100_000;
const BATCH = 10_000;

export function StoresPage({ route }: { route: string[] }) {
  if (route[0]) return <StoreView id={route[0]} key={route[0]} />;
  return <MyStores />;
}

function MyStores() {
  const [stores, setStores] = useState<Store[] | null>(null);
  const [label, setLabel] = useState('');
  const [publicUse, setPublicUse] = useState(false);
  const { busy, error, run } = useAction();
  const load = () =>
    run(async () =>
      setStores(
        (await call(api.GET('/api/v0/dynamicStores/search', { params: { query: { bookmark: '' } } }))).docs as Store[],
      ),
    );
  useEffect(() => void load(), []);
  return (
    <section aria-labelledby="stores-title">
      <h1 id="stores-title">Dynamic stores</h1>
      <form
        class="card row"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const { doc } = await call(
              api.POST('/api/v0/dynamicStores', {
                body: { handlerId: 'addresses', label, publicUseInClaims: publicUse },
              }),
            );
            location.hash = `#/stores/${doc.dynamicDataId}`;
          });
        }}
      >
        <div class="field grow">
          <label for="store-label">Label</label>
          <input
            id="store-label"
            required
            value={label}
            onInput={(e) => setLabel((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <div class="field check">
          <input
            id="store-public"
            type="checkbox"
            checked={publicUse}
            onChange={(e) => setPublicUse((e.currentTarget as HTMLInputElement).checked)}
          />
          <label for="store-public">Anyone may use it in claims</label>
        </div>
        <button type="submit" disabled={busy}>
          Create store
        </button>
      </form>
      <ErrorLine error={error} />
      {stores?.length === 0 ? <p>No stores yet.</p> : null}
      <ul class="list">
        {stores?.map((s) => (
          <li class="card row spread" key={s.dynamicDataId}>
            <a href={`#/stores/${s.dynamicDataId}`}>{s.label || s.dynamicDataId}</a>
            <span class="muted">{s.size} addresses</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function StoreView({ id }: { id: string }) {
  const [store, setStore] = useState<Store | null>(null);
  const [address, setAddress] = useState('');
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  const reload = async () =>
    setStore((await call(api.GET('/api/v0/dynamicStore/{id}', { params: { path: { id } } }))).doc);
  const activity = usePagedList<Activity>(
    (bookmark) =>
      call(api.GET('/api/v0/dynamicStores/activity', { params: { query: { dynamicDataId: id, bookmark } } })).then(
        (r) => ({ docs: r.history.docs, bookmark: r.bookmark, hasMore: r.hasMore }),
      ),
    run,
  );
  useEffect(() => {
    void run(reload);
    void activity.load();
  }, []);
  if (!store) return <ErrorLine error={error} />;

  const single = (actionName: 'add' | 'remove') =>
    run(async () => {
      await call(
        api.POST('/api/v0/storeActions/single', { body: { dynamicDataId: id, actionName, payload: { address } } }),
      );
      await reload();
      await activity.refresh();
      setMessage(`${actionName === 'add' ? 'Added' : 'Removed'} ${address}.`);
      setAddress('');
    });

  const importFile = (file: File) =>
    run(async () => {
      const { addresses } = scanAddresses(await file.text());
      if (addresses.length === 0) throw new Error('No addresses found in the file.');
      if (addresses.length > MAX_IMPORT)
        throw new Error(
          `The file holds ${addresses.length} addresses; import at most ${MAX_IMPORT.toLocaleString()} at a time.`,
        );
      setProgress({ done: 0, total: addresses.length });
      for (let i = 0; i < addresses.length; i += BATCH) {
        const actions = addresses
          .slice(i, i + BATCH)
          .map((a) => ({ actionName: 'add' as const, payload: { address: a } }));
        await call(api.POST('/api/v0/storeActions/batch', { body: { dynamicDataId: id, actions } }));
        setProgress({ done: Math.min(i + BATCH, addresses.length), total: addresses.length });
      }
      await reload();
      await activity.refresh();
      // announced once the page shows the new size
      setMessage(`Imported ${addresses.length.toLocaleString()} addresses.`);
    });

  const exportCsv = () =>
    run(async () => {
      const rows = ['address'];
      let bookmark = '';
      do {
        const r = await call(
          api.GET('/api/v0/dynamicStore/{id}/values', { params: { path: { id }, query: { bookmark } } }),
        );
        for (const v of r.lookupValues) rows.push(v.key);
        bookmark = r.hasMore ? r.bookmark : '';
      } while (bookmark);
      download(`${store.label || id}.csv`, rows.join('\n') + '\n');
    });

  const snippet = JSON.stringify(
    {
      pluginId: 'whitelist',
      instanceId: 'whitelist1',
      publicParams: { hasPrivateList: true },
      privateParams: {
        useDynamicStore: true,
        dynamicDataId: store.dynamicDataId,
        ...(store.publicUseInClaims ? {} : { dataSecret: store.dataSecret }),
      },
    },
    null,
    2,
  );

  return (
    <section aria-labelledby="store-title">
      <h1 id="store-title">{store.label || store.dynamicDataId}</h1>
      <p>
        <span data-testid="store-size">{store.size}</span> addresses · id <code>{store.dynamicDataId}</code> · updated{' '}
        {formatTime(store.lastUpdated)}
      </p>
      <div class="card">
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void single('add');
          }}
        >
          <div class="field grow">
            <label for="store-address">Address</label>
            <input
              id="store-address"
              required
              value={address}
              onInput={(e) => setAddress((e.currentTarget as HTMLInputElement).value.trim())}
            />
          </div>
          <button type="submit" disabled={busy}>
            Add
          </button>
          <button type="button" class="secondary" disabled={busy || !address} onClick={() => void single('remove')}>
            Remove
          </button>
        </form>
      </div>
      <div class="card">
        <div class="field">
          <label for="store-import">Import a CSV of addresses (up to 100,000)</label>
          <input
            id="store-import"
            type="file"
            accept=".csv,.txt,text/csv,text/plain"
            disabled={busy}
            onChange={(e) => {
              const f = (e.currentTarget as HTMLInputElement).files?.[0];
              setError(null);
              if (f) void importFile(f);
            }}
          />
        </div>
        {progress ? (
          <p>
            <label for="import-progress">Import progress</label>{' '}
            <progress id="import-progress" max={progress.total} value={progress.done}>
              {progress.done}
            </progress>{' '}
            <span data-testid="import-count">
              {progress.done.toLocaleString()} / {progress.total.toLocaleString()}
            </span>
          </p>
        ) : null}
        <button type="button" class="secondary" disabled={busy} onClick={() => void exportCsv()}>
          Export CSV
        </button>
      </div>
      {message ? <p role="status">{message}</p> : null}
      <ErrorLine error={error} />
      <div class="card">
        <h2>Whitelist snippet</h2>
        <p class="muted">
          Add this plugin to a claim to gate it on this store (or pick "Use a dynamic store" in the claim builder).
        </p>
        <pre>{snippet}</pre>
        <CopyButton text={snippet} label="Copy whitelist snippet" />
      </div>
      <h2>Activity</h2>
      {activity.docs?.length === 0 ? <p>No activity yet.</p> : null}
      <ul class="list">
        {activity.docs?.map((a) => (
          <li key={a._docId} class="card">
            {formatTime(a.updatedAt)}: {a.actions.length} action{a.actions.length === 1 ? '' : 's'}
            {a.actions.length <= 3
              ? ` (${a.actions.map((x) => `${x.actionName} ${x.payload.address}`).join(', ')})`
              : ''}
          </li>
        ))}
      </ul>
      <MoreButton list={activity} label="More activity" />
    </section>
  );
}
