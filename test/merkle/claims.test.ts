// On-chain claims over HTTP: reserved codes with leaf signatures, the status route's `code`, and
// merkle proofs. Every answer is rebuilt independently: codes from the claim's seed with
// node:crypto, roots and proofs with merkletreejs, the chain's check written out below, and the
// signatures recovered with viem.
import { after, before, describe, test } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { MerkleTree as ReferenceTree } from 'merkletreejs';
import { recoverMessageAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { collectionDoc, startFakeChain, type FakeChain } from '../helpers/fake-chain.ts';
import { signIn, type SignedIn } from '../helpers/signin.ts';
import { toPlatformAddress, tryParseAddress } from '../../src/shared/addresses.ts';
import { merkleService } from '../../src/merkle/service.ts';
import { PATIENCE_MS } from '../helpers/patience.ts';

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
const sha256Hex = (data: string) => sha256(data).toString('hex');
const codeOf = (seed: string, i: number) => `${sha256Hex(`${seed}-${i}`)}-${i}`;
const randomAddress = () => toPlatformAddress(randomBytes(20));
let seq = 0;
const newId = (p: string) => `${p}${Date.now().toString(36)}${seq++}${randomBytes(3).toString('hex')}`;

interface Step {
  aunt: string;
  onRight: boolean;
}
interface Details {
  proofObj: Step[];
  isValidProof: boolean;
  leafIndex: number;
  leaf: string;
}

/** The chain's CheckMerklePath + GetLeafIndex, written from their description. */
function chainAccepts(leafPreimage: string, aunts: Step[], root: string, expectedProofLength: number): number {
  assert.equal(aunts.length, expectedProofLength, 'proof length');
  let current = sha256(leafPreimage);
  for (const { aunt, onRight } of aunts) {
    const a = Buffer.from(aunt, 'hex');
    current = sha256(onRight ? Buffer.concat([current, a]) : Buffer.concat([a, current]));
  }
  assert.equal(current.toString('hex'), root, 'root');
  let x = 1;
  for (let i = aunts.length - 1; i >= 0; i--) x = aunts[i].onRight ? 2 * x : 2 * x + 1;
  return x - 2 ** expectedProofLength;
}

function referenceTree(leafPreimages: string[]) {
  return new ReferenceTree(
    leafPreimages.map((p) => sha256(p)),
    sha256,
    { fillDefaultHash: Buffer.alloc(32) },
  );
}

describe('on-chain claims: reserved codes, leaf signatures, merkle proofs', () => {
  let creator: SignedIn;
  const leafSignerKey = generatePrivateKey();
  const leafSigner = privateKeyToAccount(leafSignerKey).address;

  // Linking a claim to an approval needs the chain to name the caller as its manager.
  let chain: FakeChain;
  before(async () => {
    chain = await startFakeChain();
  });
  const t = useApp({ env: () => ({ LEAF_SIGNER_KEY: leafSignerKey, CHAIN_REST_URL: chain.url }) });
  before(async () => {
    creator = await signIn(t);
    chain.setCollection('42', collectionDoc('42', creator.platformAddress), chain.height);
  });
  after(() => chain.close());

  const tracker = (over: Record<string, unknown> = {}) => ({
    collectionId: '42',
    approvalId: 'mint-codes',
    challengeTrackerId: newId('ct'),
    approvalLevel: 'collection',
    approverAddress: '',
    ...over,
  });

  async function createClaim(claim: Record<string, unknown>): Promise<void> {
    const res = await t.request('POST', '/api/v0/claims', { token: creator.accessToken, body: { claims: [claim] } });
    assert.equal(res.statusCode, 200, res.body);
  }

  async function onChainCodeClaim(maxUses: number, trackerDetails = tracker(), extraPlugins: unknown[] = []) {
    const claimId = newId('oc');
    await createClaim({
      claimId,
      collectionId: trackerDetails.collectionId,
      trackerDetails,
      plugins: [
        { pluginId: 'numUses', instanceId: 'numUses', publicParams: { maxUses }, privateParams: {} },
        ...extraPlugins,
      ],
      metadata: { name: 'On-chain codes' },
    });
    return { claimId, trackerDetails };
  }

  async function claimDoc(claimId: string) {
    const res = await t.request('GET', `/api/v0/claim/${claimId}?fetchPrivateParams=true`, {
      token: creator.accessToken,
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().claim as { _seedCode?: string; version: string };
  }

  async function complete(claimId: string, address: string): Promise<string> {
    const res = await t.request('POST', `/api/v0/claims/complete/${claimId}/${address}`, {
      body: { _expectedVersion: -1 },
    });
    assert.equal(res.statusCode, 200, res.body);
    const { claimAttemptId } = res.json();
    const until = Date.now() + PATIENCE_MS;
    for (;;) {
      const s = await t.request('GET', `/api/v0/claims/status/${claimAttemptId}`);
      if (s.json().success !== undefined) {
        assert.equal(s.json().success, true, s.body);
        return claimAttemptId;
      }
      if (Date.now() > until) throw new Error('attempt did not resolve');
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  const reserved = (
    claimId: string,
    address: string,
    opts: { token?: string; expectedVersion?: number; body?: unknown } = {},
  ) =>
    t.request('POST', `/api/v0/claims/reserved/${claimId}/${address}`, {
      ...(opts.token ? { token: opts.token } : {}),
      body: opts.body ?? { _expectedVersion: opts.expectedVersion ?? -1 },
    });

  const proofs = (trackerDetails: Record<string, unknown>, rest: Record<string, unknown>) =>
    t.request('POST', '/api/v0/merkleProofInfo', { body: { ...trackerDetails, ...rest } });

  test('reserved codes of an address that won several times come back in claim-number order, each signed', async () => {
    const { claimId } = await onChainCodeClaim(10);
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    // The claimer wins claim numbers 0, 2 and 3; someone else wins 1 and 4.
    for (const who of [
      claimer.platformAddress,
      randomAddress(),
      claimer.address,
      claimer.platformAddress,
      randomAddress(),
    ])
      await complete(claimId, who);
    const seed = (await claimDoc(claimId))._seedCode;
    assert.match(seed ?? '', /^[0-9a-f]{64}$/);

    const res = await reserved(claimId, claimer.platformAddress, { token: claimer.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    const { reservedCodes, leafSignatures } = res.json() as { reservedCodes: string[]; leafSignatures: string[] };
    assert.deepEqual(
      reservedCodes,
      [0, 2, 3].map((n) => codeOf(seed!, n)),
    );
    assert.equal(leafSignatures.length, 3);
    for (const [i, signature] of leafSignatures.entries()) {
      assert.match(signature, /^0x[0-9a-f]{130}$/);
      assert.equal(
        await recoverMessageAddress({
          message: `${reservedCodes[i]}-${claimer.platformAddress}`,
          signature: signature as `0x${string}`,
        }),
        leafSigner,
      );
    }
    // the signer route names the same key
    assert.equal((await t.request('GET', '/api/v0/merkle/leafSigner')).json().leafSigner, leafSigner);

    // the 0x form of the path address names the same user
    const again = await reserved(claimId, claimer.address, { token: claimer.accessToken });
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json().reservedCodes, reservedCodes);

    // the codes prove against the tree, at their claim numbers
    const challenge = (await t.request('GET', `/api/v0/merkle/challenge/${claimId}`)).json();
    const reference = referenceTree(Array.from({ length: 10 }, (_, i) => codeOf(seed!, i)));
    assert.equal(challenge.root, reference.getRoot().toString('hex'));
    assert.equal(challenge.expectedProofLength, reference.getLayers().length - 1);
    assert.equal(challenge.leafSigner, leafSigner);
    assert.equal(challenge.maxUsesPerLeaf, 1);
    assert.equal(challenge.leafCount, 10);
  });

  test('an address that won nothing gets empty arrays', async () => {
    const { claimId } = await onChainCodeClaim(3);
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    const res = await reserved(claimId, claimer.platformAddress, { token: claimer.accessToken });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { reservedCodes: [], leafSignatures: [] });
  });

  test('reserved codes need a session for that address with completeClaims, and the right version', async () => {
    const { claimId } = await onChainCodeClaim(3);
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    await complete(claimId, claimer.platformAddress);
    const version = Number((await claimDoc(claimId)).version);

    assert.equal((await reserved(claimId, claimer.platformAddress)).statusCode, 401);
    const other = await signIn(t, { scopes: ['completeClaims'] });
    assert.equal((await reserved(claimId, claimer.platformAddress, { token: other.accessToken })).statusCode, 403);
    const noScope = await signIn(t, { privateKey: claimer.privateKey, scopes: ['readPrivateClaimData'] });
    assert.equal((await reserved(claimId, claimer.platformAddress, { token: noScope.accessToken })).statusCode, 403);

    const stale = await reserved(claimId, claimer.platformAddress, {
      token: claimer.accessToken,
      expectedVersion: version + 1,
    });
    assert.equal(stale.statusCode, 409, stale.body);
    const current = await reserved(claimId, claimer.platformAddress, {
      token: claimer.accessToken,
      expectedVersion: version,
    });
    assert.equal(current.statusCode, 200, current.body);
    assert.equal(current.json().reservedCodes.length, 1);

    const missing = await reserved(claimId, claimer.platformAddress, { token: claimer.accessToken, body: {} });
    assert.equal(missing.statusCode, 400);
    assert.match(missing.json().errorMessage, /_expectedVersion/);
    assert.equal((await reserved(claimId, 'not-an-address', { token: claimer.accessToken })).statusCode, 400);
    assert.equal(
      (await reserved(newId('missing'), claimer.platformAddress, { token: claimer.accessToken })).statusCode,
      404,
    );
  });

  test('claims that are not on-chain get a clear 400', async () => {
    const claimId = newId('off');
    await createClaim({
      claimId,
      plugins: [{ pluginId: 'numUses', instanceId: 'numUses', publicParams: { maxUses: 3 }, privateParams: {} }],
      metadata: { name: 'Off-chain' },
    });
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    await complete(claimId, claimer.platformAddress);
    const res = await reserved(claimId, claimer.platformAddress, { token: claimer.accessToken });
    assert.equal(res.statusCode, 400);
    assert.equal(
      res.json().errorMessage,
      'Invalid configuration. Reserved codes can only be fetched for on-chain claims.',
    );
  });

  test("the status route's code appears only for permitted readers", async () => {
    const { claimId } = await onChainCodeClaim(5);
    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    await complete(claimId, randomAddress()); // claim number 0 goes to someone else
    const attemptId = await complete(claimId, claimer.platformAddress); // claim number 1
    const seed = (await claimDoc(claimId))._seedCode!;
    const statusAs = async (token?: string) =>
      (await t.request('GET', `/api/v0/claims/status/${attemptId}`, token ? { token } : {})).json();

    assert.equal((await statusAs(claimer.accessToken)).code, codeOf(seed, 1));
    const reservedCodes = (await reserved(claimId, claimer.platformAddress, { token: claimer.accessToken })).json()
      .reservedCodes;
    assert.deepEqual(reservedCodes, [codeOf(seed, 1)]);
    assert.equal((await statusAs(creator.accessToken)).code, codeOf(seed, 1)); // creator with readPrivateClaimData

    const anonymous = await statusAs();
    assert.equal(anonymous.success, true);
    assert.equal('code' in anonymous, false);
    const stranger = await signIn(t, { scopes: ['completeClaims', 'readPrivateClaimData'] });
    assert.equal('code' in (await statusAs(stranger.accessToken)), false);
    const claimerWithoutScope = await signIn(t, { privateKey: claimer.privateKey, scopes: ['readPrivateClaimData'] });
    assert.equal('code' in (await statusAs(claimerWithoutScope.accessToken)), false);
  });

  test('merkleProofInfo answers proofs the chain accepts, the same as merkletreejs', async () => {
    const maxUses = 13;
    const { claimId, trackerDetails } = await onChainCodeClaim(maxUses);
    const seed = (await claimDoc(claimId))._seedCode!;
    const codes = Array.from({ length: maxUses }, (_, i) => codeOf(seed, i));
    const reference = referenceTree(codes);
    const root = reference.getRoot().toString('hex');
    const depth = reference.getLayers().length - 1;

    const res = await proofs(trackerDetails, { leaves: codes.map(sha256Hex), claimCodes: codes });
    assert.equal(res.statusCode, 200, res.body);
    const { allProofDetails } = res.json() as { allProofDetails: Details[] };
    assert.equal(allProofDetails.length, maxUses);
    for (const [i, d] of allProofDetails.entries()) {
      assert.equal(d.isValidProof, true);
      assert.equal(d.leafIndex, i);
      assert.equal(d.leaf, sha256Hex(codes[i]));
      assert.deepEqual(
        d.proofObj,
        reference
          .getProof(sha256(codes[i]), i)
          .map((p) => ({ aunt: p.data.toString('hex'), onRight: p.position === 'right' })),
      );
      assert.equal(chainAccepts(codes[i], d.proofObj, root, depth), i);
    }

    // a code past maxUses, or of another seed, is not in the tree: no proof, never a wrong one
    const outside = [codeOf(seed, maxUses), codeOf('other-seed', 0)];
    const none = await proofs(trackerDetails, { leaves: outside.map(sha256Hex), claimCodes: outside });
    assert.equal(none.statusCode, 200, none.body);
    for (const [i, d] of (none.json().allProofDetails as Details[]).entries()) {
      assert.deepEqual(d, { proofObj: [], isValidProof: false, leafIndex: -1, leaf: sha256Hex(outside[i]) });
    }
  });

  test('merkleProofInfo refuses bad requests, naming the field', async () => {
    const { claimId, trackerDetails } = await onChainCodeClaim(4);
    const seed = (await claimDoc(claimId))._seedCode!;
    const code = codeOf(seed, 2);

    const noCodes = await proofs(trackerDetails, { leaves: [sha256Hex(code)] });
    assert.equal(noCodes.statusCode, 400);
    assert.match(noCodes.json().errorMessage, /claimCodes is required/);
    const mismatch = await proofs(trackerDetails, { leaves: [sha256Hex(code)], claimCodes: [codeOf(seed, 3)] });
    assert.equal(mismatch.statusCode, 400);
    assert.match(mismatch.json().errorMessage, /claimCodes\[0\]/);
    const notHex = await proofs(trackerDetails, { leaves: ['xyz'], claimCodes: [code] });
    assert.equal(notHex.statusCode, 400);
    assert.match(notHex.json().errorMessage, /leaves/);
    const level = await proofs(
      { ...trackerDetails, approvalLevel: 'sideways' },
      { leaves: [sha256Hex(code)], claimCodes: [code] },
    );
    assert.equal(level.statusCode, 400);
    assert.match(level.json().errorMessage, /approvalLevel/);
    const unknown = await proofs(
      { ...trackerDetails, challengeTrackerId: 'nope' },
      { leaves: [sha256Hex(code)], claimCodes: [code] },
    );
    assert.equal(unknown.statusCode, 404);
    const extra = await proofs(trackerDetails, { leaves: [sha256Hex(code)], claimCodes: [code], surprise: 1 });
    assert.equal(extra.statusCode, 400);
    assert.equal(
      (
        await t.request('POST', '/api/v0/merkleProofInfo', {
          apiKey: null,
          body: { ...trackerDetails, leaves: [sha256Hex(code)], claimCodes: [code] },
        })
      ).statusCode,
      401,
    );
  });

  test('a claim with more codes than a chain proof can cover gets a 400, not a giant tree', async () => {
    const { claimId, trackerDetails } = await onChainCodeClaim(2 ** 20 + 1);
    const seed = (await claimDoc(claimId))._seedCode!;
    const code = codeOf(seed, 0);
    const res = await proofs(trackerDetails, { leaves: [sha256Hex(code)], claimCodes: [code] });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /maxUses is 1048577; a merkle challenge can hold at most 1048576 leaves/);
    assert.equal((await t.request('GET', `/api/v0/merkle/challenge/${claimId}`)).statusCode, 400);
  });

  test('outgoing approvals: the approver address is matched in either form', async () => {
    const approver = tryParseAddress(creator.platformAddress)!; // only the approver may link its approval
    const trackerDetails = tracker({ approvalLevel: 'outgoing', approverAddress: approver.platformAddress });
    const { claimId } = await onChainCodeClaim(2, trackerDetails);
    const seed = (await claimDoc(claimId))._seedCode!;
    const code = codeOf(seed, 1);
    const res = await proofs(
      { ...trackerDetails, approverAddress: approver.evmAddress },
      { leaves: [sha256Hex(code)], claimCodes: [code] },
    );
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().allProofDetails[0].leafIndex, 1);
  });

  test('address trees: leaves are sha256 of the whitelist addresses, and platformAddress is required', async () => {
    const addresses = Array.from({ length: 6 }, randomAddress);
    const trackerDetails = tracker();
    const claimId = newId('addr');
    await createClaim({
      claimId,
      collectionId: trackerDetails.collectionId,
      trackerDetails,
      useCreatorAddressAsLeaf: true,
      plugins: [
        { pluginId: 'numUses', instanceId: 'numUses', publicParams: { maxUses: 6 }, privateParams: {} },
        {
          pluginId: 'whitelist',
          instanceId: 'wl',
          publicParams: { list: { addresses, whitelist: true } },
          privateParams: {},
        },
      ],
      metadata: { name: 'Address leaves' },
    });
    const reference = referenceTree(addresses);
    const root = reference.getRoot().toString('hex');
    const challenge = (await t.request('GET', `/api/v0/merkle/challenge/${claimId}`)).json();
    assert.equal(challenge.root, root);
    assert.equal(challenge.useCreatorAddressAsLeaf, true);

    for (const [i, address] of addresses.entries()) {
      const evm = tryParseAddress(address)!.evmAddress;
      const res = await proofs(trackerDetails, {
        leaves: [sha256Hex(address)],
        platformAddress: i % 2 ? evm : address,
      });
      assert.equal(res.statusCode, 200, res.body);
      const d = res.json().allProofDetails[0] as Details;
      assert.equal(d.isValidProof, true);
      assert.equal(d.leafIndex, i);
      assert.equal(chainAccepts(address, d.proofObj, root, reference.getLayers().length - 1), i);
    }
    const stranger = randomAddress();
    const outside = await proofs(trackerDetails, { leaves: [sha256Hex(stranger)], platformAddress: stranger });
    assert.equal(outside.statusCode, 200, outside.body);
    assert.equal(outside.json().allProofDetails[0].isValidProof, false);

    const noAddress = await proofs(trackerDetails, { leaves: [sha256Hex(addresses[0])] });
    assert.equal(noAddress.statusCode, 400);
    assert.match(noAddress.json().errorMessage, /platformAddress is required/);
    const otherLeaf = await proofs(trackerDetails, {
      leaves: [sha256Hex(addresses[1])],
      platformAddress: addresses[0],
    });
    assert.equal(otherLeaf.statusCode, 400);
    assert.match(otherLeaf.json().errorMessage, /leaves\[0\]/);

    const claimer = await signIn(t, { scopes: ['completeClaims'] });
    const res = await reserved(claimId, claimer.platformAddress, { token: claimer.accessToken });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().errorMessage, /address leaves/);
  });

  test('trees are built once per claim version, and rebuilt when the claim changes', async () => {
    const { claimId, trackerDetails } = await onChainCodeClaim(6);
    const seed = (await claimDoc(claimId))._seedCode!;
    const trees = merkleService(t.ctx).trees;
    const code = codeOf(seed, 5);
    const ask = () => proofs(trackerDetails, { leaves: [sha256Hex(code)], claimCodes: [code] });

    const before = trees.builds;
    const answers = await Promise.all([ask(), ask(), ask()]);
    for (let i = 0; i < 5; i++) answers.push(await ask());
    assert.equal(trees.builds, before + 1);
    for (const a of answers) assert.deepEqual(a.json(), answers[0].json());
    const root6 = (await t.request('GET', `/api/v0/merkle/challenge/${claimId}`)).json().root;
    assert.equal(trees.builds, before + 1);

    // maxUses 6 -> 5: code 5 leaves the tree, the root changes
    const update = await t.request('PUT', '/api/v0/claims', {
      token: creator.accessToken,
      body: {
        claims: [
          {
            claimId,
            plugins: [{ pluginId: 'numUses', instanceId: 'numUses', publicParams: { maxUses: 5 }, privateParams: {} }],
          },
        ],
      },
    });
    assert.equal(update.statusCode, 200, update.body);
    const after = await ask();
    assert.equal(trees.builds, before + 2);
    assert.equal(after.json().allProofDetails[0].isValidProof, false);
    const root5 = (await t.request('GET', `/api/v0/merkle/challenge/${claimId}`)).json().root;
    assert.notEqual(root5, root6);
    assert.equal(
      root5,
      referenceTree(Array.from({ length: 5 }, (_, i) => codeOf(seed, i)))
        .getRoot()
        .toString('hex'),
    );
  });
});
