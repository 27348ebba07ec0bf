// The public claim page (/claim/{claimId}): what the claim asks for (from customDetailsDisplay of
// each plugin's description), a wallet connection (the same wallet proof as sign-in), the inputs the
// plugins need, a live check of each requirement (simulate), then complete, follow the attempt until
// it resolves, and show the claim number (and the reserved code of an on-chain claim). Error texts
// are the plugins' own.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import '../styles.css';
import {
  api,
  ApiFailure,
  call,
  describeVersion,
  loadSession,
  pluginDescriptions,
  usableVersion,
  type ClaimDoc,
  type PluginDescription,
  type SessionInfo,
} from '../api.ts';
import { detailsText, Fields, type Values } from '../forms.tsx';
import { ErrorLine, useAction } from '../ui.tsx';
import { hasWallet, signInWithWallet, signOut, type WalletKind } from '../wallet.ts';

const claimId = decodeURIComponent(location.pathname.split('/')[2] ?? '');
const DID_NOT_RUN = /did not run/;

/** Descriptions of the claim's hosted and custom plugins, from their documents (the pinned version). */
async function documentDescriptions(claim: ClaimDoc, core: PluginDescription[]): Promise<PluginDescription[]> {
  const known = new Set(core.map((d) => d.pluginId));
  const wanted = new Map<string, string | undefined>();
  for (const p of claim.plugins)
    if (!known.has(p.pluginId)) wanted.set(p.pluginId, (p as { version?: string }).version);
  const docs = await Promise.all(
    [...wanted].map(async ([pluginId, version]) => {
      const r = await api.GET('/api/v0/plugin/{pluginId}', { params: { path: { pluginId } } });
      const doc = r.data?.plugin;
      const v = doc && (doc.versions.find((x) => x.version === version) ?? usableVersion(doc, false));
      return doc && v ? describeVersion(doc, v) : null;
    }),
  );
  return docs.filter((d): d is NonNullable<typeof d> => d !== null);
}

/** What url-clicker and custom-instructions show the claimer (their public params). */
function Shown({ pluginId, params }: { pluginId: string; params: Record<string, unknown> }) {
  if (/^url-clicker(-[a-z]{2}(-[A-Z]{2})?)?$/.test(pluginId) && typeof params.url === 'string') {
    return (
      <a class="shown-link" href={params.url} target="_blank" rel="noopener noreferrer" data-testid="url-clicker-link">
        {params.url}
      </a>
    );
  }
  if (/^custom-instructions(-[a-z]{2}(-[A-Z]{2})?)?$/.test(pluginId) && typeof params.instructions === 'string') {
    return (
      <p class="shown-instructions" data-testid="custom-instructions">
        {params.instructions}
      </p>
    );
  }
  return null;
}

type Check = { state: 'pass' | 'fail'; text: string };
type Result = { success: boolean; error: string; claimNumber?: number; code?: string };

function inputsBody(claim: ClaimDoc, byId: Map<string, PluginDescription>, inputs: Record<string, Values>) {
  const body: Record<string, unknown> = { _expectedVersion: -1 };
  for (const p of claim.plugins) {
    const fields = byId.get(p.pluginId)?.userInputsSchema ?? [];
    if (!fields.length) continue;
    body[p.instanceId] = Object.fromEntries(
      fields.map((f) => [f.key, typeof inputs[p.instanceId]?.[f.key] === 'string' ? inputs[p.instanceId]![f.key] : '']),
    );
  }
  return body as { _expectedVersion: number };
}

