// Plugins: my plugin documents; create a custom plugin with a schema editor (rows of key, label,
// type, required and header for the public, private and user-input schemas), its verification
// call with its hardcoded inputs (a hint says they are plaintext) and preset; add a version and finalize it; reveal or rotate the secret; the errors log; the status
// webhook deliveries, with redeliver. Everything goes through the plugin document routes.
import { useEffect, useState } from 'preact/hooks';
import { api, call, formatTime, type paths, type PluginDoc, type PluginVersion } from '../api.ts';
import { CopyButton, ErrorLine, MoreButton, OnceSecret, useAction, usePagedList } from '../ui.tsx';

type CreateBody = paths['/api/v0/plugins']['post']['requestBody']['content']['application/json'];
type VersionConfig = CreateBody['initialVersion'];
type Field = NonNullable<VersionConfig['publicParamsSchema']>[number];
type ErrorRecord =
  paths['/api/v0/plugins/errors']['get']['responses'][200]['content']['application/json']['docs'][number];
type Delivery =
  paths['/api/v0/plugins/deliveries']['get']['responses'][200]['content']['application/json']['docs'][number];

const FIELD_TYPES: Field['type'][] = ['string', 'number', 'boolean', 'date', 'url', 'ownershipRequirements'];
const PRESETS: VersionConfig['stateFunctionPreset'][] = [
  'Stateless',
  'ClaimToken',
  'ClaimNumbers',
  'CustomResponseHandler',
];
const SCHEMAS = [
  ['publicParamsSchema', 'Public params (set by the claim creator, shown to claimers)'],
  ['privateParamsSchema', 'Private params (set by the claim creator, never shown)'],
  ['userInputsSchema', 'User inputs (typed by the claimer)'],
] as const;

const go = (hash: string) => (location.hash = hash);

export function PluginsPage({ route }: { route: string[] }) {
  if (route[0] === 'new') return <CreatePlugin />;
  if (route[0] === 'view' && route[1]) return <PluginView pluginId={route[1]} key={route[1]} />;
  return <MyPlugins />;
}

