// The server the load benches measure: provider fakes in a child process of their own (so their
// work is not counted against the server's core), an account with ample credit, and a flow.
import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { createInterface, type Interface } from 'node:readline';
import { createAccount, createFlow, startTestServer, type TestServer } from '../support/server.ts';

export interface LoadRig {
  server: TestServer;
  apiKey: string;
  flowId: string;
  close(): Promise<void>;
}

/** Lines a child process prints, one at a time. */
export function lines(child: ChildProcess): { next(): Promise<string> } {
  const reader: Interface = createInterface({ input: child.stdout! });
  const queue: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  reader.on('line', (line) => (waiting.length > 0 ? waiting.shift()!(line) : queue.push(line)));
  return { next: () => (queue.length > 0 ? Promise.resolve(queue.shift()!) : new Promise((resolve) => waiting.push(resolve))) };
}

/**
 * A helper process of the load benches: the callers or the provider fakes. They stand in for other
 * machines (the callers' phones, a hosted provider), yet here they share the server's two cores,
 * so they run at a lower priority (nice 10): when the server needs a core it gets it, as it would
 * on a machine of its own. They still get every cycle the server leaves idle.
 */
export function spawnTs(file: string, args: string[] = []): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL(file, import.meta.url).pathname, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    setPriority(child.pid!, 10);
  } catch {
    // not permitted here: they compete at the same priority
  }
  return child;
}

/**
 * `tts: 'flite'` synthesizes in the server process (embedded TTS, on its worker thread);
 * `tts: 'openai'` fetches speech from the fake in the fakes' process, as a hosted TTS would,
 * so the figure is the engine's own cost.
 */
export async function startLoadRig(options: { tts?: 'flite' | 'openai' } = {}): Promise<LoadRig> {
  const fakes = spawnTs('./fake-providers-process.ts');
  const urls = JSON.parse(await lines(fakes).next()) as { openai: string; deepgram: string };
  const server = await startTestServer({
    engine: { maxSessions: 500, maxPeerConnections: 500 },
    providers: {
      stt: { provider: 'deepgram', apiKey: 'dg', baseUrl: urls.deepgram },
      llm: { provider: 'openai', apiKey: 'sk', baseUrl: urls.openai },
      tts: options.tts === 'openai' ? { provider: 'openai', apiKey: 'sk', baseUrl: urls.openai } : { provider: 'flite' },
    },
  });
  const account = await createAccount(server);
  const flowId = await createFlow(server, account.apiKey);
  // Enough credit for every minute of the run: the benches measure the engine, not the ledger.
  const { store } = server.app.services;
  await store.credits.grant(store.accounts.findByEmail(account.email)!.id, 1_000_000, 'bench', 'bench-grant');
  return {
    server,
    apiKey: account.apiKey,
    flowId,
    async close() {
      await server.close();
      fakes.kill();
    },
  };
}
