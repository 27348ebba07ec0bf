// The public claim page (/claim/{claimId}): what the claim asks for (from customDetailsDisplay of
// each plugin's description), a wallet connection (the same wallet proof as sign-in), the inputs the
// plugins need, a live check of each requirement (simulate), then complete, follow the attempt until
// it resolves, and show the claim number in words (and the reserved code of an on-chain claim).
// Calm by design: a requirement that needs input stays neutral until something is typed, the check
// runs once typing stops, each error text is shown once, the Claim button is enabled only while the
// check passes (and says why not otherwise), and a claimed address sees its settled result again
// after a reload (read from the success route). Error texts are the plugins' own.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
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
/** Time after the last keystroke before the requirements are checked. */
const QUIET_MS = 500;

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
/** The whole claim's check: passes, fails (with the service's text), or waits for inputs (names them). */
type Overall = { state: 'pass' | 'fail' | 'waiting'; text: string };
type Failure = { error: string };

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

/** Whether the claimer has typed anything for this instance yet (until then its requirement stays neutral). */
function inputGiven(values: Values | undefined): boolean {
  return Object.values(values ?? {}).some((v) => (typeof v === 'string' ? v.trim() !== '' : Boolean(v)));
}

/** "#1", "#1 and #4", "#1, #4 and #7": claim numbers (zero-based in the API) as people count. */
function placesText(claimNumbers: number[]): string {
  const places = claimNumbers.map((n) => `#${n + 1}`);
  return places.length > 1 ? `${places.slice(0, -1).join(', ')} and ${places.at(-1)}` : (places[0] ?? '');
}

