// A build pool thread: hashes the chunks it is sent into the tree's shared layers.
import { parentPort } from 'node:worker_threads';
import { TreeHasher } from './digest.ts';
import { buildChunk, type ChunkTask } from './tree.ts';

const port = parentPort!;
port.on('message', (task: ChunkTask) => {
  const hasher = new TreeHasher();
  try {
    buildChunk(task, hasher);
    port.postMessage({ ok: true });
  } catch (err) {
    port.postMessage({ ok: false, message: err instanceof Error ? err.message : String(err) });
  } finally {
    hasher.wipe();
  }
});
