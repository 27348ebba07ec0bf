// The claim builder's helpers for the common cases: templates that pre-fill the form, the
// whitelist's address editor (paste or upload any text; addresses found in any column, in both
// forms, duplicates merged, lines without an address listed), the "one of my stores" picker (the
// service attaches the store's secret), and the mapping of the API's field paths
// (`claims[0].plugins[1].privateParams.list.addresses[0] …`) to the field they name.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { prefixOf, scanAddresses } from '../address-text.ts';
import { api, call, type PluginOption, type paths } from '../api.ts';
import { FieldErrorText, initialValues, type Values } from '../forms.tsx';

type Store =
  paths['/api/v0/dynamicStores/search']['get']['responses'][200]['content']['application/json']['docs'][number];

// ------------------------------------------------------------------------------ templates

/** What a template puts in the form: plugins (by id) with their values, and the claim's name. */
interface TemplatePlugin {
  pluginId: string;
  pub?: Values;
  priv?: Values;
}
export interface TemplateFill {
  name: string;
  plugins: TemplatePlugin[];
}
const uses = (n: number): TemplatePlugin => ({ pluginId: 'numUses', pub: { maxUses: String(n) } });

export interface Template {
  id: string;
  label: string;
  /** What N counts, for the template's one number. */
  count: string;
  fill(n: number): TemplateFill;
}

/** must-own-badges: hold at least one of token 1 of collection 1 (an example to edit). */
const SAMPLE_OWNERSHIP = {
  assets: [
    {
      collectionId: '1',
      assetIds: [{ start: '1', end: '1' }],
      mustOwnAmounts: { start: '1', end: '18446744073709551615' },
    },
  ],
};

export const TEMPLATES: Template[] = [
  {
    id: 'password',
    label: 'Password + N uses',
    count: 'Number of uses',
    fill: (n) => ({
      name: 'Password claim',
      plugins: [uses(n), { pluginId: 'password', priv: { password: '' } }],
    }),
  },
  {
    id: 'allowlist',
    label: 'Allowlist + one per address',
    count: 'Number of uses',
    fill: (n) => ({
      name: 'Allowlist claim',
      plugins: [uses(n), { pluginId: 'whitelist', pub: { maxUsesPerAddress: '1' } }],
    }),
  },
  {
    id: 'holders',
    label: 'Token holders (must own badges) + N uses',
    count: 'Number of uses',
    fill: (n) => ({
      name: 'Token holders claim',
      plugins: [
        uses(n),
        { pluginId: 'must-own-badges', pub: { ownershipRequirements: JSON.stringify(SAMPLE_OWNERSHIP, null, 2) } },
      ],
    }),
  },
  {
    id: 'codes',
    label: 'N one-time codes',
    count: 'Number of codes',
    fill: (n) => ({
      name: 'One-time codes claim',
      plugins: [uses(n), { pluginId: 'codes', pub: { numCodes: String(n) } }],
    }),
  },
];

/** The template's instances for the builder's form: each plugin's defaults, then the template's values. */
export function templateInstances(
  fill: TemplateFill,
  byId: Map<string, PluginOption>,
): Array<{ d: PluginOption; pub: Values; priv: Values }> {
  return fill.plugins.map((p) => {
    const d = byId.get(p.pluginId);
    if (!d) throw new Error(`This template needs the ${p.pluginId} plugin, which this service does not offer.`);
    return {
      d,
      pub: { ...initialValues(d.publicParamsSchema), ...p.pub },
      priv: { ...initialValues(d.privateParamsSchema), ...p.priv },
    };
  });
}

