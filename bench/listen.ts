/**
 * How the benchmark's own servers (the upstream simulator, the bare proxy) start listening: on the
 * loopback interface, with no cap below what the load generator opens.
 */
import type { Server } from 'node:http';

/** Resolves with the port listened on (the one the system chose when `port` is 0). */
export function listenForBenchmark(server: Server, port: number): Promise<number> {
  // Thousands of concurrent streams are part of the benchmark.
  server.maxConnections = 100_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}
