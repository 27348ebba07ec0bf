// Forms rendered from plugin descriptions (docs/plugins-platform.md schema fields). Nothing here knows a plugin:
// a field's type picks the control; dotted keys address nested params; values convert to the
// JSON the API takes (numbers, UNIX ms, UintRange[] of UNIX ms, string lists).
import type { SchemaField } from './api.ts';

/** Plugin documents' `ownershipRequirements` fields are edited as JSON text. */
const isJson = (f: SchemaField) => (f.type as string) === 'ownershipRequirements';

export type FieldValue = string | boolean | Array<{ start: string; end: string }>;
export type Values = Record<string, FieldValue>;

/** `datetime-local` value of a UNIX ms time (local time zone). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}
const fromLocalInput = (v: string): number => new Date(v).getTime();

export function initialValues(fields: SchemaField[], params: Record<string, unknown> = {}): Values {
  const out: Values = {};
  for (const f of fields) {
    const v = f.key
      .split('.')
      .reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), params);
    if (f.type === 'boolean') out[f.key] = typeof v === 'boolean' ? v : f.defaultValue === true;
    else if (f.type === 'dateRanges')
      out[f.key] = Array.isArray(v)
        ? (v as Array<{ start: string; end: string }>).map((r) => ({
            start: toLocalInput(Number(r.start)),
            end: toLocalInput(Number(r.end)),
          }))
        : [];
    else if (f.type === 'date') out[f.key] = v === undefined ? '' : toLocalInput(Number(v));
    else if (isJson(f)) out[f.key] = v === undefined ? '' : JSON.stringify(v, null, 2);
    else if (f.arrayField) out[f.key] = Array.isArray(v) ? v.join('\n') : '';
    else out[f.key] = v === undefined ? (f.defaultValue !== undefined ? String(f.defaultValue) : '') : String(v);
  }
  return out;
}

function setPath(target: Record<string, unknown>, key: string, value: unknown) {
  const parts = key.split('.');
  let o = target;
  for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
  o[parts[parts.length - 1]] = value;
}

/** An error of one field, by its key (the builder shows it beside the field). */
export class FieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** Params as the API takes them; empty optional fields are left out. Throws a FieldError naming a bad field. */
export function buildParams(fields: SchemaField[], values: Values): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const fail = (message: string): never => {
      throw new FieldError(f.key, message);
    };
    const v = values[f.key];
    if (f.type === 'boolean') {
      if (v === true) setPath(out, f.key, true);
      continue;
    }
    if (f.type === 'dateRanges') {
      const ranges = (v as Array<{ start: string; end: string }>) ?? [];
      if (!ranges.length) {
        if (f.required) fail(`${f.label}: add at least one window`);
        continue;
      }
      setPath(
        out,
        f.key,
        ranges.map((r, i) => {
          const start = fromLocalInput(r.start);
          const end = fromLocalInput(r.end);
          if (!Number.isFinite(start) || !Number.isFinite(end) || end < start)
            fail(`${f.label}: window ${i + 1} needs a start before its end`);
          return { start: String(start), end: String(end) };
        }),
      );
      continue;
    }
    const text = typeof v === 'string' ? v.trim() : '';
    if (text === '') {
      if (f.required) fail(`${f.label} is required`);
      continue;
    }
    if (isJson(f)) {
      try {
        setPath(out, f.key, JSON.parse(text));
      } catch {
        fail(`${f.label} must be JSON`);
      }
    } else if (f.arrayField) setPath(out, f.key, text.split(/[\s,]+/).filter(Boolean));
    else if (f.type === 'number') {
      const n = Number(text);
      if (!Number.isFinite(n)) fail(`${f.label} must be a number`);
      setPath(out, f.key, n);
    } else if (f.type === 'date') setPath(out, f.key, fromLocalInput(text));
    else if (f.options?.length) setPath(out, f.key, f.options.find((o) => String(o.value) === text)?.value ?? text);
    else setPath(out, f.key, text);
  }
  return out;
}

