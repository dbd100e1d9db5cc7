import type { RunningGateway } from './gateway.ts';
import { withStandaloneGateway } from './limits-ab.ts';
import { freePort } from './processes.ts';

/**
 * A debugger session over the inspector's WebSocket, with a gateway started with
 * `--inspect=127.0.0.1:<port>`: one command at a time is all the bench's tools need.
 */
export async function inspectorSession(port: number) {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const socket = new WebSocket(target!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let nextId = 1;
  const waiting = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id !== undefined) waiting.get(message.id)?.(message);
  });
  return {
    async send<T>(method: string, params: object = {}): Promise<T> {
      const id = nextId++;
      const answer = await new Promise<{ result?: unknown; error?: { message: string } }>((resolve) => {
        waiting.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      });
      waiting.delete(id);
      if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
      return answer.result as T;
    },
    close: () => socket.close(),
  };
}

export type InspectorSession = Awaited<ReturnType<typeof inspectorSession>>;

/**
 * Runs `use` against a gateway of the benchmark's catalog started with its inspector on a loopback
 * port, in front of a simulator of its own, with a session open on it; all stopped after.
 */
export async function withInspectedGateway<T>(
  options: { readonly holdMs?: number },
  use: (gateway: RunningGateway, session: InspectorSession) => Promise<T>,
): Promise<T> {
  const port = await freePort();
  return withStandaloneGateway(
    undefined,
    async (gateway) => {
      const session = await inspectorSession(port);
      try {
        return await use(gateway, session);
      } finally {
        session.close();
      }
    },
    { ...options, extraNodeArgs: [`--inspect=127.0.0.1:${port}`] },
  );
}