function ClaimPage() {
  const [claim, setClaim] = useState<ClaimDoc | null>(null);
  const [descriptions, setDescriptions] = useState<PluginDescription[]>([]);
  const [session, setSession] = useState<SessionInfo | null>(null);
  const [inputs, setInputs] = useState<Record<string, Values>>({});
  const [checks, setChecks] = useState<Record<string, Check>>({});
  const [overall, setOverall] = useState<Overall | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  /** the connected address's claim numbers (from the success route): non-empty means settled */
  const [settled, setSettled] = useState<number[] | null>(null);
  const [again, setAgain] = useState(false);
  const [code, setCode] = useState<string | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const [recheck, setRecheck] = useState(0);
  const [loadError, setLoadError] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  const checkSeq = useRef(0);
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

  const readSuccess = async (address: string) => {
    const r = await api.GET('/api/v0/claims/success/{claimId}/{address}', { params: { path: { claimId, address } } });
    const numbers = r.data?.claimNumbers ?? [];
    setSettled(numbers.length ? numbers : null);
  };

  // A connected address that already claimed sees its result again (after a reload too).
  useEffect(() => {
    if (session?.signedIn) void readSuccess(session.address);
    else setSettled(null);
  }, [session]);

  // Live check, once typing stops: one simulation per requirement that has what it needs (those
  // waiting for input stay neutral) and one of the whole claim once every input is given.
  useEffect(() => {
    if (!claim || !session?.signedIn || !descriptions.length) return;
    const seq = ++checkSeq.current;
    setOverall(null);
    const timer = setTimeout(async () => {
      const address = session.address;
      const body = inputsBody(claim, byId, inputs);
      const simulate = (specific?: string[]) =>
        api.POST('/api/v0/claims/simulate/{claimId}/{address}', {
          params: { path: { claimId, address } },
          body: specific ? { ...body, _specificInstanceIds: specific } : body,
        });
      const own = claim.plugins.filter((p) => !byId.get(p.pluginId)?.mandatory);
      const needs = (p: (typeof own)[number]) => (byId.get(p.pluginId)?.userInputsSchema.length ?? 0) > 0;
      const ready = own.filter((p) => !needs(p) || inputGiven(inputs[p.instanceId]));
      const waiting = own.filter((p) => !ready.includes(p));
      const [all, ...each] = await Promise.all([
        waiting.length ? null : simulate(),
        ...ready.map((p) => simulate([p.instanceId])),
      ]);
      if (seq !== checkSeq.current) return; // a newer check has started
      const text = (r: { error?: unknown; response: Response }) =>
        (r.error as { errorMessage?: string } | undefined)?.errorMessage ?? `HTTP ${r.response.status}`;
      const next: Record<string, Check> = {};
      ready.forEach((p, i) => {
        const r = each[i]!;
        next[p.instanceId] =
          r.response.ok || DID_NOT_RUN.test(text(r))
            ? { state: 'pass', text: 'Passes' }
            : { state: 'fail', text: text(r) };
      });
      setChecks(next);
      const name = (p: (typeof own)[number]) => byId.get(p.pluginId)?.metadata.name ?? p.pluginId;
      setOverall(
        !all
          ? { state: 'waiting', text: `Fill in ${waiting.map(name).join(', ')} to claim.` }
          : all.response.ok
            ? { state: 'pass', text: 'You meet every requirement.' }
            : { state: 'fail', text: text(all) },
      );
    }, QUIET_MS);
    return () => clearTimeout(timer);
  }, [claim, session, inputs, descriptions, recheck]);

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

  const canClaim = overall?.state === 'pass' && !busy && !status;
  const connect = (kind: WalletKind) =>
    run(async () => setSession(await signInWithWallet(kind, session.nativeChainId)));
  const complete = () =>
    run(async () => {
      if (!canClaim) return;
      setFailure(null);
      setCode(null);
      const address = session.address;
      try {
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
            setStatus(null);
            if (s.success) {
              await readSuccess(address);
              setAgain(false);
              if (s.code) setCode(s.code);
            } else setFailure({ error: s.error });
            setClaim((await call(api.GET('/api/v0/claim/{claimId}', { params: { path: { claimId } } }))).claim);
            return;
          }
          await new Promise((r) => setTimeout(r, i < 20 ? 250 : 1000));
        }
        setStatus(null);
        throw new Error('The claim is still being processed. Reload this page later to see the result.');
      } finally {
        setRecheck((n) => n + 1); // the requirements may read differently now (a use spent, a limit reached)
      }
    });

  const numUses = claim.plugins.find((p) => p.pluginId === 'numUses');
  const useParams = (numUses?.publicParams ?? {}) as { maxUses?: number; displayAsUnlimited?: boolean };
  const maxUses = Number(useParams.maxUses ?? 0);
  const withInputs = claim.plugins.filter((p) => (byId.get(p.pluginId)?.userInputsSchema.length ?? 0) > 0);
  const own = claim.plugins.filter((p) => !byId.get(p.pluginId)?.mandatory);

  // Each error text once: a requirement's own line first, then the reason beside the button, then
  // the line of a completion that failed.
  const shown = new Set(own.map((p) => checks[p.instanceId]).flatMap((c) => (c?.state === 'fail' ? [c.text] : [])));
  const failing = own.filter((p) => checks[p.instanceId]?.state === 'fail');
  const nameOf = (p: (typeof own)[number]) => byId.get(p.pluginId)?.metadata.name ?? p.pluginId;
  let reason: string | null = null;
  if (overall?.state === 'waiting') reason = overall.text;
  else if (overall?.state === 'fail')
    reason = shown.has(overall.text)
      ? `Not yet: ${failing.map(nameOf).join(', ')} ${failing.length > 1 ? 'do' : 'does'} not pass (see above).`
      : overall.text;
  if (overall?.state === 'fail' && reason) shown.add(overall.text);
  const failureText = failure && !shown.has(failure.error) ? failure.error : null;
  if (failureText) shown.add(failureText);
  const errorText = error && !shown.has(error) ? error : null;
  const showForm = !settled || again;

  return (
    <main id="main" class="claim">
      <h1>{claim.metadata.name || claimId}</h1>
      {claim.metadata.description ? <p class="description">{claim.metadata.description}</p> : null}
      {numUses && numUses.publicState.numUses !== undefined ? (
        <p class="muted" data-testid="uses">
          {useParams.displayAsUnlimited
            ? `${numUses.publicState.numUses} claimed`
            : `${numUses.publicState.numUses} of ${maxUses} claimed`}
        </p>
      ) : null}

      {settled ? (
        <section class="card result ok" aria-live="polite" data-testid="settled">
          <h2>You have claimed this</h2>
          <p data-testid="claim-place">
            You were <strong>{placesText(settled)}</strong>
            {maxUses && !useParams.displayAsUnlimited ? ` of ${maxUses}` : ''}.
          </p>
          {code ? (
            <p>
              Your reserved code: <code data-testid="reserved-code">{code}</code>
            </p>
          ) : null}
          {!again ? (
            <button type="button" class="link" onClick={() => setAgain(true)}>
              Claim again
            </button>
          ) : null}
        </section>
      ) : null}

      {showForm ? (
        <section aria-labelledby="req-title" class="card">
          <h2 id="req-title">Requirements</h2>
          <ul class="requirements">
            {own.map((p) => {
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
                    {c?.state === 'pass' ? <span class="sr-only"> (passes)</span> : null}
                    {c?.state === 'fail' ? (
                      <>
                        <span class="sr-only"> (does not pass)</span>
                        <span class="check-text">{c.text}</span>
                      </>
                    ) : null}
                  </span>
                </li>
              );
            })}
          </ul>
        </section>
      ) : null}

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
          <p class="claimer">
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
                  setFailure(null);
                  setAgain(false);
                })
              }
            >
              Use another wallet
            </button>
          </p>
          {showForm ? (
            <>
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
                      onChange={(v) => {
                        setFailure(null);
                        setError(null);
                        setInputs({ ...inputs, [p.instanceId]: v });
                      }}
                    />
                  ))}
                </form>
              ) : null}
              {overall?.state === 'pass' ? (
                <p class="ok" role="status" data-testid="live-check">
                  {overall.text}
                </p>
              ) : null}
              <button
                type="button"
                id="claim-button"
                disabled={!canClaim}
                aria-describedby={reason ? 'claim-reason' : undefined}
                onClick={() => void complete()}
              >
                {busy || status ? 'Claiming…' : overall === null ? 'Checking…' : 'Claim'}
              </button>
              {reason ? (
                <p id="claim-reason" class={overall?.state === 'fail' ? 'reason fail' : 'reason'} role="status">
                  {reason}
                </p>
              ) : null}
            </>
          ) : null}
        </section>
      )}
      {status ? <p role="status">{status}</p> : null}
      <ErrorLine error={errorText} />
      {failureText ? (
        <section class="card result error" aria-live="polite" data-testid="result">
          <h2>Not claimed</h2>
          <p data-testid="result-error">{failureText}</p>
        </section>
      ) : null}
    </main>
  );
}

render(<ClaimPage />, document.getElementById('app')!);