export function Fields({
  fields,
  values,
  onChange,
  idPrefix,
  secret,
  errors,
}: {
  fields: SchemaField[];
  values: Values;
  onChange: (v: Values) => void;
  idPrefix: string;
  secret?: boolean;
  /** Error texts by field key, shown beside their field. */
  errors?: Record<string, string>;
}) {
  const set = (key: string, v: FieldValue) => onChange({ ...values, [key]: v });
  return (
    <>
      {fields.map((f) => {
        const id = `${idPrefix}-${f.key.replace(/\./g, '-')}`;
        const help = f.helper ? (
          <small id={`${id}-help`} class="helper">
            {f.helper}
          </small>
        ) : null;
        const error = errors?.[f.key];
        const errorLine = error ? <FieldErrorText id={`${id}-error`} text={error} /> : null;
        const described =
          [f.helper ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
        const label = `${f.label}${f.required ? ' *' : ''}`;
        if (f.type === 'boolean') {
          return (
            <div class="field check" key={f.key}>
              <input
                id={id}
                type="checkbox"
                checked={values[f.key] === true}
                aria-describedby={described}
                aria-invalid={error ? true : undefined}
                onChange={(e) => set(f.key, (e.currentTarget as HTMLInputElement).checked)}
              />
              <label for={id}>{label}</label>
              {help}
              {errorLine}
            </div>
          );
        }
        if (f.type === 'dateRanges') {
          const ranges = (values[f.key] as Array<{ start: string; end: string }>) ?? [];
          const update = (i: number, part: 'start' | 'end', v: string) =>
            set(
              f.key,
              ranges.map((r, j) => (j === i ? { ...r, [part]: v } : r)),
            );
          return (
            <fieldset class="field" key={f.key}>
              <legend>{label}</legend>
              {ranges.map((r, i) => (
                <div class="range" key={i}>
                  <label>
                    From{' '}
                    <input
                      type="datetime-local"
                      value={r.start}
                      onInput={(e) => update(i, 'start', (e.currentTarget as HTMLInputElement).value)}
                    />
                  </label>
                  <label>
                    until{' '}
                    <input
                      type="datetime-local"
                      value={r.end}
                      onInput={(e) => update(i, 'end', (e.currentTarget as HTMLInputElement).value)}
                    />
                  </label>
                  <button
                    type="button"
                    class="link"
                    onClick={() =>
                      set(
                        f.key,
                        ranges.filter((_, j) => j !== i),
                      )
                    }
                  >
                    Remove window {i + 1}
                  </button>
                </div>
              ))}
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  const now = Date.now();
                  set(f.key, [...ranges, { start: toLocalInput(now), end: toLocalInput(now + 7 * 86_400_000) }]);
                }}
              >
                Add a time window
              </button>
              {help}
              {errorLine}
            </fieldset>
          );
        }
        const common = {
          id,
          'aria-describedby': described,
          'aria-invalid': error ? true : undefined,
          required: f.required === true,
        };
        let control;
        if (f.options?.length) {
          control = (
            <select
              {...common}
              value={String(values[f.key] ?? '')}
              onChange={(e) => set(f.key, (e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">—</option>
              {f.options.map((o) => (
                <option value={String(o.value)} key={String(o.value)}>
                  {o.label}
                </option>
              ))}
            </select>
          );
        } else if (f.arrayField || isJson(f)) {
          control = (
            <textarea
              {...common}
              rows={f.arrayField ? 4 : 8}
              spellcheck={false}
              value={String(values[f.key] ?? '')}
              onInput={(e) => set(f.key, (e.currentTarget as HTMLTextAreaElement).value)}
            />
          );
        } else {
          const type =
            f.type === 'number'
              ? 'number'
              : f.type === 'date'
                ? 'datetime-local'
                : f.type === 'url'
                  ? 'url'
                  : secret && /password|secret/i.test(f.key)
                    ? 'password'
                    : 'text';
          control = (
            <input
              {...common}
              type={type}
              autocomplete="off"
              value={String(values[f.key] ?? '')}
              onInput={(e) => set(f.key, (e.currentTarget as HTMLInputElement).value)}
            />
          );
        }
        return (
          <div class="field" key={f.key}>
            <label for={id}>{label}</label>
            {control}
            {help}
            {errorLine}
          </div>
        );
      })}
    </>
  );
}

/** A field's error, in words, right under it (announced when it appears). */
export function FieldErrorText({ id, text }: { id: string; text: string }) {
  return (
    <p class="field-error" id={id} role="alert">
      {text}
    </p>
  );
}

/** docs/plugins-platform.md customDetailsDisplay: `{{key}}` replaced by public param values. */
export function detailsText(template: string, publicParams: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([\w.]+)\s*\}\}/g, (_, key: string) => {
    const v = key
      .split('.')
      .reduce<unknown>(
        (o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
        publicParams,
      );
    return v === undefined || v === null ? '—' : Array.isArray(v) ? `${v.length}` : String(v);
  });
}
