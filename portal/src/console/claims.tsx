// Claims: my claims; a builder whose plugin forms come from the server's plugin descriptions
// (params, assignMethod, satisfyMethod); edit with the version check; delete; a claim's attempts
// (paged, with errors), a live "simulate as address" box and the codes CSV download.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import {
  api,
  ApiFailure,
  builderPlugins,
  call,
  formatTime,
  pluginDescriptions,
  type ClaimDoc,
  type paths,
  type PluginDescription,
  type PluginOption,
  type SessionInfo,
} from '../api.ts';
import { buildParams, detailsText, FieldError, FieldErrorText, Fields, initialValues, type Values } from '../forms.tsx';
import {
  AddressListEditor,
  addressListValue,
  addressPrefix,
  placeError,
  StorePicker,
  templateInstances,
  TemplatePicker,
  type Template,
} from './claim-builder.tsx';
import { CopyButton, download, ErrorLine, MoreButton, useAction, usePagedList } from '../ui.tsx';

type Mine = paths['/api/v0/claims/mine']['get']['responses'][200]['content']['application/json']['claims'][number];
type Attempt =
  paths['/api/v0/claims/{claimId}/attempts']['get']['responses'][200]['content']['application/json']['docs'][number];

const go = (hash: string) => (location.hash = hash);

function useDescriptions(withDocuments = false) {
  const [d, setD] = useState<PluginOption[] | null>(null);
  useEffect(
    () =>
      void (withDocuments ? builderPlugins() : pluginDescriptions()).then(setD, () => pluginDescriptions().then(setD)),
    [],
  );
  return d;
}

export function ClaimsPage({ route, session }: { route: string[]; session: SessionInfo }) {
  if (route[0] === 'new') return <Builder session={session} />;
  if (route[0] === 'edit' && route[1]) return <Builder claimId={route[1]} key={route[1]} session={session} />;
  if (route[0] === 'view' && route[1]) return <ClaimView claimId={route[1]} session={session} key={route[1]} />;
  return <MyClaims />;
}

