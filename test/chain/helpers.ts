// Shared pieces of the chain tests: an app indexing a fake chain, and waiting for the indexer
// through the public surface (/readyz details).
import assert from 'node:assert/strict';
import { startApp, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

export async function startIndexedApp(
  opts: { env?: Record<string, string>; database?: TestDatabase; chain?: FakeChain } = {},
): Promise<{ t: TestApp; chain: FakeChain }> {
  const chain = opts.chain ?? (await startFakeChain());
  const t = await startApp({
    database: opts.database,
    env: { CHAIN_REST_URL: chain.url, CHAIN_POLL_INTERVAL_MS: '100', CHAIN_TIMEOUT_MS: '2000', ...opts.env },
  });
  return { t, chain };
}

export interface ReadyDetails {
  indexedHeight: number;
  chainHeight: number;
  lag: number;
  updatedAt: number;
}

export async function indexerDetails(t: TestApp): Promise<ReadyDetails | undefined> {
  const res = await t.request('GET', '/readyz', { apiKey: null });
  assert.equal(res.statusCode, 200);
  return res.json().details?.chainIndexer;
}

/** Waits until /readyz reports `height` indexed (the indexer polls every 100 ms in tests). */
export async function waitIndexed(t: TestApp, height: number, timeoutMs = PATIENCE_MS): Promise<ReadyDetails> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = await indexerDetails(t);
    if (d && d.indexedHeight >= height) return d;
    if (Date.now() > until)
      throw new Error(`indexer did not reach height ${height} within ${timeoutMs} ms (at ${JSON.stringify(d)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function collectionsRequest(t: TestApp, collectionsToFetch: unknown[]) {
  return t.request('POST', '/api/v0/collections', { body: { collectionsToFetch } });
}

/** Fetches one view page of one collection through POST /api/v0/collections. */
export async function viewPage(
  t: TestApp,
  collectionId: string,
  view: { viewType: string; bookmark?: string; oldestFirst?: boolean; address?: string },
) {
  const res = await collectionsRequest(t, [{ collectionId, viewsToFetch: [{ viewId: 'v', bookmark: '', ...view }] }]);
  assert.equal(res.statusCode, 200, res.body);
  const c = res.json().collections[0];
  return {
    collection: c,
    view: c.views.v as { ids: string[]; type: string; pagination: { bookmark: string; hasMore: boolean } },
  };
}