function MyPlugins() {
  const { error, run } = useAction();
  const plugins = usePagedList(
    (bookmark) =>
      call(api.GET('/api/v0/plugins/search', { params: { query: { pluginsForSignedInUser: true, bookmark } } })).then(
        (r) => ({ docs: r.plugins as PluginDoc[], bookmark: r.bookmark, hasMore: r.hasMore }),
      ),
    run,
  );
  useEffect(() => void plugins.load(), []);
  return (
    <section aria-labelledby="plugins-title">
      <div class="row spread">
        <h1 id="plugins-title">Plugins</h1>
        <a class="button" href="#/plugins/new">
          New plugin
        </a>
      </div>
      <p class="muted">
        Custom plugins call your endpoint on every claim attempt. Published plugins appear in every creator's claim
        builder once reviewed.
      </p>
      <ErrorLine error={error} />
      {plugins.docs?.length === 0 ? <p>No plugins yet.</p> : null}
      {plugins.docs && plugins.docs.length > 0 ? (
        <ul class="list">
          {plugins.docs.map((d) => (
            <li key={d.pluginId} class="card row spread">
              <span>
                <a href={`#/plugins/view/${encodeURIComponent(d.pluginId)}`}>
                  {String((d.metadata as { name?: string }).name ?? d.pluginId)}
                </a>{' '}
                <code>{d.pluginId}</code>{' '}
                <span class="muted">
                  {d.versions.length} version{d.versions.length === 1 ? '' : 's'} ·{' '}
                  {d.toPublish ? (d.reviewCompleted ? 'published' : 'awaiting review') : 'private'}
                </span>
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      <MoreButton list={plugins} label="More plugins" />
    </section>
  );
}

/** Rows of key / label / type / required: one schema of a version. */
function SchemaEditor({
  name,
  title,
  fields,
  onChange,
}: {
  name: string;
  title: string;
  fields: Field[];
  onChange: (f: Field[]) => void;
}) {
  const set = (i: number, patch: Partial<Field>) => onChange(fields.map((f, j) => (j === i ? { ...f, ...patch } : f)));
  return (
    <fieldset class="field schema-editor" data-schema={name}>
      <legend>{title}</legend>
      {fields.map((f, i) => {
        const id = `${name}-${i}`;
        return (
          <div class="row schema-row" key={i}>
            <label>
              Key{' '}
              <input
                id={`${id}-key`}
                required
                pattern="[A-Za-z][A-Za-z0-9_]{0,63}"
                value={f.key}
                onInput={(e) => set(i, { key: (e.currentTarget as HTMLInputElement).value })}
              />
            </label>
            <label>
              Label{' '}
              <input
                id={`${id}-label`}
                maxLength={256}
                value={f.label}
                onInput={(e) => set(i, { label: (e.currentTarget as HTMLInputElement).value })}
              />
            </label>
            <label>
              Type{' '}
              <select
                id={`${id}-type`}
                value={f.type}
                onChange={(e) => set(i, { type: (e.currentTarget as HTMLSelectElement).value as Field['type'] })}
              >
                {FIELD_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
            <label class="check">
              <input
                id={`${id}-required`}
                type="checkbox"
                checked={f.required === true}
                onChange={(e) => set(i, { required: (e.currentTarget as HTMLInputElement).checked })}
              />{' '}
              Required
            </label>
            <label class="check">
              <input
                id={`${id}-header`}
                type="checkbox"
                checked={f.headerField === true}
                onChange={(e) => set(i, { headerField: (e.currentTarget as HTMLInputElement).checked })}
              />{' '}
              Send as header
            </label>
            <button type="button" class="link" onClick={() => onChange(fields.filter((_, j) => j !== i))}>
              Remove field {i + 1}
            </button>
          </div>
        );
      })}
      <button
        type="button"
        class="secondary small"
        onClick={() => onChange([...fields, { key: '', label: '', type: 'string' }])}
      >
        Add a field
      </button>
    </fieldset>
  );
}

type Hardcoded = NonNullable<NonNullable<VersionConfig['verificationCall']>['hardcodedInputs']>[number];

/**
 * Rows of key / value / header: text sent with every call. The hint says what the server does with
 * them: they are part of the plugin document, stored and served in plaintext by design.
 */
function HardcodedEditor({
  prefix,
  inputs,
  onChange,
}: {
  prefix: string;
  inputs: Hardcoded[];
  onChange: (h: Hardcoded[]) => void;
}) {
  const set = (i: number, patch: Partial<Hardcoded>) =>
    onChange(inputs.map((h, j) => (j === i ? { ...h, ...patch } : h)));
  return (
    <fieldset
      class="field schema-editor"
      data-schema={`${prefix}-hardcodedInputs`}
      aria-describedby={`${prefix}-hardcoded-help`}
    >
      <legend>Hardcoded inputs (sent with every call)</legend>
      {inputs.map((h, i) => {
        const id = `${prefix}-hardcoded-${i}`;
        return (
          <div class="row schema-row" key={i}>
            <label>
              Key{' '}
              <input
                id={`${id}-key`}
                required
                pattern="[A-Za-z][A-Za-z0-9_]{0,63}"
                value={h.key}
                onInput={(e) => set(i, { key: (e.currentTarget as HTMLInputElement).value })}
              />
            </label>
            <label>
              Value{' '}
              <input
                id={`${id}-value`}
                maxLength={4096}
                value={String(h.value ?? '')}
                onInput={(e) => set(i, { value: (e.currentTarget as HTMLInputElement).value })}
              />
            </label>
            <label class="check">
              <input
                id={`${id}-header`}
                type="checkbox"
                checked={h.headerField === true}
                onChange={(e) => set(i, { headerField: (e.currentTarget as HTMLInputElement).checked })}
              />{' '}
              Send as header
            </label>
            <button type="button" class="link" onClick={() => onChange(inputs.filter((_, j) => j !== i))}>
              Remove hardcoded input {i + 1}
            </button>
          </div>
        );
      })}
      <small id={`${prefix}-hardcoded-help`} class="helper">
        Stored and shown in plaintext to anyone who can read this plugin. Never put an API key or password here: use a
        private param with "Send as header", which is encrypted and never shown.
      </small>
      <button
        type="button"
        class="secondary small"
        onClick={() => onChange([...inputs, { key: '', label: '', type: 'string', value: '' }])}
      >
        Add a hardcoded input
      </button>
    </fieldset>
  );
}

/** The editable part of a version: preset, verification call, schemas, display and flags. */
function VersionEditor({
  config,
  onChange,
  prefix,
}: {
  config: VersionConfig;
  onChange: (c: VersionConfig) => void;
  prefix: string;
}) {
  const set = (patch: Partial<VersionConfig>) => onChange({ ...config, ...patch });
  const flag = (
    key: 'duplicatesAllowed' | 'requiresSessions' | 'receiveStatusWebhook' | 'ignoreSimulations' | 'finalized',
    label: string,
  ) => (
    <div class="field check">
      <input
        id={`${prefix}-${key}`}
        type="checkbox"
        checked={config[key] === true}
        onChange={(e) => set({ [key]: (e.currentTarget as HTMLInputElement).checked })}
      />
      <label for={`${prefix}-${key}`}>{label}</label>
    </div>
  );
  return (
    <>
      <div class="field">
        <label for={`${prefix}-uri`}>Verification call URL *</label>
        <input
          id={`${prefix}-uri`}
          type="url"
          required
          value={config.verificationCall?.uri ?? ''}
          aria-describedby={`${prefix}-uri-help`}
          onInput={(e) =>
            set({ verificationCall: { ...config.verificationCall, uri: (e.currentTarget as HTMLInputElement).value } })
          }
        />
        <small id={`${prefix}-uri-help`} class="helper">
          POSTed on every attempt, signed with the plugin secret (X-Platform-Signature).
        </small>
      </div>
      <div class="field check">
        <input
          id={`${prefix}-passAddress`}
          type="checkbox"
          checked={config.verificationCall?.passAddress === true}
          onChange={(e) =>
            set({
              verificationCall: {
                uri: config.verificationCall?.uri ?? '',
                ...config.verificationCall,
                passAddress: (e.currentTarget as HTMLInputElement).checked,
              },
            })
          }
        />
        <label for={`${prefix}-passAddress`}>Send the claiming address</label>
      </div>
      <HardcodedEditor
        prefix={prefix}
        inputs={config.verificationCall?.hardcodedInputs ?? []}
        onChange={(hardcodedInputs) =>
          set({
            verificationCall: { uri: config.verificationCall?.uri ?? '', ...config.verificationCall, hardcodedInputs },
          })
        }
      />
      <div class="field">
        <label for={`${prefix}-preset`}>Preset</label>
        <select
          id={`${prefix}-preset`}
          value={config.stateFunctionPreset}
          onChange={(e) =>
            set({
              stateFunctionPreset: (e.currentTarget as HTMLSelectElement).value as VersionConfig['stateFunctionPreset'],
            })
          }
        >
          {PRESETS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </div>
      {SCHEMAS.map(([key, title]) => (
        <SchemaEditor
          key={key}
          name={`${prefix}-${key}`}
          title={title}
          fields={config[key] ?? []}
          onChange={(f) => {
            const next: Partial<VersionConfig> = { [key]: f };
            // a plugin with user inputs must say so (docs/plugins-platform.md requiresUserInputs)
            if (key === 'userInputsSchema') next.requiresUserInputs = f.length > 0;
            set(next);
          }}
        />
      ))}
      <div class="field">
        <label for={`${prefix}-display`}>Details shown to claimers</label>
        <input
          id={`${prefix}-display`}
          maxLength={4096}
          value={config.customDetailsDisplay ?? ''}
          aria-describedby={`${prefix}-display-help`}
          onInput={(e) => set({ customDetailsDisplay: (e.currentTarget as HTMLInputElement).value })}
        />
        <small id={`${prefix}-display-help`} class="helper">
          {'{{key}}'} is replaced by that public param.
        </small>
      </div>
      {flag('duplicatesAllowed', 'Several instances allowed in one claim')}
      {flag('requiresSessions', 'Claimer must be signed in')}
      {flag('receiveStatusWebhook', 'Receive status webhooks')}
      {flag('ignoreSimulations', 'Call only at execution (ignore simulations)')}
      {flag('finalized', 'Finalize this version (immutable from then on)')}
    </>
  );
}

/** Field rows with empty labels take their key, and required: false is left out. */
function cleanConfig(c: VersionConfig): VersionConfig {
  const clean = (fields: Field[] | undefined) =>
    (fields ?? []).map(({ required, headerField, ...f }) => ({
      ...f,
      label: f.label || f.key,
      ...(required ? { required: true } : {}),
      ...(headerField ? { headerField: true } : {}),
    }));
  const hardcoded = (c.verificationCall?.hardcodedInputs ?? []).map(({ headerField, ...h }) => ({
    ...h,
    label: h.label || h.key,
    ...(headerField ? { headerField: true } : {}),
  }));
  const { hardcodedInputs: _omit, ...call } = c.verificationCall ?? { uri: '' };
  const verificationCall = c.verificationCall
    ? { ...call, ...(hardcoded.length ? { hardcodedInputs: hardcoded } : {}) }
    : undefined;
  return {
    ...c,
    ...(verificationCall ? { verificationCall } : {}),
    publicParamsSchema: clean(c.publicParamsSchema),
    privateParamsSchema: clean(c.privateParamsSchema),
    userInputsSchema: clean(c.userInputsSchema),
  };
}

const EMPTY_VERSION: VersionConfig = {
  stateFunctionPreset: 'Stateless',
  verificationCall: { uri: '', passAddress: true },
  publicParamsSchema: [],
  privateParamsSchema: [],
  userInputsSchema: [],
  customDetailsDisplay: '',
};

function CreatePlugin() {
  const [pluginId, setPluginId] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [toPublish, setToPublish] = useState(false);
  const [config, setConfig] = useState<VersionConfig>(EMPTY_VERSION);
  const { busy, error, run } = useAction();
  return (
    <section aria-labelledby="new-plugin-title">
      <h1 id="new-plugin-title">New plugin</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await call(
              api.POST('/api/v0/plugins', {
                body: { pluginId, metadata: { name, description }, toPublish, initialVersion: cleanConfig(config) },
              }),
            );
            go(`#/plugins/view/${encodeURIComponent(pluginId)}`);
          });
        }}
      >
        <div class="card">
          <div class="field">
            <label for="plugin-id">Plugin ID *</label>
            <input
              id="plugin-id"
              required
              pattern="[A-Za-z0-9][A-Za-z0-9_\-]{0,79}"
              value={pluginId}
              onInput={(e) => setPluginId((e.currentTarget as HTMLInputElement).value)}
            />
          </div>
          <div class="field">
            <label for="plugin-name">Name *</label>
            <input
              id="plugin-name"
              required
              maxLength={256}
              value={name}
              onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            />
          </div>
          <div class="field">
            <label for="plugin-description">Description</label>
            <textarea
              id="plugin-description"
              rows={2}
              value={description}
              onInput={(e) => setDescription((e.currentTarget as HTMLTextAreaElement).value)}
            />
          </div>
          <div class="field check">
            <input
              id="plugin-publish"
              type="checkbox"
              checked={toPublish}
              onChange={(e) => setToPublish((e.currentTarget as HTMLInputElement).checked)}
            />
            <label for="plugin-publish">Publish (after the operator's review)</label>
          </div>
        </div>
        <div class="card">
          <h2>Version 1</h2>
          <VersionEditor config={config} onChange={setConfig} prefix="v1" />
        </div>
        <ErrorLine error={error} />
        <button type="submit" id="create-plugin" disabled={busy}>
          Create plugin
        </button>
      </form>
    </section>
  );
}

/** A version's config as sent back for a new version (without what the service assigns). */
function configOf(v: PluginVersion): VersionConfig {
  const { version: _v, finalized: _f, createdAt: _c, lastUpdated: _l, ...config } = v;
  return config;
}

function PluginView({ pluginId }: { pluginId: string }) {
  const [doc, setDoc] = useState<PluginDoc | null>(null);
  const [secret, setSecret] = useState<{ value: string; rotated: boolean } | null>(null);
  const [draft, setDraft] = useState<VersionConfig | null>(null);
  const { busy, error, run } = useAction();
  const update = (
    body: Omit<paths['/api/v0/plugins']['put']['requestBody']['content']['application/json'], 'pluginId'>,
  ) => call(api.PUT('/api/v0/plugins', { body: { pluginId, ...body } }));
  const errors = usePagedList<ErrorRecord>(
    (bookmark) => call(api.GET('/api/v0/plugins/errors', { params: { query: { pluginId, bookmark } } })),
    run,
  );
  const deliveries = usePagedList<Delivery>(
    (bookmark) => call(api.GET('/api/v0/plugins/deliveries', { params: { query: { pluginId, bookmark } } })),
    run,
  );
  useEffect(() => {
    void run(async () =>
      setDoc((await call(api.GET('/api/v0/plugin/{pluginId}', { params: { path: { pluginId } } }))).plugin),
    );
    void errors.load();
    void deliveries.load();
  }, []);
  if (!doc) return <ErrorLine error={error} />;
  const meta = doc.metadata as { name?: string; description?: string };
  return (
    <section aria-labelledby="plugin-title">
      <h1 id="plugin-title">{meta.name ?? pluginId}</h1>
      <p class="muted">
        <code>{pluginId}</code> · {doc.toPublish ? (doc.reviewCompleted ? 'published' : 'awaiting review') : 'private'}{' '}
        · updated {formatTime(doc.lastUpdated)}
      </p>
      {meta.description ? <p>{meta.description}</p> : null}
      <ErrorLine error={error} />

      <div class="card">
        <h2>Secret</h2>
        <p class="muted">Your endpoint checks X-Platform-Signature with it.</p>
        <div class="row">
          <button
            type="button"
            class="secondary"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                const r = await call(
                  api.POST('/api/v0/plugins/fetch', { body: { pluginIds: [pluginId], returnSensitiveData: true } }),
                );
                setSecret({ value: r.plugins[0]?.pluginSecret ?? '', rotated: false });
              })
            }
          >
            Reveal secret
          </button>
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() =>
              confirm('Rotate the secret? Your endpoint must switch to the new one.') &&
              void run(async () => {
                const r = await update({ rotatePluginSecret: true });
                setDoc(r.plugin);
                setSecret({ value: r.plugin.pluginSecret ?? '', rotated: true });
              })
            }
          >
            Rotate secret
          </button>
        </div>
        {secret ? (
          secret.rotated ? (
            <OnceSecret label="The new plugin secret" value={secret.value} testId="plugin-secret" />
          ) : (
            <p class="secret" role="status">
              <code data-testid="plugin-secret">{secret.value}</code> <CopyButton text={secret.value} />
            </p>
          )
        ) : null}
      </div>

      <h2>Versions</h2>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Versions of {pluginId}</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Preset</th>
              <th scope="col">Endpoint</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {doc.versions.map((v) => (
              <tr key={v.version} data-version={v.version}>
                <td>{v.version}</td>
                <td>{v.stateFunctionPreset}</td>
                <td>
                  <code>{v.verificationCall?.uri ?? '—'}</code>
                </td>
                <td>
                  {v.finalized ? (
                    'finalized'
                  ) : (
                    <button
                      type="button"
                      class="secondary small"
                      disabled={busy}
                      onClick={() =>
                        void run(async () =>
                          setDoc(
                            (await update({ versionUpdates: [{ version: v.version, config: { finalized: true } }] }))
                              .plugin,
                          ),
                        )
                      }
                    >
                      Finalize version {v.version}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {draft ? (
        <form
          class="card"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              setDoc((await update({ versionCreate: cleanConfig(draft) })).plugin);
              setDraft(null);
            });
          }}
        >
          <h3>New version</h3>
          <VersionEditor config={draft} onChange={setDraft} prefix="next" />
          <div class="row">
            <button type="submit" disabled={busy}>
              Save the new version
            </button>
            <button type="button" class="secondary" onClick={() => setDraft(null)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <button
          type="button"
          class="secondary"
          onClick={() =>
            setDraft({ ...configOf(doc.versions.at(-1) ?? ({ ...EMPTY_VERSION } as PluginVersion)), finalized: false })
          }
        >
          Add a version
        </button>
      )}

      <h2>Errors {errors.docs ? <span class="muted">({errors.total})</span> : null}</h2>
      {errors.docs?.length === 0 ? <p>No errors recorded.</p> : null}
      {errors.docs && errors.docs.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Endpoint errors, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Claim / instance</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {errors.docs.map((r) => (
                <tr key={r._docId}>
                  <td>{formatTime(r.timestamp)}</td>
                  <td>
                    <code>{r.context.claimId}</code> / <code>{r.context.instanceId}</code>
                  </td>
                  <td class="error-text">{r.error}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <MoreButton list={errors} label="More errors" />

      <h2>Webhook deliveries {deliveries.docs ? <span class="muted">({deliveries.total})</span> : null}</h2>
      {deliveries.docs?.length === 0 ? <p>No status webhook deliveries.</p> : null}
      {deliveries.docs && deliveries.docs.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Status webhook deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Claim attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Last try</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.docs.map((d) => (
                <tr key={d.deliveryId}>
                  <td>{formatTime(d.createdAt)}</td>
                  <td>
                    <code>{d.claimId}</code> / <code>{d.claimAttemptId}</code>
                  </td>
                  <td>
                    {d.status} ({d.attempts} tries)
                  </td>
                  <td>{d.lastError ? <span class="error-text">{d.lastError}</span> : formatTime(d.lastTryAt)}</td>
                  <td>
                    <button
                      type="button"
                      class="secondary small"
                      disabled={busy}
                      onClick={() =>
                        void run(async () => {
                          await call(
                            api.POST('/api/v0/plugins/deliveries/redeliver', { body: { deliveryId: d.deliveryId } }),
                          );
                          await deliveries.load();
                        })
                      }
                    >
                      Redeliver
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <MoreButton list={deliveries} label="More deliveries" />
    </section>
  );
}
