// The synthetic chain of bench/chain.ts, served by the fake chain REST server in its own process
// (a chain node is another process; sharing the indexer's event loop would distort both sides).
// Prints `READY <port> <blocks> <transfers>`.
import {
  addressOf,
  collectionDoc,
  messageEvent,
  startFakeChain,
  type FakeChain,
} from '../../test/helpers/fake-chain.ts';

const BLOCKS = Number(process.argv[2] ?? 1000);
const PER_BLOCK = Number(process.argv[3] ?? 10);

/** Genesis: the collection, 100 senders minted 1,000,000 of token 1; then BLOCKS blocks of transfers. */
function buildChain(chain: FakeChain): number {
  const manager = addressOf(1);
  chain.setCollection('1', collectionDoc('1', manager));
  const senders = Array.from({ length: 100 }, (_, i) => addressOf(10 + i));
  chain.addBlock([
    chain.tx([messageEvent({ msgType: 'universal_update_collection', collectionId: '1', sender: manager })]),
    ...senders.map((to) => chain.transfer({ collectionId: '1', from: 'Mint', to, tokenId: 1, amount: 1_000_000 })),
  ]);
  let transfers = senders.length;
  for (let b = 0; b < BLOCKS - 1; b++) {
    const txs = [];
    for (let i = 0; i < PER_BLOCK; i++) {
      const from = senders[(b * PER_BLOCK + i) % senders.length];
      txs.push(
        chain.transfer({
          collectionId: '1',
          from,
          to: addressOf(1000 + ((b * 7919 + i * 104729) % 10_000)),
          tokenId: 1,
          amount: 1,
        }),
      );
    }
    chain.addBlock(txs);
    transfers += PER_BLOCK;
  }
  return transfers;
}

const chain = await startFakeChain();
const transfers = buildChain(chain);
process.stdout.write(`READY ${new URL(chain.url).port} ${chain.height} ${transfers}\n`);
process.on('SIGTERM', () => void chain.close().then(() => process.exit(0)));