function MyClaims() {
  const { error, run } = useAction();
  const claims = usePagedList<Mine>(
    (bookmark) =>
      call(api.GET('/api/v0/claims/mine', { params: { query: { bookmark } } })).then((r) => ({
        docs: r.claims,
        ...r.pagination,
      })),
    run,
  );
  useEffect(() => void claims.load(), []);
  return (
    <section aria-labelledby="claims-title">
      <div class="row spread">
        <h1 id="claims-title">Claims</h1>
        <a class="button" href="#/claims/new">
          New claim
        </a>
      </div>
      <ErrorLine error={error} />
      {claims.docs?.length === 0 ? <p>No claims yet.</p> : null}
      {claims.docs && claims.docs.length > 0 ? (
        <ul class="list">
          {claims.docs.map((c) => (
            <li key={c.claimId} class="card row spread">
              <span>
                <a href={`#/claims/view/${encodeURIComponent(c.claimId)}`}>{c.name || c.claimId}</a>{' '}
                <code>{c.claimId}</code> <span class="muted">v{c.version}</span>
              </span>
              <span class="row">
                <a href={`#/claims/edit/${encodeURIComponent(c.claimId)}`}>Edit</a>
                <a href={`/claim/${encodeURIComponent(c.claimId)}`}>Public page</a>
                <button
                  type="button"
                  class="danger small"
                  aria-label={`Delete ${c.claimId}`}
                  onClick={() =>
                    confirm(`Delete the claim ${c.claimId}?`) &&
                    void run(async () => {
                      await call(api.DELETE('/api/v0/claims', { body: { claimIds: [c.claimId] } }));
                      await claims.load();
                    })
                  }
                >
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
      ) : null}
      <MoreButton list={claims} label="More claims" />
    </section>
  );
}

interface Instance {
  uid: number;
  pluginId: string;
  instanceId: string;
  /** The pinned version of a plugin document (hosted and custom plugins). */
  version?: string;
  pub: Values;
  priv: Values;
  /** Params as loaded, for plugins without a form description (sent back unchanged). */
  rawPublic?: Record<string, unknown>;
}
type SatisfyMode = 'all' | 'AND' | 'OR' | 'NOT';
let uids = 0;

/** The whitelist's fields the builder shows with its own editors (address lists, the store picker). */
const LIST_KEY = 'list.addresses';
const STORE_KEYS = ['useDynamicStore', 'dynamicDataId', 'dataSecret'];
const isWhitelist = (i: { pluginId: string }) => i.pluginId === 'whitelist';

/** Field errors shown beside their fields: the claim's own, an instance's, a param's (`uid:side:key`). */
interface FormErrors {
  claim: Record<string, string>;
  instance: Record<number, string>;
  field: Record<string, string>;
}
const NO_ERRORS: FormErrors = { claim: {}, instance: {}, field: {} };

function Builder({ claimId: editing, session }: { claimId?: string; session: SessionInfo }) {
  const descriptions = useDescriptions(true);
  const byId = useMemo(() => new Map((descriptions ?? []).map((d) => [d.pluginId, d])), [descriptions]);
  const [claimId, setClaimId] = useState(editing ?? '');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [showInSearch, setShowInSearch] = useState(false);
  const [instances, setInstances] = useState<Instance[]>([]);
  const [assignMethod, setAssignMethod] = useState('');
  const [satisfy, setSatisfyState] = useState<{ mode: SatisfyMode; conditions: string[]; min: string }>({
    mode: 'all',
    conditions: [],
    min: '1',
  });
  // A loaded satisfyMethod the form cannot show (nested nodes) is sent back as it was unless edited.
  const [rawSatisfy, setRawSatisfy] = useState<unknown>(undefined);
  const setSatisfy = (v: typeof satisfy) => {
    setRawSatisfy(undefined);
    setSatisfyState(v);
  };
  const [version, setVersion] = useState<string | null>(null);
  const [adding, setAdding] = useState('');
  const [errors, setErrors] = useState<FormErrors>(NO_ERRORS);
  const { busy, error, setError, run } = useAction();
  const addrPrefix = addressPrefix(session.platformAddress);
  const fieldError = (uid: number, side: 'pub' | 'priv') => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(errors.field)) {
      const [u, sd, ...key] = k.split(':');
      if (Number(u) === uid && sd === side) out[key.join(':')] = v;
    }
    return out;
  };

  const applyTemplate = (template: Template, n: number) => {
    setError(null);
    setErrors(NO_ERRORS);
    try {
      const fill = template.fill(n);
      const taken: Instance[] = [];
      for (const { d, pub, priv } of templateInstances(fill, byId)) taken.push({ ...newInstance(d, taken), pub, priv });
      setInstances(taken);
      setName(fill.name);
      setAssignMethod('');
      setSatisfyState({ mode: 'all', conditions: [], min: '1' });
      setRawSatisfy(undefined);
    } catch (e) {
      setError((e as Error).message);
    }
  };

  const newInstance = (d: PluginOption, taken: Instance[]): Instance => {
    // instance ids are letters and digits only; document ids may hold - and _
    const base = d.pluginId.replace(/[^A-Za-z0-9]/g, '');
    let n = 1;
    while (taken.some((i) => i.instanceId === `${base}${n}`)) n++;
    return {
      uid: ++uids,
      pluginId: d.pluginId,
      instanceId: `${base}${n}`,
      ...(d.version ? { version: d.version } : {}),
      pub: initialValues(d.publicParamsSchema),
      priv: initialValues(d.privateParamsSchema),
    };
  };

  useEffect(() => {
    if (!descriptions) return;
    if (!editing) {
      const numUses = descriptions.find((d) => d.mandatory);
      if (numUses) setInstances([newInstance(numUses, [])]);
      return;
    }
    void run(async () => {
      const { claim } = await call(
        api.GET('/api/v0/claim/{claimId}', {
          params: { path: { claimId: editing }, query: { fetchPrivateParams: true } },
        }),
      );
      loadClaim(claim);
    });
  }, [descriptions]);

  const loadClaim = (claim: ClaimDoc) => {
    setName(claim.metadata.name);
    setDescription(claim.metadata.description);
    setShowInSearch(claim.showInSearchResults);
    setAssignMethod(claim.assignMethod);
    setVersion(claim.version);
    const sm = claim.satisfyMethod as
      | { type?: SatisfyMode; conditions?: unknown[]; options?: { minNumSatisfied?: number } }
      | undefined;
    setSatisfyState(
      sm?.type
        ? {
            mode: sm.type,
            conditions: (sm.conditions ?? []).filter((c): c is string => typeof c === 'string'),
            min: String(sm.options?.minNumSatisfied ?? 1),
          }
        : { mode: 'all', conditions: [], min: '1' },
    );
    setRawSatisfy(sm?.conditions?.some((c) => typeof c !== 'string') ? sm : undefined);
    setInstances(
      claim.plugins.map((p) => {
        const d = byId.get(p.pluginId);
        return {
          uid: ++uids,
          pluginId: p.pluginId,
          instanceId: p.instanceId,
          ...((p as { version?: string }).version ? { version: (p as { version?: string }).version } : {}),
          pub: initialValues(d?.publicParamsSchema ?? [], p.publicParams),
          // a store's secret is never shown: the service keeps the attached one
          priv: {
            ...initialValues(d?.privateParamsSchema ?? [], p.privateParams),
            ...(isWhitelist(p) ? { dataSecret: '' } : {}),
          },
          ...(d ? {} : { rawPublic: p.publicParams }),
        };
      }),
    );
  };

  if (!descriptions) return <p aria-busy="true">Loading plugins…</p>;
  const addable = descriptions.filter((d) => d.duplicatesAllowed || !instances.some((i) => i.pluginId === d.pluginId));
  const assigners = instances.filter((i) => byId.get(i.pluginId)?.canAssignClaimNumbers);
  const update = (uid: number, patch: Partial<Instance>) =>
    setInstances((list) => list.map((i) => (i.uid === uid ? { ...i, ...patch } : i)));

  /** The keys the form shows for an instance (to place an API error beside its field). */
  const shownKeys = (index: number, side: 'pub' | 'priv') => {
    const d = instances[index] && byId.get(instances[index].pluginId);
    const keys = (side === 'pub' ? d?.publicParamsSchema : d?.privateParamsSchema)?.map((f) => f.key) ?? [];
    return side === 'priv' && instances[index] && isWhitelist(instances[index]) ? [...keys, 'list'] : keys;
  };
  /** Puts an error beside its field when it names one; returns whether it did. */
  const showError = (message: string): boolean => {
    const place = placeError(message, shownKeys);
    if (place.kind === 'form') return false;
    const next: FormErrors = { claim: {}, instance: {}, field: {} };
    if (place.kind === 'claim') next.claim[place.field] = place.text;
    else {
      const inst = instances[place.index];
      if (!inst) return false;
      if (place.kind === 'instance') next.instance[inst.uid] = place.text;
      else next.field[`${inst.uid}:${place.side}:${place.key === 'list' ? LIST_KEY : place.key}`] = place.text;
    }
    setErrors(next);
    return true;
  };

  const save = () =>
    run(async () => {
      setErrors(NO_ERRORS);
      const plugins = instances.map((i) => {
        const d = byId.get(i.pluginId);
        // no description: public params as loaded, private params omitted (the server keeps them)
        const pinned = i.version ? { version: i.version } : {};
        if (!d) return { pluginId: i.pluginId, instanceId: i.instanceId, ...pinned, publicParams: i.rawPublic ?? {} };
        // pasted text (a CSV, a list) becomes the addresses found in it
        const lists = (v: Values): Values =>
          isWhitelist(i) && typeof v[LIST_KEY] === 'string'
            ? { ...v, [LIST_KEY]: addressListValue(v[LIST_KEY] as string, addrPrefix) }
            : v;
        let side: 'pub' | 'priv' = 'pub';
        try {
          const publicParams = buildParams(d?.publicParamsSchema ?? [], lists(i.pub));
          side = 'priv';
          const privateParams = buildParams(d?.privateParamsSchema ?? [], lists(i.priv));
          return { pluginId: i.pluginId, instanceId: i.instanceId, ...pinned, publicParams, privateParams };
        } catch (e) {
          if (e instanceof FieldError) {
            setErrors({ ...NO_ERRORS, field: { [`${i.uid}:${side}:${e.field}`]: e.message } });
            throw new Error(`Check the highlighted field of ${i.instanceId}.`);
          }
          throw new Error(`${i.instanceId}: ${(e as Error).message}`);
        }
      });
      const satisfyMethod =
        rawSatisfy !== undefined
          ? (rawSatisfy as { type: 'AND' | 'OR' | 'NOT'; conditions: (string | Record<string, unknown>)[] })
          : satisfy.mode === 'all'
            ? undefined
            : {
                type: satisfy.mode,
                conditions: satisfy.conditions.filter((c) => instances.some((i) => i.instanceId === c)),
                ...(satisfy.mode === 'OR' ? { options: { minNumSatisfied: Number(satisfy.min) || 1 } } : {}),
              };
      const common = {
        claimId,
        metadata: { name, description, image: '' },
        showInSearchResults: showInSearch,
        plugins,
        assignMethod,
      };
      const send = async () => {
        if (editing) {
          try {
            await call(
              api.PUT('/api/v0/claims', {
                body: {
                  claims: [{ ...common, satisfyMethod: satisfyMethod ?? null, _expectedVersion: Number(version) }],
                },
              }),
            );
          } catch (e) {
            if (e instanceof ApiFailure && e.status === 409)
              throw new Error(
                `Someone else saved this claim after you opened it. ${e.message}. Reload the claim to see their changes, then edit again.`,
              );
            throw e;
          }
        } else {
          await call(
            api.POST('/api/v0/claims', {
              body: { claims: [{ ...common, ...(satisfyMethod ? { satisfyMethod } : {}) }] },
            }),
          );
        }
      };
      try {
        await send();
      } catch (e) {
        // a field-level error goes beside its field, in words; the line at the bottom only points there
        if (e instanceof ApiFailure && e.status === 400 && showError(e.message))
          throw new Error('The claim was not saved: check the highlighted field.');
        throw e;
      }
      go(`#/claims/view/${encodeURIComponent(claimId)}`);
    });

  return (
    <section aria-labelledby="builder-title">
      <h1 id="builder-title">{editing ? `Edit ${editing}` : 'New claim'}</h1>
      {!editing ? <TemplatePicker onApply={applyTemplate} /> : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div class="card">
          <div class="field">
            <label for="claim-id">Claim ID *</label>
            <input
              id="claim-id"
              required
              pattern="[A-Za-z0-9_\-]{1,128}"
              disabled={!!editing}
              value={claimId}
              onInput={(e) => setClaimId((e.currentTarget as HTMLInputElement).value)}
              aria-describedby={errors.claim.claimId ? 'claim-id-help claim-id-error' : 'claim-id-help'}
              aria-invalid={errors.claim.claimId ? true : undefined}
            />
            <small id="claim-id-help" class="helper">
              Letters, digits, _ and -. The public page is /claim/{claimId || '…'}.
            </small>
            {errors.claim.claimId ? <FieldErrorText id="claim-id-error" text={errors.claim.claimId} /> : null}
          </div>
          <div class="field">
            <label for="claim-name">Name</label>
            <input
              id="claim-name"
              value={name}
              maxLength={512}
              aria-describedby={errors.claim.name ? 'claim-name-error' : undefined}
              aria-invalid={errors.claim.name ? true : undefined}
              onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
            />
            {errors.claim.name ? <FieldErrorText id="claim-name-error" text={errors.claim.name} /> : null}
          </div>
          <div class="field">
            <label for="claim-description">Description</label>
            <textarea
              id="claim-description"
              rows={3}
              value={description}
              aria-describedby={errors.claim.description ? 'claim-description-error' : undefined}
              aria-invalid={errors.claim.description ? true : undefined}
              onInput={(e) => setDescription((e.currentTarget as HTMLTextAreaElement).value)}
            />
            {errors.claim.description ? (
              <FieldErrorText id="claim-description-error" text={errors.claim.description} />
            ) : null}
          </div>
          <div class="field check">
            <input
              id="claim-search"
              type="checkbox"
              checked={showInSearch}
              onChange={(e) => setShowInSearch((e.currentTarget as HTMLInputElement).checked)}
            />
            <label for="claim-search">Show in search results</label>
          </div>
        </div>

        <h2>Plugins</h2>
        {instances.map((i) => {
          const d = byId.get(i.pluginId);
          const prefix = `p-${i.uid}`;
          return (
            <fieldset class="card plugin" key={i.uid} data-plugin={i.pluginId}>
              <legend>
                {d?.metadata.name ?? i.pluginId}{' '}
                <span class="muted">
                  ({i.pluginId}
                  {i.version ? ` v${i.version}` : ''})
                </span>
              </legend>
              {d ? (
                <p class="muted">{d.metadata.description}</p>
              ) : (
                <p class="muted">This plugin has no form description; its params are kept as they are.</p>
              )}
              {errors.instance[i.uid] ? <FieldErrorText id={`${prefix}-error`} text={errors.instance[i.uid]!} /> : null}
              <div class="field">
                <label for={`${prefix}-instance`}>Instance ID</label>
                <input
                  id={`${prefix}-instance`}
                  required
                  pattern="[A-Za-z0-9]{1,64}"
                  value={i.instanceId}
                  onInput={(e) => update(i.uid, { instanceId: (e.currentTarget as HTMLInputElement).value })}
                />
              </div>
              {d && isWhitelist(i) ? (
                <WhitelistFields
                  d={d}
                  instance={i}
                  idPrefix={prefix}
                  addressPrefix={addrPrefix}
                  pubErrors={fieldError(i.uid, 'pub')}
                  privErrors={fieldError(i.uid, 'priv')}
                  onChange={(patch) => update(i.uid, patch)}
                />
              ) : (
                <>
                  {d?.publicParamsSchema.length ? (
                    <Fields
                      fields={d.publicParamsSchema}
                      values={i.pub}
                      idPrefix={`${prefix}-pub`}
                      errors={fieldError(i.uid, 'pub')}
                      onChange={(pub) => update(i.uid, { pub })}
                    />
                  ) : null}
                  {d?.privateParamsSchema.length ? (
                    <div class="private">
                      <h3>Private</h3>
                      <Fields
                        fields={d.privateParamsSchema}
                        values={i.priv}
                        idPrefix={`${prefix}-priv`}
                        errors={fieldError(i.uid, 'priv')}
                        onChange={(priv) => update(i.uid, { priv })}
                        secret
                      />
                    </div>
                  ) : null}
                </>
              )}
              {!d?.mandatory ? (
                <button
                  type="button"
                  class="link"
                  onClick={() => setInstances((l) => l.filter((x) => x.uid !== i.uid))}
                >
                  Remove {i.instanceId}
                </button>
              ) : null}
            </fieldset>
          );
        })}
        <div class="card row">
          <div class="field grow">
            <label for="add-plugin">Add a plugin</label>
            <select
              id="add-plugin"
              value={adding}
              onChange={(e) => setAdding((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">Choose…</option>
              {addable.map((d) => (
                <option value={d.pluginId} key={d.pluginId}>
                  {d.metadata.name} ({d.pluginId}){d.custom ? ` v${d.version}` : ''}
                </option>
              ))}
            </select>
          </div>
          <button
            type="button"
            class="secondary"
            disabled={!adding}
            onClick={() => {
              const d = byId.get(adding);
              if (d) setInstances((l) => [...l, newInstance(d, l)]);
              setAdding('');
            }}
          >
            Add
          </button>
        </div>

        <div class="card">
          <h2>Claim numbers and success logic</h2>
          <div class="field">
            <label for="assign-method">Claim numbers assigned by</label>
            <select
              id="assign-method"
              value={assignMethod}
              onChange={(e) => setAssignMethod((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">Default (number of uses)</option>
              <option value="firstComeFirstServe">First come, first served</option>
              {assigners.map((i) => (
                <option value={i.instanceId} key={i.uid}>
                  {i.instanceId}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="satisfy-mode">A claim succeeds when</label>
            <select
              id="satisfy-mode"
              value={satisfy.mode}
              onChange={(e) =>
                setSatisfy({ ...satisfy, mode: (e.currentTarget as HTMLSelectElement).value as SatisfyMode })
              }
            >
              <option value="all">every plugin passes</option>
              <option value="AND">all of the chosen plugins pass</option>
              <option value="OR">at least N of the chosen plugins pass</option>
              <option value="NOT">none of the chosen plugins passes</option>
            </select>
          </div>
          {satisfy.mode !== 'all' ? (
            <fieldset>
              <legend>Chosen plugins</legend>
              {instances
                .filter((i) => !byId.get(i.pluginId)?.mandatory)
                .map((i) => (
                  <div class="field check" key={i.uid}>
                    <input
                      id={`sat-${i.uid}`}
                      type="checkbox"
                      checked={satisfy.conditions.includes(i.instanceId)}
                      onChange={(e) =>
                        setSatisfy({
                          ...satisfy,
                          conditions: (e.currentTarget as HTMLInputElement).checked
                            ? [...satisfy.conditions, i.instanceId]
                            : satisfy.conditions.filter((c) => c !== i.instanceId),
                        })
                      }
                    />
                    <label for={`sat-${i.uid}`}>{i.instanceId}</label>
                  </div>
                ))}
              {satisfy.mode === 'OR' ? (
                <div class="field">
                  <label for="sat-min">N (minimum passing)</label>
                  <input
                    id="sat-min"
                    type="number"
                    min={1}
                    value={satisfy.min}
                    onInput={(e) => setSatisfy({ ...satisfy, min: (e.currentTarget as HTMLInputElement).value })}
                  />
                </div>
              ) : null}
            </fieldset>
          ) : null}
        </div>
        <ErrorLine error={error} />
        <div class="row">
          <button type="submit" id="save-claim" disabled={busy}>
            {editing ? 'Save changes' : 'Create claim'}
          </button>
          {editing ? (
            <button
              type="button"
              class="secondary"
              onClick={() =>
                void run(async () => {
                  setError(null);
                  loadClaim(
                    (
                      await call(
                        api.GET('/api/v0/claim/{claimId}', {
                          params: { path: { claimId: editing }, query: { fetchPrivateParams: true } },
                        }),
                      )
                    ).claim,
                  );
                })
              }
            >
              Reload
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}

/** The whitelist's params: address lists that take any pasted text, and "one of my stores". */
function WhitelistFields({
  d,
  instance: i,
  idPrefix,
  addressPrefix,
  pubErrors,
  privErrors,
  onChange,
}: {
  d: PluginOption;
  instance: Instance;
  idPrefix: string;
  addressPrefix: string | undefined;
  pubErrors: Record<string, string>;
  privErrors: Record<string, string>;
  onChange: (patch: Partial<Instance>) => void;
}) {
  const pubRest = d.publicParamsSchema.filter((f) => f.key !== LIST_KEY);
  const privRest = d.privateParamsSchema.filter((f) => f.key !== LIST_KEY && !STORE_KEYS.includes(f.key));
  return (
    <>
      <AddressListEditor
        id={`${idPrefix}-pub-list`}
        label="Public list of addresses"
        helper="Everyone can see this list. Leave it empty to use a private list or a store."
        value={String(i.pub[LIST_KEY] ?? '')}
        prefix={addressPrefix}
        error={pubErrors[LIST_KEY]}
        onChange={(text) => onChange({ pub: { ...i.pub, [LIST_KEY]: text } })}
      />
      <Fields
        fields={pubRest}
        values={i.pub}
        idPrefix={`${idPrefix}-pub`}
        errors={pubErrors}
        onChange={(pub) => onChange({ pub })}
      />
      <div class="private">
        <h3>Private</h3>
        <AddressListEditor
          id={`${idPrefix}-priv-list`}
          label="Private list of addresses"
          helper="Hidden from claimers."
          value={String(i.priv[LIST_KEY] ?? '')}
          prefix={addressPrefix}
          error={privErrors[LIST_KEY]}
          onChange={(text) => onChange({ priv: { ...i.priv, [LIST_KEY]: text } })}
        />
        <StorePicker
          id={`${idPrefix}-store`}
          values={i.priv}
          error={privErrors.dynamicDataId ?? privErrors.useDynamicStore ?? privErrors.dataSecret}
          onChange={(priv) => onChange({ priv })}
        />
        {privRest.length ? (
          <Fields
            fields={privRest}
            values={i.priv}
            idPrefix={`${idPrefix}-priv`}
            errors={privErrors}
            onChange={(priv) => onChange({ priv })}
            secret
          />
        ) : null}
      </div>
    </>
  );
}

/** Codes of a seed (docs/onchain-claims.md): sha256hex("<seed>-<i>") followed by "-<i>". */
function codesCsv(seed: string, count: number): string {
  const enc = new TextEncoder();
  const rows = ['index,code'];
  for (let i = 0; i < count; i++) rows.push(`${i},${bytesToHex(sha256(enc.encode(`${seed}-${i}`)))}-${i}`);
  return rows.join('\n') + '\n';
}

/** Live lists: read again every 2 s while they change, backing off to 30 s while they do not; paused while the tab is hidden. */
const POLL_MIN_MS = 2_000;
const POLL_MAX_MS = 30_000;

/** Calls `read` (which says whether anything changed) again and again while the page is open. */
function usePolling(read: () => Promise<boolean>, deps: unknown[]) {
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let delay = POLL_MIN_MS;
    const tick = async () => {
      if (stopped) return;
      if (document.visibilityState === 'visible') {
        const changed = await read().catch(() => false);
        delay = changed ? POLL_MIN_MS : Math.min(delay * 2, POLL_MAX_MS);
      }
      if (!stopped) timer = setTimeout(tick, delay);
    };
    const onVisible = () => {
      if (document.visibilityState !== 'visible') return;
      clearTimeout(timer);
      delay = POLL_MIN_MS;
      void tick();
    };
    timer = setTimeout(tick, delay);
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, deps);
}

/** An address as its owner knows it: the form they used, with a copy button, and the native form beside it when different. */
function Claimer({ used, native }: { used: string; native: string }) {
  return (
    <span class="claimer">
      <code data-testid="claimer-address">{used}</code> <CopyButton text={used} label="Copy" />
      {used !== native ? (
        <span class="muted other-form">
          {' '}
          also <code>{native}</code>
        </span>
      ) : null}
    </span>
  );
}

function ClaimView({ claimId, session }: { claimId: string; session: SessionInfo }) {
  const descriptions = useDescriptions(true);
  const [claim, setClaim] = useState<ClaimDoc | null>(null);
  const [search, setSearch] = useState('');
  const [filter, setFilter] = useState('');
  const { error, run } = useAction();
  const attempts = usePagedList<Attempt>(
    (bookmark) =>
      call(
        api.GET('/api/v0/claims/{claimId}/attempts', {
          params: {
            path: { claimId },
            query: { includeErrors: true, bookmark, ...(filter ? { address: filter } : {}) },
          },
        }),
      ),
    run,
  );
  const [refusals, setRefusals] = useState<Refusals | null>(null);
  const readClaim = async () =>
    (
      await call(
        api.GET('/api/v0/claim/{claimId}', { params: { path: { claimId }, query: { fetchPrivateParams: true } } }),
      )
    ).claim;
  const readRefusals = async () =>
    call(api.GET('/api/v0/claims/{claimId}/refusals', { params: { path: { claimId } } }));
  useEffect(() => {
    void run(async () => setClaim(await readClaim()));
    void run(async () => setRefusals(await readRefusals()));
  }, []);
  useEffect(() => void attempts.load(), [filter]);
  // live: the first page of attempts, the refused tries and the claim's counts, read again while
  // open. What the page shows is kept in a ref, since one poll loop outlives many renders.
  const shownNow = useRef({ attempt: '', total: -1, refusals: '' });
  shownNow.current = {
    attempt: attempts.docs?.[0]?.claimAttemptId ?? '',
    total: attempts.total ?? -1,
    refusals: refusals ? `${refusals.docs.length}:${refusals.docs[0]?.refusedAt ?? ''}` : '',
  };
  usePolling(async () => {
    const [page, r, c] = await Promise.all([
      call(
        api.GET('/api/v0/claims/{claimId}/attempts', {
          params: {
            path: { claimId },
            query: { includeErrors: true, bookmark: '', ...(filter ? { address: filter } : {}) },
          },
        }),
      ),
      readRefusals(),
      readClaim(),
    ]);
    const now = shownNow.current;
    const attemptsChanged = (page.docs[0]?.claimAttemptId ?? '') !== now.attempt || page.total !== now.total;
    const refusalsChanged = `${r.docs.length}:${r.docs[0]?.refusedAt ?? ''}` !== now.refusals;
    // a change replaces the list with its first page (pages added with "More" are read again on demand)
    if (attemptsChanged) await attempts.refresh();
    if (refusalsChanged) setRefusals(r);
    setClaim(c);
    return attemptsChanged || refusalsChanged;
  }, [filter]);
  if (!claim) return <ErrorLine error={error} />;
  const byId = new Map((descriptions ?? []).map((d) => [d.pluginId, d]));
  const publicUrl = `${location.origin}/claim/${encodeURIComponent(claimId)}`;
  return (
    <section aria-labelledby="claim-title">
      <h1 id="claim-title">{claim.metadata.name || claimId}</h1>
      <p class="row">
        <a href={`/claim/${encodeURIComponent(claimId)}`}>{publicUrl}</a>{' '}
        <CopyButton text={publicUrl} label="Copy link" />
        <a href={`#/claims/edit/${encodeURIComponent(claimId)}`}>Edit</a>
      </p>
      <p class="muted">
        Version {claim.version} · created {formatTime(claim.createdAt)} · updated {formatTime(claim.lastUpdated)}
      </p>
      <ul class="list">
        {claim.plugins.map((p) => {
          const d = byId.get(p.pluginId);
          const numCodes = Number((p.publicParams as { numCodes?: number }).numCodes ?? 0);
          const seed = (p.privateParams as { seedCode?: string }).seedCode;
          return (
            <li class="card" key={p.instanceId}>
              <strong>{d?.metadata.name ?? p.pluginId}</strong> <code>{p.instanceId}</code>
              <p>{d ? detailsText(d.customDetailsDisplay, p.publicParams) : ''}</p>
              {p.publicState.numUses !== undefined ? <p class="muted">Used {p.publicState.numUses} times.</p> : null}
              {seed && numCodes > 0 ? (
                <button
                  type="button"
                  class="secondary"
                  onClick={() => download(`${claimId}-${p.instanceId}-codes.csv`, codesCsv(seed, numCodes))}
                >
                  Download {numCodes} codes (CSV)
                </button>
              ) : null}
            </li>
          );
        })}
      </ul>
      <Simulate claim={claim} descriptions={descriptions ?? []} defaultAddress={session.address} />
      <h2 id="attempts-title">
        Attempts{' '}
        {attempts.docs ? (
          <span class="muted" data-testid="attempts-total">
            ({attempts.total})
          </span>
        ) : null}
      </h2>
      <p class="muted">Updated live while this page is open.</p>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter(search.trim());
        }}
      >
        <div class="field grow">
          <label for="attempt-search">Find an address (0x… or native form)</label>
          <input
            id="attempt-search"
            value={search}
            spellcheck={false}
            onInput={(e) => setSearch((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" class="secondary">
          Find
        </button>
        {filter ? (
          <button
            type="button"
            class="link"
            onClick={() => {
              setSearch('');
              setFilter('');
            }}
          >
            Show all
          </button>
        ) : null}
      </form>
      <ErrorLine error={error} />
      {attempts.docs?.length === 0 ? <p>{filter ? 'No attempts by this address.' : 'No attempts yet.'}</p> : null}
      {attempts.docs && attempts.docs.length > 0 ? (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Attempts, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Address</th>
                <th scope="col">Result</th>
              </tr>
            </thead>
            <tbody>
              {attempts.docs.map((a) => (
                <tr key={a.claimAttemptId}>
                  <td>{formatTime(a.attemptedAt)}</td>
                  <td>
                    <Claimer used={a.claimerAddress} native={a.platformAddress} />
                  </td>
                  <td>{a.success ? `claim #${a.claimNumber}` : <span class="error-text">{a.error}</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <MoreButton list={attempts} label="More attempts" />
      <RefusedTries claim={claim} refusals={refusals} descriptions={descriptions ?? []} />
    </section>
  );
}

type Refusals = paths['/api/v0/claims/{claimId}/refusals']['get']['responses'][200]['content']['application/json'];

/** Refused completes (queued nothing, so not among the attempts) and the failed-guess counts. */
function RefusedTries({
  claim,
  refusals,
  descriptions,
}: {
  claim: ClaimDoc;
  refusals: Refusals | null;
  descriptions: PluginDescription[];
}) {
  const guesses = (claim as { _failedGuesses?: { total: number; lastHour: number } })._failedGuesses;
  const names = new Map(descriptions.map((d) => [d.pluginId, d.metadata.name]));
  return (
    <section aria-labelledby="refused-title">
      <h2 id="refused-title">Refused tries</h2>
      <p class="muted">
        Tries that a requirement refused are not attempts: nothing was queued. The last {refusals?.limit ?? 100} of this
        claim are kept.
      </p>
      {guesses ? (
        <p data-testid="failed-guesses">
          Wrong passwords or codes: {guesses.total.toLocaleString()} in all, {guesses.lastHour.toLocaleString()} in the
          last hour.
        </p>
      ) : null}
      {refusals?.docs.length === 0 ? <p>No refused tries.</p> : null}
      {refusals && refusals.docs.length > 0 ? (
        <div class="table-wrap">
          <table data-testid="refusals">
            <caption class="sr-only">Refused tries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Address</th>
                <th scope="col">Requirement</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {refusals.docs.map((r, n) => (
                <tr key={`${r.refusedAt}-${n}`}>
                  <td>{formatTime(r.refusedAt)}</td>
                  <td>
                    <Claimer used={r.claimerAddress} native={r.platformAddress} />
                  </td>
                  <td>
                    {r.instanceId ? (
                      <>
                        {names.get(r.pluginId) ?? r.pluginId} <code>{r.instanceId}</code>
                      </>
                    ) : (
                      'The claim'
                    )}
                  </td>
                  <td class="error-text">{r.error}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function Simulate({
  claim,
  descriptions,
  defaultAddress,
}: {
  claim: ClaimDoc;
  descriptions: PluginDescription[];
  defaultAddress: string;
}) {
  const [address, setAddress] = useState(defaultAddress);
  const [inputs, setInputs] = useState<Record<string, Values>>({});
  const [result, setResult] = useState<{ state: 'ok' | 'fail' | 'waiting'; text: string } | null>(null);
  const seq = useRef(0);
  const byId = new Map(descriptions.map((d) => [d.pluginId, d]));
  const withInputs = claim.plugins.filter((p) => (byId.get(p.pluginId)?.userInputsSchema.length ?? 0) > 0);
  // Like the claim page: nothing is judged before there is something to judge (an address, and a
  // value for every requirement that asks for one), and the check runs once typing stops.
  useEffect(() => {
    const mine = ++seq.current;
    setResult(null);
    if (!address) return;
    const waiting = withInputs.filter(
      (p) => !Object.values(inputs[p.instanceId] ?? {}).some((v) => (typeof v === 'string' ? v.trim() : v)),
    );
    if (waiting.length) {
      const names = waiting.map((p) => byId.get(p.pluginId)?.metadata.name ?? p.pluginId).join(', ');
      setResult({ state: 'waiting', text: `Fill in ${names} to simulate.` });
      return;
    }
    const timer = setTimeout(async () => {
      const body: Record<string, unknown> = { _expectedVersion: -1 };
      for (const p of withInputs) body[p.instanceId] = buildInputs(byId.get(p.pluginId)!, inputs[p.instanceId]);
      const r = await api.POST('/api/v0/claims/simulate/{claimId}/{address}', {
        params: { path: { claimId: claim.claimId, address } },
        body: body as { _expectedVersion: number },
      });
      if (mine !== seq.current) return; // the address or an input changed meanwhile
      setResult(
        r.response.ok
          ? { state: 'ok', text: 'This address would pass every requirement.' }
          : {
              state: 'fail',
              text: (r.error as { errorMessage?: string })?.errorMessage ?? `HTTP ${r.response.status}`,
            },
      );
    }, 500);
    return () => clearTimeout(timer);
  }, [address, inputs, descriptions]);
  return (
    <section class="card" aria-labelledby="simulate-title">
      <h2 id="simulate-title">Simulate as address</h2>
      <div class="field">
        <label for="simulate-address">Address</label>
        <input
          id="simulate-address"
          value={address}
          onInput={(e) => setAddress((e.currentTarget as HTMLInputElement).value.trim())}
        />
      </div>
      {withInputs.map((p) => (
        <Fields
          key={p.instanceId}
          fields={byId.get(p.pluginId)!.userInputsSchema}
          values={inputs[p.instanceId] ?? {}}
          idPrefix={`sim-${p.instanceId}`}
          onChange={(v) => setInputs({ ...inputs, [p.instanceId]: v })}
        />
      ))}
      {result ? (
        <p
          role="status"
          class={result.state === 'ok' ? 'ok' : result.state === 'fail' ? 'error' : 'muted'}
          data-testid="simulate-result"
        >
          {result.text}
        </p>
      ) : null}
    </section>
  );
}

/** User inputs for one instance; missing values are sent empty so the plugin answers its own text. */
function buildInputs(d: PluginDescription, values: Values | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of d.userInputsSchema) out[f.key] = typeof values?.[f.key] === 'string' ? values[f.key] : '';
  return out;
}
