/**
 * What storing an image costs the process, by the way it is stored: the data dir's blob store (a
 * file per blob, created and written in place) against one file that every blob is appended to (the
 * floor of a store that packs blobs into segments). Each way stores `--count` blobs of `--kb` KB,
 * `--concurrency` at a time as the gateway does under load, in a fresh folder under `--dir`; CPU is
 * the process's own, user and kernel (the file system's work on libuv's threads included). Pin it to
 * one core to read it as the benchmark's gateway pays it: `taskset -c 0 node bench/blob-writes.ts`.
 * `node bench/blob-writes.ts [--dir=<folder on the disk to measure>] [--count=2000] [--kb=190]
 * [--concurrency=50] [--rounds=3]`
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createFileBlobStore } from '../src/storage/blobs.ts';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: tmpdir() },
    count: { type: 'string', default: '2000' },
    kb: { type: 'string', default: '190' },
    concurrency: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
  },
});
const count = Number(values.count);
const concurrency = Number(values.concurrency);
const body = new Uint8Array(Number(values.kb) * 1000).fill(7);

type Put = (index: number) => Promise<void>;

/** Files a way left open, closed before its folder is removed. */
const opened: { close(): Promise<void> }[] = [];

/** CPU µs per blob (user and kernel) of `count` puts, `concurrency` at a time. */
async function measure(put: Put): Promise<{ cpu: number; kernel: number }> {
  let next = 0;
  const start = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await put(next++);
    }),
  );
  const used = process.cpuUsage(start);
  return { cpu: (used.user + used.system) / count, kernel: used.system / count };
}

async function filePerBlob(folder: string): Promise<Put> {
  const store = createFileBlobStore(folder);
  // The key layout of stored outputs: a folder per two seconds of requests.
  return async (index) => {
    await store.put(`files/bucket${Math.floor(index / 1000)}/req_${index}.image-0.png`, body, 'image/png');
  };
}

async function appended(folder: string): Promise<Put> {
  const segment = await open(join(folder, 'segment'), 'a', 0o600);
  opened.push(segment);
  const header = Buffer.from(`image/png\t${body.byteLength}\n`, 'latin1');
  return async () => {
    await segment.writev([header, body]);
  };
}

const ways: Record<string, (folder: string) => Promise<Put>> = { 'a file per blob': filePerBlob, 'appended to one file': appended };
console.log(`${count} blobs of ${values.kb} KB, ${concurrency} at a time, under ${values.dir}; CPU µs per blob (of which kernel)`);
for (let round = 1; round <= Number(values.rounds); round++) {
  const line: string[] = [];
  for (const [name, prepare] of Object.entries(ways)) {
    const folder = await mkdtemp(join(values.dir, 'gateway-blob-writes-'));
    try {
      const { cpu, kernel } = await measure(await prepare(folder));
      line.push(`${name} ${cpu.toFixed(0)} (${kernel.toFixed(0)})`);
    } finally {
      for (const file of opened.splice(0)) await file.close();
      await rm(folder, { recursive: true, force: true });
    }
  }
  console.log(`round ${round}: ${line.join(', ')}`);
}
