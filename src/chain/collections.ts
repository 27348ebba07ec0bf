// `POST /api/v0/collections` (docs/chain-data.md): each requested collection with the pages of the views
// it asks for. Documents land in the array of their type, `views[viewId]` lists their `_docId`s
// with the page's bookmark (reference note §6.2). Market views are empty pages: see docs/chain-data.md.
import type { AppContext } from '../context.ts';
import { badRequest } from '../shared/errors.ts';
import { emptyPage, type Page } from '../shared/pagination.ts';
import {
  amountTrackersView,
  challengeTrackersView,
  checkCollectionId,
  collectionActivityView,
  getCollection,
  ownersView,
  type Doc,
  type ViewOptions,
} from './views.ts';

export const MAX_COLLECTIONS_PER_REQUEST = 250;

export interface ViewRequest {
  viewType: string;
  viewId: string;
  bookmark: string;
  oldestFirst?: boolean;
  address?: string;
}

export interface CollectionRequest {
  collectionId: string;
  viewsToFetch?: ViewRequest[];
}

/** Marketplace data the chain does not hold: served as empty pages (see docs/chain-data.md). */
const marketView =
  (viewType: string) =>
  (ctx: AppContext, id: string, o: ViewOptions): Promise<Page<Doc>> =>
    Promise.resolve(emptyPage<Doc>(ctx.keyring, `chain:${viewType}:${id}`, o.bookmark));

type ViewArray = 'owners' | 'activity' | 'approvalTrackers' | 'challengeTrackers' | 'listings' | 'tokenFloorPrices';

/** viewType → the response array its documents go to, and the view itself. */
export const COLLECTION_VIEWS: Record<
  string,
  { array: ViewArray; run: (ctx: AppContext, id: string, o: ViewOptions) => Promise<Page<Doc>> }
> = {
  owners: { array: 'owners', run: ownersView },
  transferActivity: { array: 'activity', run: collectionActivityView },
  amountTrackers: { array: 'approvalTrackers', run: amountTrackersView },
  challengeTrackers: { array: 'challengeTrackers', run: challengeTrackersView },
  listings: { array: 'listings', run: marketView('listings') },
  tokenFloorPrices: { array: 'tokenFloorPrices', run: marketView('tokenFloorPrices') },
};

export function checkViewType(viewType: string, field: string): void {
  if (!Object.hasOwn(COLLECTION_VIEWS, viewType))
    throw badRequest(
      `${field} "${viewType}" is unknown; collection views are ${Object.keys(COLLECTION_VIEWS).join(', ')}`,
    );
}

export interface ViewPage {
  ids: string[];
  type: string;
  pagination: { bookmark: string; hasMore: boolean };
}

/** The arrays views fill, present (empty) on every collection: the reference client maps each one. */
const emptyArrays = (): Record<ViewArray | 'claims', Doc[]> => ({
  activity: [],
  owners: [],
  challengeTrackers: [],
  approvalTrackers: [],
  listings: [],
  tokenFloorPrices: [],
  claims: [],
});

/** A collection document as the reference client reads it: with every view array, no view pages. */
export function withViewArrays(doc: Doc): Record<string, unknown> {
  return { ...doc, ...emptyArrays(), views: {} };
}

/** The collection with its requested view pages, or null when the read model has no such collection. */
export async function fetchCollection(
  ctx: AppContext,
  req: CollectionRequest,
): Promise<Record<string, unknown> | null> {
  const doc = await getCollection(ctx, req.collectionId);
  if (!doc) return null;
  const arrays: Record<string, Doc[]> = emptyArrays();
  const views: Record<string, ViewPage> = {};
  for (const v of req.viewsToFetch ?? []) {
    const view = COLLECTION_VIEWS[v.viewType];
    const page = await view.run(ctx, req.collectionId, {
      bookmark: v.bookmark,
      oldestFirst: v.oldestFirst,
      address: v.address,
    });
    const target = arrays[view.array];
    for (const d of page.docs) if (!target.some((x) => x._docId === d._docId)) target.push(d);
    views[v.viewId] = {
      ids: page.docs.map((d) => d._docId),
      type: v.viewType,
      pagination: { bookmark: page.bookmark, hasMore: page.hasMore },
    };
  }
  return { ...doc, ...arrays, views };
}

/** Validates the whole request first (a bad view anywhere is a 400 before any work). */
export async function fetchCollections(
  ctx: AppContext,
  requests: CollectionRequest[],
): Promise<(Record<string, unknown> | null)[]> {
  if (requests.length > MAX_COLLECTIONS_PER_REQUEST)
    throw badRequest(
      `collectionsToFetch holds ${requests.length} collections; at most ${MAX_COLLECTIONS_PER_REQUEST} per request`,
    );
  requests.forEach((r, i) => {
    checkCollectionId(r.collectionId, `collectionsToFetch[${i}].collectionId`);
    const ids = new Set<string>();
    (r.viewsToFetch ?? []).forEach((v, j) => {
      checkViewType(v.viewType, `collectionsToFetch[${i}].viewsToFetch[${j}].viewType`);
      if (ids.has(v.viewId))
        throw badRequest(
          `collectionsToFetch[${i}].viewsToFetch[${j}].viewId "${v.viewId}" is used twice for one collection`,
        );
      ids.add(v.viewId);
    });
  });
  const out: (Record<string, unknown> | null)[] = [];
  for (const r of requests) out.push(await fetchCollection(ctx, r));
  return out;
}
