// Linking wallets to an account over HTTP: the challenge message, an EIP-191 and an ADR-36 link,
// the list from both sides, unlinking; and the refusals: a forged signature, a replayed message, an
// expired one, another account's request, the same address linked twice (to the same account, to
// another, in a race of two signed messages), links more than one level deep.
import { describe, test, before } from 'node:test';
import { useApp } from '../helpers/use-app.ts';
import assert from 'node:assert/strict';
import { signIn, testAccount, type SignedIn } from '../helpers/signin.ts';
import type { ManualClock } from '../../src/shared/clock.ts';
import { challenge, challengeOk, link, linkEvm, list, nativeWallet, PATH, signEvm, unlinkReq } from './helpers.ts';

describe('linked wallets: linking and unlinking', () => {
  let clock: ManualClock;
  let account: SignedIn;
  const t = useApp({ clock: true });
  before(async () => {
    clock = t.clock as ManualClock;
    account = await signIn(t);
  });

  test('the message names the wallet, the account, a nonce and an expiry; the link answers and lists', async () => {
    const wallet = testAccount();
    const { requestId, message, expiresAt } = await challengeOk(t, account.accessToken, wallet.address);
    const lines = message.split('\n');
    const origin = `http://127.0.0.1:${t.config.port}`;
    assert.equal(lines[0], `${origin} wants you to sign in with your Ethereum account:`);
    assert.equal(lines[1], wallet.address);
    assert.equal(
      lines[3],
      `Link this wallet to the account ${account.address} on 127.0.0.1:${t.config.port}. Each address keeps its own identity; claims that combine linked wallets may count their holdings together. Sign only if you asked for this link yourself.`,
    );
    assert.equal(lines[5], `URI: ${origin}${PATH}`);
    assert.match(lines[8], /^Nonce: [0-9a-f]{32}$/);
    assert.equal(lines[10], `Expiration Time: ${new Date(Number(expiresAt)).toISOString()}`);
    assert.equal(Number(expiresAt), clock.now() + 600_000);
    assert.equal(lines[11], `Request ID: ${requestId}`);

    const res = await link(t, account.accessToken, { requestId, signature: await signEvm(wallet.privateKey, message) });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      linkedWallet: {
        address: wallet.address,
        platformAddress: wallet.platformAddress,
        chain: 'ETH',
        linkedAt: String(clock.now()),
      },
    });
    assert.deepEqual(await list(t, account.accessToken), {
      account: account.platformAddress,
      linkedTo: null,
      linkedWallets: [res.json().linkedWallet],
    });
    // the wallet keeps its own identity: signed in, it is its own account, linked to the first
    const own = await signIn(t, { privateKey: wallet.privateKey });
    assert.equal(own.platformAddress, wallet.platformAddress);
    assert.deepEqual(await list(t, own.accessToken), {
      account: wallet.platformAddress,
      linkedTo: account.platformAddress,
      linkedWallets: [],
    });

    // replayed: the same signed message is accepted once
    const again = await link(t, account.accessToken, {
      requestId,
      signature: await signEvm(wallet.privateKey, message),
    });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), {
      errorMessage: 'This link request was already used: each link message is accepted once. Ask for a new one.',
    });

    // unlinking is one call; then nothing is left to unlink
    const gone = await unlinkReq(t, account.accessToken, wallet.address);
    assert.equal(gone.statusCode, 200, gone.body);
    assert.deepEqual(gone.json(), {});
    assert.deepEqual((await list(t, account.accessToken)).linkedWallets, []);
    assert.equal((await list(t, own.accessToken)).linkedTo, null);
    const twice = await unlinkReq(t, account.accessToken, wallet.address);
    assert.equal(twice.statusCode, 404);
    assert.deepEqual(twice.json(), { errorMessage: `No wallet ${wallet.address} is linked to this account.` });
  });

  test('a native wallet links with its ADR-36 signature; another account cannot unlink it', async () => {
    const wallet = nativeWallet();
    const { requestId, message } = await challengeOk(t, account.accessToken, wallet.address);
    assert.equal(
      message.split('\n')[0],
      `http://127.0.0.1:${t.config.port} wants you to sign in with your Cosmos account:`,
    );
    assert.equal(message.split('\n')[1], wallet.address);
    const { signature } = wallet.sign(message);
    const noKey = await link(t, account.accessToken, { requestId, signature });
    assert.equal(noKey.statusCode, 400);
    assert.deepEqual(noKey.json(), {
      errorMessage: 'publicKey is required for a native address: ADR-36 signatures carry no recovery id.',
    });
    const res = await link(t, account.accessToken, { requestId, ...wallet.sign(message) });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json().linkedWallet, {
      address: wallet.address,
      platformAddress: wallet.address,
      chain: 'Cosmos',
      linkedAt: String(clock.now()),
    });
    assert.deepEqual(
      (await list(t, account.accessToken)).linkedWallets.map((l) => l.address),
      [wallet.address],
    );
    const other = await signIn(t);
    const foreign = await unlinkReq(t, other.accessToken, wallet.address);
    assert.equal(foreign.statusCode, 404, 'another account cannot unlink it');
    assert.deepEqual(foreign.json(), { errorMessage: `No wallet ${wallet.address} is linked to this account.` });
    assert.equal((await unlinkReq(t, account.accessToken, wallet.address)).statusCode, 200);
    assert.deepEqual((await list(t, account.accessToken)).linkedWallets, []);
  });

  test('a forged signature, an expired message and another account’s request are refused', async () => {
    const wallet = testAccount();
    const forger = testAccount();
    const { requestId, message } = await challengeOk(t, account.accessToken, wallet.address);
    const forged = await link(t, account.accessToken, {
      requestId,
      signature: await signEvm(forger.privateKey, message),
    });
    assert.equal(forged.statusCode, 401);
    assert.deepEqual(forged.json(), {
      errorMessage: `Signature does not match the link message for ${wallet.address}.`,
      unauthorized: true,
    });
    // the account's own key does not prove the wallet either
    const ownKey = await link(t, account.accessToken, {
      requestId,
      signature: await signEvm(account.privateKey, message),
    });
    assert.equal(ownKey.statusCode, 401);
    // a signature of another text (the message with another nonce) proves nothing
    const altered = message.replace(/Nonce: [0-9a-f]+/, `Nonce: ${'0'.repeat(32)}`);
    assert.equal(
      (await link(t, account.accessToken, { requestId, signature: await signEvm(wallet.privateKey, altered) }))
        .statusCode,
      401,
    );

    // another account cannot use the request, even with the wallet's valid signature
    const other = await signIn(t);
    const stolen = await link(t, other.accessToken, {
      requestId,
      signature: await signEvm(wallet.privateKey, message),
    });
    assert.equal(stolen.statusCode, 403);
    assert.deepEqual(stolen.json(), { errorMessage: 'This link request was made by another account.' });

    // expired: the wallet's valid signature after the expiry is refused
    clock.advance(600_000);
    const late = await link(t, account.accessToken, {
      requestId,
      signature: await signEvm(wallet.privateKey, message),
    });
    assert.equal(late.statusCode, 400);
    assert.deepEqual(late.json(), {
      errorMessage:
        'This link request has expired (a link message must be signed within 10 minutes). Ask for a new one.',
    });
    assert.deepEqual((await list(t, account.accessToken)).linkedWallets, []);

    const unknown = await link(t, account.accessToken, { requestId: 'f'.repeat(32), signature: '0x00' });
    assert.equal(unknown.statusCode, 404);
    assert.deepEqual(unknown.json(), { errorMessage: 'Unknown link request. Ask for a new link challenge.' });
  });

  test('an address is linked to one account at a time, one level deep', async () => {
    const a = await signIn(t);
    const b = await signIn(t);
    const wallet = testAccount();
    // two messages signed while the wallet was free: only the first link is made
    const first = await challengeOk(t, a.accessToken, wallet.address);
    const second = await challengeOk(t, b.accessToken, wallet.address);
    const sigSecond = await signEvm(wallet.privateKey, second.message);
    await link(t, a.accessToken, {
      requestId: first.requestId,
      signature: await signEvm(wallet.privateKey, first.message),
    }).then((r) => assert.equal(r.statusCode, 200, r.body));
    const race = await link(t, b.accessToken, { requestId: second.requestId, signature: sigSecond });
    assert.equal(race.statusCode, 409);
    assert.deepEqual(race.json(), {
      errorMessage: `${wallet.address} is already linked to another account: it must be unlinked there first.`,
    });

    const sameAgain = await challenge(t, a.accessToken, wallet.address);
    assert.equal(sameAgain.statusCode, 409);
    assert.deepEqual(sameAgain.json(), { errorMessage: `${wallet.address} is already linked to this account.` });
    // the native form of the same address is the same address
    const native = await challenge(t, a.accessToken, wallet.platformAddress);
    assert.deepEqual(native.json(), { errorMessage: `${wallet.platformAddress} is already linked to this account.` });
    const elsewhere = await challenge(t, b.accessToken, wallet.address);
    assert.equal(elsewhere.statusCode, 409);
    assert.deepEqual(elsewhere.json(), {
      errorMessage: `${wallet.address} is already linked to another account: it must be unlinked there first.`,
    });

    const self = await challenge(t, a.accessToken, a.address);
    assert.equal(self.statusCode, 400);
    assert.deepEqual(self.json(), { errorMessage: `${a.address} is the address of this account itself.` });

    // one level deep: an account with links is not linked elsewhere, a linked wallet links nothing
    const intoB = await challenge(t, b.accessToken, a.address);
    assert.equal(intoB.statusCode, 409);
    assert.deepEqual(intoB.json(), {
      errorMessage: `${a.address} has wallets linked to it: links are one level deep, so unlink those first.`,
    });
    const walletSession = await signIn(t, { privateKey: wallet.privateKey });
    const fromLinked = await challenge(t, walletSession.accessToken, testAccount().address);
    assert.equal(fromLinked.statusCode, 409);
    assert.deepEqual(fromLinked.json(), {
      errorMessage: `This address is itself linked to the account ${a.platformAddress}: link further wallets from that account.`,
    });

    // after unlinking, the other account may link it (with a new message)
    assert.equal((await unlinkReq(t, walletSession.accessToken, walletSession.address)).statusCode, 200);
    const moved = await linkEvm(t, b.accessToken, { privateKey: wallet.privateKey, address: wallet.address });
    assert.equal(moved.platformAddress, wallet.platformAddress);
    assert.equal((await list(t, walletSession.accessToken)).linkedTo, b.platformAddress);
  });

  test('bad input is a 400 naming it; the routes need a session, and a token needs manageLinkedWallets', async () => {
    const bad = await challenge(t, account.accessToken, '0x123');
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), {
      errorMessage: 'Invalid address in address: "0x123" is neither a 0x address nor a bb1… address',
    });
    const badDelete = await unlinkReq(t, account.accessToken, 'nope');
    assert.equal(badDelete.statusCode, 400);
    const none = await t.request('GET', PATH, {});
    assert.equal(none.statusCode, 401);
    const narrow = await signIn(t, { scopes: ['completeClaims'] });
    const refused = await challenge(t, narrow.accessToken, testAccount().address);
    assert.equal(refused.statusCode, 403);
    assert.deepEqual(refused.json(), {
      errorMessage: 'This route requires the session to hold the scope(s): manageLinkedWallets',
    });
    assert.equal(
      (await t.request('GET', PATH, { token: narrow.accessToken })).statusCode,
      200,
      'listing needs no scope',
    );
  });
});
