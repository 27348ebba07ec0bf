// Small shared pieces: error and status lines, a copy button, a busy wrapper, paged lists.
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

/** One page of a list as the service answers it; `total` only where the route counts. */
export interface Page<T> {
  docs: T[];
  bookmark: string;
  hasMore: boolean;
  total?: number;
}

export interface PagedList<T> {
  /** null until the first page has come */
  docs: T[] | null;
  hasMore: boolean;
  total?: number;
  /** Reads the first page again (replacing the list) through the page's run. */
  load: () => Promise<void>;
  /** Appends the next page. */
  more: () => Promise<void>;
  /** load without run, for use inside another run action: its busy flag and error cover this read too. */
  refresh: () => Promise<void>;
}

/** A list read page by page; errors show through the useAction whose run is given. */
export function usePagedList<T>(
  fetchPage: (bookmark: string) => Promise<Page<T>>,
  run: ReturnType<typeof useAction>['run'],
): PagedList<T> {
  const [list, setList] = useState<Page<T> | null>(null);
  const read = async (bookmark: string) => {
    const page = await fetchPage(bookmark);
    // appended to the list as it is when the page comes, not as it was when asked for
    setList((prev) => ({ ...page, docs: bookmark && prev ? [...prev.docs, ...page.docs] : page.docs }));
  };
  return {
    docs: list?.docs ?? null,
    hasMore: list?.hasMore ?? false,
    total: list?.total,
    load: () => run(() => read('')),
    more: () => run(() => read(list?.bookmark ?? '')),
    refresh: () => read(''),
  };
}

export function MoreButton({ list, label }: { list: Pick<PagedList<unknown>, 'hasMore' | 'more'>; label: string }) {
  return list.hasMore ? (
    <button type="button" class="secondary" onClick={() => void list.more()}>
      {label}
    </button>
  ) : null;
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
