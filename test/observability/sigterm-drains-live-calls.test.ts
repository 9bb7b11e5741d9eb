// A node told to stop (SIGTERM from systemd, Kubernetes or a deploy) with --drain-seconds: /ready
// turns 503 at once, so the load balancer sends new calls elsewhere, and no new session is taken,
// while the calls already live go on to their own end; the process exits once the last has ended.
// A second signal ends the rest at once.
import { EventEmitter } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { serveFromCommandLine, type ServeCommandIo } from '../../server/serve.ts';
import { startFakeOpenAI } from '../fakes/openai-server.ts';
import { jsonRequester } from '../support/server.ts';
import { connectVoice, type VoiceClient } from '../support/voice-client.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Only the flags and these variables configure the server: nothing leaks in from the runner's environment. */
function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VOXFLOW_|OPENAI_API_KEY$|DEEPGRAM_API_KEY$)/.test(name))), VOXFLOW_LOG_LEVEL: 'silent', ...extra };
}

/** `voxflow --serve --drain-seconds 600` in this process, its signals and exit in the test's hands, with an account and a model. */
async function serveDraining() {
  const model = await startFakeOpenAI({ rules: [{ respond: { text: 'Still here and listening.' } }] });
  cleanups.push(() => model.close());
  const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-drain-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const signals = new EventEmitter();
  const exit = vi.fn<(code: number) => void>();
  const io: ServeCommandIo = { stdout: () => {}, stderr: () => {}, exit, signals };
  const command = await serveFromCommandLine(
    ['--serve', '--port', '0', '--data-dir', dataDir, '--drain-seconds', '600', '--llm-provider', 'openai', '--llm-base-url', model.url],
    environment({ VOXFLOW_LLM_API_KEY: 'sk-test' }),
    io,
  );
  if (!command) throw new Error('the server did not start');
  cleanups.push(() => command.server.close());
  const request = jsonRequester(command.server.address);
  const signup = await request('POST', '/auth/signup', { body: { email: 'ops@example.com', password: 'correct horse battery staple' } });
  const apiKey = (await request('POST', '/auth/api-keys?label=ops', { jwt: signup.body.access_token })).body.key as string;
  const call = async () => {
    const started = await request('POST', '/v1/sessions', { apiKey, body: {} });
    expect(started.status).toBe(200);
    const client = await connectVoice(started.body.ws_url);
    cleanups.push(() => client.close());
    await client.waitFor('session_started');
    return client;
  };
  return { signals, exit, request, apiKey, call };
}

describe('SIGTERM with --drain-seconds', () => {
  it('says not ready and takes no new session at once, and lets live calls go on; a second signal ends them', { timeout: 90_000 }, async () => {
    const { signals, exit, request, apiKey, call } = await serveDraining();
    const clients = [await call(), await call()];
    expect(await request('GET', '/ready')).toMatchObject({ status: 200, body: { ready: true } });
    // A session made before the signal whose client connects after it.
    const late = await request('POST', '/v1/sessions', { apiKey, body: {} });

    signals.emit('SIGTERM');
    // At once: the load balancer's probe is told, and a new session is refused.
    await vi.waitFor(async () => expect((await request('GET', '/ready')).body).toEqual({ ready: false, reasons: ['the server is shutting down'] }), { timeout: 5_000 });
    const refused = await request('POST', '/v1/sessions', { apiKey, body: {} });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error.message).toMatch(/shutting down/);
    await expect(connectVoice(late.body.ws_url)).rejects.toThrow(/503/);

    // The live calls go on: a turn still gets its answer.
    clients[0]!.send({ type: 'text', text: 'Are you still there?' });
    await clients[0]!.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Still here and listening.', 20_000);
    // One ends on its own; the node keeps running for the other.
    clients[0]!.send({ type: 'end' });
    expect((await clients[0]!.waitFor('session_ended', undefined, 20_000)).reason).toBe('client_ended');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(exit).not.toHaveBeenCalled();
    expect(clients[1]!.ofType('session_ended')).toEqual([]);

    // A second signal ends the rest now, and the process exits 0.
    signals.emit('SIGTERM');
    expect((await clients[1]!.waitFor('session_ended', undefined, 20_000)).reason).toBe('server_shutdown');
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(0), { timeout: 30_000 });
  });

  it('exits 0 as soon as its last live call ends on its own', { timeout: 60_000 }, async () => {
    const { signals, exit, call } = await serveDraining();
    const client = await call();
    signals.emit('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(exit).not.toHaveBeenCalled();
    client.send({ type: 'end' });
    expect((await client.waitFor('session_ended', undefined, 20_000)).reason).toBe('client_ended');
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(0), { timeout: 30_000 });
  });
});