function ClaimPage() {
  const [claim, setClaim] = useState<ClaimDoc | null>(null);
  const [descriptions, setDescriptions] = useState<PluginDescription[]>([]);
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [inputs, setInputs] = useState<Record<string, Values>>({});
  const [checks, setChecks] = useState<Record<string, Check>>({});
  const [overall, setOverall] = useState<Check | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [result, setResult] = useState<Result | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const byId = new Map(descriptions.map((d) => [d.pluginId, d]));

  useEffect(() => {
    Promise.all([
      call(api.GET('/api/v0/claim/{claimId}', { params: { path: { claimId } } })),
      pluginDescriptions(),
      loadSession(),
    ]).then(
      async ([c, d, s]) => {
        setClaim(c.claim);
        setDescriptions([...d, ...(await documentDescriptions(c.claim, d).catch(() => []))]);
        setSession(s);
        document.title = c.claim.metadata.name || claimId;
      },
      (e: Error) =>
        setLoadError(
          e instanceof ApiFailure && e.status === 404 ? 'This claim does not exist or was deleted.' : e.message,
        ),
    );
  }, []);

  // Live check: one simulation per requirement (the others do not run) and one of the whole claim.
  useEffect(() => {
    if (!claim || !session?.signedIn || result) return;
    const timer = setTimeout(async () => {
      const address = session.address;
      const body = inputsBody(claim, byId, inputs);
      const simulate = (specific?: string[]) =>
        api.POST('/api/v0/claims/simulate/{claimId}/{address}', {
          params: { path: { claimId, address } },
          body: specific ? { ...body, _specificInstanceIds: specific } : body,
        });
      const own = claim.plugins.filter((p) => !byId.get(p.pluginId)?.mandatory);
      const [all, ...each] = await Promise.all([simulate(), ...own.map((p) => simulate([p.instanceId]))]);
      const text = (r: { error?: unknown; response: Response }) =>
        (r.error as { errorMessage?: string } | undefined)?.errorMessage ?? `HTTP ${r.response.status}`;
      const next: Record<string, Check> = {};
      own.forEach((p, i) => {
        const r = each[i]!;
        next[p.instanceId] =
          r.response.ok || DID_NOT_RUN.test(text(r))
            ? { state: 'pass', text: 'Passes' }
            : { state: 'fail', text: text(r) };
      });
      setChecks(next);
      setOverall(
        all.response.ok ? { state: 'pass', text: 'You meet every requirement.' } : { state: 'fail', text: text(all) },
      );
    }, 250);
    return () => clearTimeout(timer);
  }, [claim, session, inputs, descriptions, result]);

  if (loadError)
    return (
      <main id="main" class="claim">
        <h1>Claim</h1>
        <ErrorLine error={loadError} />
      </main>
    );
  if (!claim || !session)
    return (
      <main id="main" class="claim">
        <p aria-busy="true">Loading…</p>
      </main>
    );

  const connect = (kind: WalletKind) =>
    run(async () => setSession(await signInWithWallet(kind, session.nativeChainId)));
  const complete = () =>
    run(async () => {
      setResult(null);
      const address = session.address;
      const { claimAttemptId } = await call(
        api.POST('/api/v0/claims/complete/{claimId}/{address}', {
          params: { path: { claimId, address } },
          body: inputsBody(claim, byId, inputs),
        }),
      );
      setStatus('Your claim is queued…');
      for (let i = 0; i < 240; i++) {
        const s = await call(
          api.GET('/api/v0/claims/status/{claimAttemptId}', { params: { path: { claimAttemptId } } }),
        );
        if (s.success !== undefined) {
          let claimNumber: number | undefined;
          if (s.success) {
            const won = await call(
              api.GET('/api/v0/claims/success/{claimId}/{address}', { params: { path: { claimId, address } } }),
            );
            claimNumber = won.claimNumbers.at(-1);
          }
          setStatus(null);
          setResult({ success: s.success, error: s.error, claimNumber, code: s.code });
          setClaim((await call(api.GET('/api/v0/claim/{claimId}', { params: { path: { claimId } } }))).claim);
          return;
        }
        await new Promise((r) => setTimeout(r, i < 20 ? 250 : 1000));
      }
      throw new Error('The claim is still being processed. Reload this page later to see the result.');
    });

  const numUses = claim.plugins.find((p) => p.pluginId === 'numUses');
  const maxUses = Number((numUses?.publicParams as { maxUses?: number } | undefined)?.maxUses ?? 0);
  const withInputs = claim.plugins.filter((p) => (byId.get(p.pluginId)?.userInputsSchema.length ?? 0) > 0);

  return (
    <main id="main" class="claim">
      <h1>{claim.metadata.name || claimId}</h1>
      {claim.metadata.description ? <p class="description">{claim.metadata.description}</p> : null}
      {numUses && numUses.publicState.numUses !== undefined ? (
        <p class="muted">
          {numUses.publicState.numUses} of {maxUses} claimed
        </p>
      ) : null}

      <section aria-labelledby="req-title" class="card">
        <h2 id="req-title">Requirements</h2>
        <ul class="requirements">
          {claim.plugins
            .filter((p) => !byId.get(p.pluginId)?.mandatory)
            .map((p) => {
              const d = byId.get(p.pluginId);
              const c = checks[p.instanceId];
              return (
                <li key={p.instanceId} data-instance={p.instanceId} class={c?.state ?? ''}>
                  <span class="mark" aria-hidden="true">
                    {c ? (c.state === 'pass' ? '✓' : '✗') : '•'}
                  </span>
                  <span>
                    <strong>{d?.metadata.name ?? p.pluginId}</strong>
                    {d?.customDetailsDisplay ? ` — ${detailsText(d.customDetailsDisplay, p.publicParams)}` : ''}
                    <Shown pluginId={p.pluginId} params={p.publicParams} />
                    {c ? <span class="sr-only">{c.state === 'pass' ? ' (passes)' : ` (fails: ${c.text})`}</span> : null}
                    {c?.state === 'fail' ? (
                      <span class="check-text" aria-hidden="true">
                        {c.text}
                      </span>
                    ) : null}
                  </span>
                </li>
              );
            })}
        </ul>
      </section>

      {!session.signedIn ? (
        <section aria-labelledby="connect-title" class="card">
          <h2 id="connect-title">Connect your wallet</h2>
          <p class="muted">You sign a message to prove the address; nothing is sent on chain.</p>
          <button type="button" id="connect-evm" disabled={busy} onClick={() => void connect('evm')}>
            Connect an EVM wallet
          </button>
          <button
            type="button"
            id="connect-keplr"
            class="secondary"
            disabled={busy}
            onClick={() => void connect('keplr')}
          >
            Connect a Keplr wallet
          </button>
          {!hasWallet('evm') && !hasWallet('keplr') ? (
            <p class="muted">No wallet extension detected in this browser.</p>
          ) : null}
        </section>
      ) : (
        <section aria-labelledby="you-title" class="card">
          <h2 id="you-title">Claim as</h2>
          <p>
            <code data-testid="claimer">{session.address}</code>{' '}
            <button
              type="button"
              class="link"
              onClick={() =>
                void run(async () => {
                  await signOut();
                  setSession({ ...session, signedIn: false, address: '', csrfToken: '' });
                  setChecks({});
                  setOverall(null);
                })
              }
            >
              Use another wallet
            </button>
          </p>
          {withInputs.length ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void complete();
              }}
            >
              {withInputs.map((p) => (
                <Fields
                  key={p.instanceId}
                  fields={byId.get(p.pluginId)!.userInputsSchema}
                  values={inputs[p.instanceId] ?? {}}
                  idPrefix={`in-${p.instanceId}`}
                  onChange={(v) => setInputs({ ...inputs, [p.instanceId]: v })}
                />
              ))}
            </form>
          ) : null}
          {overall ? (
            <p class={overall.state === 'pass' ? 'ok' : 'error'} role="status" data-testid="live-check">
              {overall.text}
            </p>
          ) : null}
          <button type="button" id="claim-button" disabled={busy} onClick={() => void complete()}>
            Claim
          </button>
        </section>
      )}
      {status ? <p role="status">{status}</p> : null}
      <ErrorLine error={error} />
      {result ? (
        <section class={`card result ${result.success ? 'ok' : 'error'}`} aria-live="polite" data-testid="result">
          {result.success ? (
            <>
              <h2>Claimed</h2>
              {result.claimNumber !== undefined ? (
                <p>
                  Your claim number is <strong data-testid="claim-number">{result.claimNumber}</strong>.
                </p>
              ) : null}
              {result.code ? (
                <p>
                  Your reserved code: <code data-testid="reserved-code">{result.code}</code>
                </p>
              ) : null}
            </>
          ) : (
            <>
              <h2>Not claimed</h2>
              <p data-testid="result-error">{result.error}</p>
            </>
          )}
        </section>
      ) : null}
    </main>
  );
}

render(<ClaimPage />, document.getElementById('app')!);
