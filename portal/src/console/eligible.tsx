// "What can I claim?": the signed-in wallet's claims that it can claim now, or after giving a
// password or a code, from POST /api/v0/eligibility (the same verdicts as simulate), each linking
// to its public claim page.
import { useEffect } from 'preact/hooks';
import { api, call, type paths, type SessionInfo } from '../api.ts';
import { ErrorLine, MoreButton, useAction, usePagedList, type Page } from '../ui.tsx';

type Answer = paths['/api/v0/eligibility']['post']['responses'][200]['content']['application/json'];
type Doc = Answer['docs'][number];

/** Pages holding no match are skipped (a bounded number of reads), so a shown page is never empty while more exist. */
const MAX_READS = 20;

const INPUT_NAMES = { password: 'a password', code: 'a code', custom: 'an answer' } as const;

function inputsText(d: Doc): string {
  const names = [...new Set((d.inputs ?? []).map((i) => INPUT_NAMES[i.kind]))];
  return names.length ? `Eligible after you enter ${names.join(' and ')}` : 'Eligible after input';
}

export function EligiblePage({ session }: { session: SessionInfo }) {
  const { busy, error, run } = useAction();
  const list = usePagedList<Doc>(async (bookmark): Promise<Page<Doc>> => {
    let page: Answer = { docs: [], bookmark, hasMore: true };
    for (let i = 0; i < MAX_READS && page.docs.length === 0 && page.hasMore; i++) {
      page = await call(
        api.POST('/api/v0/eligibility', {
          body: { address: session.platformAddress, states: ['eligible', 'afterInput'], bookmark: page.bookmark },
        }),
      );
    }
    return page;
  }, run);
  useEffect(() => {
    void list.load();
  }, [session.platformAddress]);
  return (
    <section class="card" aria-labelledby="eligible-title" aria-busy={busy}>
      <h1 id="eligible-title">What can I claim?</h1>
      <p>
        Claims your wallet <code>{session.address}</code> can claim now, or after entering a password or a code. Each
        answer is the check the claim itself makes; open a claim to claim it.
      </p>
      {list.docs === null ? (
        <p>Checking the claims…</p>
      ) : list.docs.length === 0 ? (
        <p>Nothing to claim right now.</p>
      ) : (
        <ul class="eligible-list" aria-label="Claims you can claim">
          {list.docs.map((d) => (
            <li key={d.claimId}>
              <a href={`/claim/${encodeURIComponent(d.claimId)}`}>{d.name || d.claimId}</a>{' '}
              <span class={d.state === 'eligible' ? 'ok' : 'muted'}>
                {d.state === 'eligible' ? 'Eligible now' : inputsText(d)}
              </span>
            </li>
          ))}
        </ul>
      )}
      <MoreButton list={list} label="Check more claims" />
      <button type="button" class="secondary" disabled={busy} onClick={() => void list.load()}>
        Check again
      </button>
      <ErrorLine error={error} />
    </section>
  );
}