export function TemplatePicker({ onApply }: { onApply: (t: Template, n: number) => void }) {
  const [id, setId] = useState('');
  const [n, setN] = useState('10');
  const template = TEMPLATES.find((t) => t.id === id);
  const count = Number(n);
  const valid = Number.isInteger(count) && count >= 1;
  return (
    <section class="card" aria-labelledby="template-title">
      <h2 id="template-title">Start from a template</h2>
      <p class="muted">A template fills in the form below; you can change everything before you save.</p>
      <div class="row">
        <div class="field grow">
          <label for="template">Template</label>
          <select id="template" value={id} onChange={(e) => setId((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Choose…</option>
            {TEMPLATES.map((t) => (
              <option value={t.id} key={t.id}>
                {t.label}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="template-n">{template?.count ?? 'N'}</label>
          <input
            id="template-n"
            type="number"
            min={1}
            value={n}
            onInput={(e) => setN((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        <button
          type="button"
          class="secondary"
          id="apply-template"
          disabled={!template || !valid}
          onClick={() => template && onApply(template, count)}
        >
          Use template
        </button>
      </div>
      {template?.id === 'codes' ? (
        <p class="muted">Once the claim is saved, its page offers the codes as a CSV file to download.</p>
      ) : null}
    </section>
  );
}

// ------------------------------------------------------------------------------ address lists

/** The whitelist's list as sent: the valid addresses found in the text, one per line. */
export function addressListValue(text: string, prefix?: string): string {
  return scanAddresses(text, prefix).addresses.join('\n');
}

export function AddressListEditor({
  id,
  label,
  helper,
  value,
  onChange,
  prefix,
  error,
}: {
  id: string;
  label: string;
  helper: string;
  value: string;
  onChange: (text: string) => void;
  prefix?: string;
  error?: string;
}) {
  const scan = useMemo(() => scanAddresses(value, prefix), [value, prefix]);
  const shownBad = scan.badLines.slice(0, 20);
  const described = [`${id}-help`, `${id}-count`, error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field address-list">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        rows={5}
        spellcheck={false}
        value={value}
        aria-describedby={described}
        aria-invalid={error ? true : undefined}
        onInput={(e) => onChange((e.currentTarget as HTMLTextAreaElement).value)}
      />
      <small id={`${id}-help`} class="helper">
        {helper} Paste a list or a CSV: addresses are found in any column, 0x… or {prefix ?? 'native'}1… form.
      </small>
      <div class="row">
        <label class="file-label" for={`${id}-file`}>
          Or upload a file (CSV or text)
        </label>
        <input
          id={`${id}-file`}
          type="file"
          accept=".csv,.txt,text/csv,text/plain"
          onChange={async (e) => {
            const input = e.currentTarget as HTMLInputElement;
            const file = input.files?.[0];
            if (file) onChange(await file.text());
            input.value = '';
          }}
        />
      </div>
      <p id={`${id}-count`} class="muted" aria-live="polite" data-testid="address-count">
        {value.trim() === ''
          ? 'No addresses yet.'
          : `${scan.addresses.length.toLocaleString()} address${scan.addresses.length === 1 ? '' : 'es'} will be saved` +
            (scan.duplicates
              ? ` (${scan.duplicates.toLocaleString()} duplicate${scan.duplicates === 1 ? '' : 's'} merged)`
              : '') +
            '.'}
      </p>
      {scan.badLines.length ? (
        <div class="bad-lines" data-testid="bad-lines">
          <p>
            {scan.badLines.length === 1 ? '1 line has' : `${scan.badLines.length.toLocaleString()} lines have`} no valid
            address and will be left out:
          </p>
          <ul>
            {shownBad.map((b) => (
              <li key={b.line}>
                Line {b.line}: <code>{b.text}</code> ({b.reason})
              </li>
            ))}
          </ul>
          {scan.badLines.length > shownBad.length ? (
            <p class="muted">and {(scan.badLines.length - shownBad.length).toLocaleString()} more.</p>
          ) : null}
        </div>
      ) : null}
      {error ? <FieldErrorText id={`${id}-error`} text={error} /> : null}
    </div>
  );
}

export const addressPrefix = (sessionAddress: string): string | undefined => prefixOf(sessionAddress);

// ------------------------------------------------------------------------------ store picker

/** "One of my stores" for a whitelist: sets useDynamicStore and the store's id; never a secret. */
export function StorePicker({
  id,
  values,
  onChange,
  error,
}: {
  id: string;
  values: Values;
  onChange: (v: Values) => void;
  error?: string;
}) {
  const [stores, setStores] = useState<Store[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  useEffect(() => {
    (async () => {
      const out: Store[] = [];
      let bookmark = '';
      for (let i = 0; i < 8; i++) {
        const page = await call(api.GET('/api/v0/dynamicStores/search', { params: { query: { bookmark } } }));
        out.push(...page.docs);
        if (!page.hasMore) break;
        bookmark = page.bookmark;
      }
      setStores(out);
    })().catch((e: Error) => setLoadError(e.message));
  }, []);
  const chosen = values.useDynamicStore === true ? String(values.dynamicDataId ?? '') : '';
  const known = !chosen || (stores ?? []).some((s) => s.dynamicDataId === chosen);
  const described = [`${id}-help`, error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>Addresses from one of my stores</label>
      <select
        id={id}
        value={chosen}
        aria-describedby={described}
        aria-invalid={error ? true : undefined}
        onChange={(e) => {
          const storeId = (e.currentTarget as HTMLSelectElement).value;
          onChange({ ...values, useDynamicStore: storeId !== '', dynamicDataId: storeId, dataSecret: '' });
        }}
      >
        <option value="">No store</option>
        {!known ? <option value={chosen}>Store {chosen}</option> : null}
        {(stores ?? []).map((s) => (
          <option value={s.dynamicDataId} key={s.dynamicDataId}>
            {s.label || s.dynamicDataId} ({s.size.toLocaleString()} address{s.size === 1 ? '' : 'es'})
          </option>
        ))}
      </select>
      <small id={`${id}-help`} class="helper">
        {stores === null && !loadError
          ? 'Loading your stores…'
          : stores?.length === 0
            ? 'You have no dynamic stores yet (create one under Dynamic stores).'
            : 'The claim reads the store as it is at each attempt. The service attaches the store for you: no secret to copy.'}
        {loadError ? ` Your stores could not be read: ${loadError}` : ''}
      </small>
      {error ? <FieldErrorText id={`${id}-error`} text={error} /> : null}
    </div>
  );
}

// ------------------------------------------------------------------------------ errors in words

/** Where an API error points in the builder's form. */
export type ErrorPlace =
  | { kind: 'claim'; field: 'claimId' | 'name' | 'description'; text: string }
  | { kind: 'instance'; index: number; text: string }
  | { kind: 'field'; index: number; side: 'pub' | 'priv'; key: string; text: string }
  | { kind: 'form'; text: string };

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Maps an API error naming a path of the first claim to the field it names, with the path
 * replaced by words. `fieldKeys(index, side)` lists the keys the form shows for that instance.
 */
export function placeError(message: string, fieldKeys: (index: number, side: 'pub' | 'priv') => string[]): ErrorPlace {
  const m = /^claims\[0\]((?:\.[A-Za-z_$][\w$]*|\[\d+\])+):?\s*(.*)$/s.exec(message);
  if (!m) return { kind: 'form', text: message };
  const segments = [...m[1]!.matchAll(/\.([A-Za-z_$][\w$]*)|\[(\d+)\]/g)].map((x) =>
    x[1] !== undefined ? x[1] : Number(x[2]),
  );
  const rest = m[2]!.trim();
  if (segments[0] === 'claimId') return { kind: 'claim', field: 'claimId', text: capitalize(rest) };
  if (segments[0] === 'metadata' && (segments[1] === 'name' || segments[1] === 'description'))
    return { kind: 'claim', field: segments[1], text: capitalize(rest) };
  if (segments[0] !== 'plugins' || typeof segments[1] !== 'number')
    return { kind: 'form', text: message.replace(/^claims\[0\]\./, '') };
  const index = segments[1];
  const sideName = segments[2];
  if (sideName !== 'publicParams' && sideName !== 'privateParams') {
    const what = typeof sideName === 'string' ? `${sideName} ` : '';
    return { kind: 'instance', index, text: capitalize(`${what}${rest}`.trim()) };
  }
  const side = sideName === 'publicParams' ? 'pub' : 'priv';
  // the longest key the form shows that the path starts with, then the entry number if any
  const names: string[] = [];
  let entry: number | undefined;
  for (const s of segments.slice(3)) {
    if (typeof s === 'number') {
      entry = s;
      break;
    }
    names.push(s);
  }
  const keys = fieldKeys(index, side);
  for (let n = names.length; n > 0; n--) {
    const key = names.slice(0, n).join('.');
    if (!keys.includes(key)) continue;
    const inner = names.slice(n).join('.');
    const text = [entry !== undefined ? `Entry ${entry + 1}` : '', inner, rest].filter(Boolean).join(' ');
    return { kind: 'field', index, side, key, text: capitalize(text) };
  }
  const path = names.join('.');
  return { kind: 'instance', index, text: capitalize(`${path ? `${path}: ` : ''}${rest}`) };
}
