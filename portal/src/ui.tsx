// Small shared pieces: error and status lines, a copy button, a busy wrapper.
import { useState } from 'preact/hooks';

export function ErrorLine({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="secondary small"
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => undefined);
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

/** Runs an async action with a busy flag and an error message (the service's own text). */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

/** Shown once: a secret with a copy button and the warning that it will not be shown again. */
export function OnceSecret({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{label}</strong> — copy it now; it is shown only once.
      </p>
      <code data-testid={testId}>{value}</code>
      <CopyButton text={value} />
    </div>
  );
}

export function download(filename: string, text: string, type = 'text/csv') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
