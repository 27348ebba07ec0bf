// `platform import-chain FILE` takes addresses in either form and stores the native one
// (docs/chain-data.md), so the views that filter by address find what a 0x snapshot loaded. An
// address that is neither form is refused whole, naming its field.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, startApp, type TestApp, type TestDatabase } from '../helpers/app.ts';
import { runCliInProcess } from '../helpers/cli.ts';
import { addressOf, bal, balanceStore, collectionDoc } from '../helpers/fake-chain.ts';
import { evmAddressOf } from '../../src/shared/addresses.ts';
import { viewPage } from './helpers.ts';

const [MANAGER, CREATOR, APPROVER, APPROVED, USER, HOLDER] = [1, 2, 3, 4, 5, 6].map((n) => addressOf(900 + n));
const hex = (a: string) => evmAddressOf(a); // EIP-55 checksummed
const lowerHex = (a: string) => evmAddressOf(a).toLowerCase();

function snapshot() {
  return {
    height: '10',
    collections: [collectionDoc('3', hex(MANAGER), { createdBy: lowerHex(CREATOR) })],
    balances: [{ collectionId: '3', address: hex(HOLDER), balance: balanceStore([bal('1', '1')]) }],
    amountTrackers: [
      {
        collectionId: '3',
        approvalLevel: 'incoming',
        approverAddress: hex(APPROVER),
        approvalId: 'a',
        amountTrackerId: 't',
        trackerType: 'to',
        approvedAddress: lowerHex(APPROVED),
        numTransfers: '1',
        amounts: [],
        lastUpdatedAt: '0',
      },
    ],
    challengeTrackers: [
      {
        collectionId: '3',
        approvalLevel: 'outgoing',
        approverAddress: lowerHex(APPROVER),
        approvalId: 'c',
        challengeTrackerId: 'codes',
        usedLeafIndices: [{ leafIndex: '0', usedBy: hex(USER) }],
      },
    ],
  };
}

describe('import-chain: addresses in either form are stored native', () => {
  let t: TestApp;
  let database: TestDatabase;
  let dir: string;
  const write = (name: string, doc: unknown) => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(doc));
    return file;
  };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chain-import-'));
    database = createTestDatabase();
    const res = await runCliInProcess(['import-chain', write('snapshot.json', snapshot())], database.env);
    assert.equal(res.code, 0, res.stderr);
    t = await startApp({ database });
  });
  after(() => t.close());

  // Bug it catches: manager / createdBy / tracker addresses kept in the 0x form they were given in.
  test('collection manager and createdBy: native in the document; the account views find the collection by either form', async () => {
    const res = await t.request('GET', '/api/v0/collection/3');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().collection.manager, MANAGER);
    assert.equal(res.json().collection.createdBy, CREATOR);
    for (const [address, viewType] of [
      [MANAGER, 'managingTokens'],
      [hex(MANAGER), 'managingTokens'],
      [CREATOR, 'createdTokens'],
    ]) {
      const users = await t.request('POST', '/api/v0/users', {
        body: { accountsToFetch: [{ address, viewsToFetch: [{ viewType, viewId: 'v', bookmark: '' }] }] },
      });
      assert.equal(users.statusCode, 200, users.body);
      assert.deepEqual(users.json().accounts[0].views.v.ids, ['3'], `${viewType} of ${address}`);
    }
  });

  test('tracker addresses: native in the documents; the address filters find them', async () => {
    const amount = await viewPage(t, '3', { viewType: 'amountTrackers', address: APPROVED });
    assert.equal(amount.view.ids.length, 1);
    const [a] = amount.collection.approvalTrackers;
    assert.equal(a.approverAddress, APPROVER);
    assert.equal(a.approvedAddress, APPROVED);
    assert.equal(a._docId, `3:incoming-${APPROVER}-a-t-to-${APPROVED}`);
    const challenge = await viewPage(t, '3', { viewType: 'challengeTrackers', address: APPROVER });
    assert.equal(challenge.view.ids.length, 1);
    const [c] = challenge.collection.challengeTrackers;
    assert.equal(c.approverAddress, APPROVER);
    assert.deepEqual(c.usedLeafIndices, [{ leafIndex: '0', usedBy: USER }]);
  });

  // Bug it catches: an invalid address stored as given (or only some address fields checked).
  test('an invalid address in any address field is refused whole, naming the field', async () => {
    const bad = '0x' + '12'.repeat(19) + 'zz';
    const badChecksum = '0x' + 'aB'.repeat(20); // mixed case, not the EIP-55 checksum
    const cases: Array<[string, (s: ReturnType<typeof snapshot>) => void]> = [
      ['collections[0].manager', (s) => (s.collections[0].manager = bad)],
      ['collections[0].createdBy', (s) => (s.collections[0].createdBy = 'bb1notanaddress')],
      ['amountTrackers[0].approverAddress', (s) => (s.amountTrackers[0].approverAddress = bad)],
      ['amountTrackers[0].approvedAddress', (s) => (s.amountTrackers[0].approvedAddress = badChecksum)],
      ['challengeTrackers[0].approverAddress', (s) => (s.challengeTrackers[0].approverAddress = bad)],
      [
        'challengeTrackers[0].usedLeafIndices[0].usedBy',
        (s) => (s.challengeTrackers[0].usedLeafIndices[0].usedBy = bad),
      ],
    ];
    for (const [field, spoil] of cases) {
      const s = snapshot();
      spoil(s);
      const res = await runCliInProcess(['import-chain', write('bad.json', s)], database.env);
      assert.equal(res.code, 1, field);
      const escaped = field.replace(/[[\].]/g, '\\$&');
      assert.match(
        res.stderr,
        new RegExp(`^Cannot import .*: ${escaped} must be a native or 0x address \\(got "`, 'm'),
        field,
      );
    }
    assert.equal(
      (await t.request('GET', '/api/v0/collection/3')).json().collection.manager,
      MANAGER,
      'nothing replaced',
    );
  });
});
