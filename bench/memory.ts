/**
 * Where a gateway's resident memory is: after start, after each workload at saturation, with many
 * streams open (the tokenizer loaded first, as for the bar of docs/performance.md), after a full
 * collection and ten seconds later. Each line splits the process's resident memory into its
 * anonymous part and its file-backed part (the pages of the node binary that ran), and the
 * anonymous part into V8's heap (committed and used) and what lies outside it (sockets, buffers,
 * the C library's arenas, worker threads). That split is what says which setting or change can
 * move the figure: docs/performance.md, "The allocator's arenas".
 * `node bench/memory.ts [--workloads=images,chat-stream] [--streams=1000] [--hold-ms=400]`
 */
import { parseArgs } from 'node:util';
import { loadTokenizer } from './gateway.ts';
import { withInspectedGateway } from './inspector.ts';
import { runClosedLoop } from './load.ts';
import { statusField } from './processes.ts';
import { runConcurrentStreams } from './streams.ts';
import { heldStream, workloadOf } from './workloads.ts';

const { values } = parseArgs({
  options: {
    workloads: { type: 'string', default: 'images' },
    streams: { type: 'string', default: '1000' },
    'hold-ms': { type: 'string', default: '400' },
  },
});

interface HeapFigures {
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
}

/** Evaluated in the gateway: its heap as V8 counts it. */
const HEAP_FIGURES = `(() => { const { heapTotal, heapUsed, external } = process.memoryUsage(); return { heapTotal, heapUsed, external }; })()`;
const mb = (bytes: number | null) => (bytes === null ? '—' : (bytes / 2 ** 20).toFixed(1)).padStart(6);

const holdMs = Number(values['hold-ms']);
await withInspectedGateway({ holdMs }, async (gateway, session) => {
  const pid = gateway.child.pid;
  const figures = async () => {
    const answer = await session.send<{ result: { value: HeapFigures } }>('Runtime.evaluate', { expression: HEAP_FIGURES, returnByValue: true });
    return { rss: statusField(pid, 'VmRSS'), anonymous: statusField(pid, 'RssAnon'), file: statusField(pid, 'RssFile'), ...answer.result.value };
  };
  const show = (label: string, at: Awaited<ReturnType<typeof figures>>) =>
    console.log(
      `${label.padEnd(28)}${mb(at.rss)}${mb(at.anonymous)}${mb(at.file)}${mb(at.heapTotal)}${mb(at.heapUsed)}${mb(at.anonymous === null ? null : at.anonymous - at.heapTotal)}`,
    );
  console.log(
    `${'MB'.padEnd(28)}${'RSS'.padStart(6)}${'anon'.padStart(6)}${'file'.padStart(6)}${'heap'.padStart(6)}${'used'.padStart(6)}${'other'.padStart(6)}`,
  );
  show('started', await figures());
  for (const id of values.workloads.split(',').filter(Boolean)) {
    await runClosedLoop(
      { origin: gateway.origin, request: workloadOf(id).gateway(gateway.apiKey) },
      { connections: 50, durationSeconds: 5, timeoutMs: 30_000 },
    );
    show(`after ${id}`, await figures());
  }
  const streams = Number(values.streams);
  if (streams > 0) {
    await loadTokenizer(gateway);
    show('the tokenizer loaded', await figures());
    // The figures at the highest resident memory while the streams are open (sampled every 200 ms).
    const endpoint = { origin: gateway.origin, request: heldStream(holdMs).gateway(gateway.apiKey) };
    const running = runConcurrentStreams(endpoint, { streams, pid, timeoutMs: holdMs * 40 + 30_000 });
    let finished = false;
    void running.finally(() => {
      finished = true;
    });
    let peak: Awaited<ReturnType<typeof figures>> | undefined;
    while (!finished) {
      const now = await figures();
      if (peak === undefined || (now.rss ?? 0) > (peak.rss ?? 0)) peak = now;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const result = await running;
    show(`${result.completed}/${streams} streams, peak`, peak!);
  }
  await session.send('HeapProfiler.collectGarbage');
  show('a full collection', await figures());
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  show('ten seconds later', await figures());
});
