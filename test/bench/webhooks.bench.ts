// Webhooks (docs/benchmarks.md): how long after a session ends its business hears of it, and what
// the session hook costs on the thread that paces audio.
// - latency: a real server and a local receiver on loopback; sessions over WebSocket (driven
//   by simulate_tool, no model) are ended by the client, five at a time, and each session.ended
//   is timed from the client's `session_ended` event to the receiver's request (the timeline's
//   last write, the outcome read, one durable outbox write, the signed POST);
// - handle(): the synchronous part of the hook, per event, with a metadata object of a CRM's size;
// - fairness: a second server with the production delivery settings (eight places, two per
//   endpoint, 10 s timeout); one account has 20 endpoints on a receiver that accepts the connection
//   and never answers, and one session of its own puts 80 deliveries in the outbox, each able to hold
//   a place for 10 s; then another account's sessions end one after another, a second apart (more
//   than one timeout in all), and each session.ended is timed as above.
import { availableParallelism, loadavg } from 'node:os';
import { WebhookOutbox } from '../../server/outcomes/webhooks/outbox.ts';
import type { Store } from '../../server/store/store.ts';
import { createAccount, createFlow, startTestServer } from '../support/server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';
import { percentile, type BenchRow } from './bench-kit.ts';

const SESSIONS = Number(process.env.VOXFLOW_BENCH_WEBHOOK_SESSIONS ?? 40);
const AT_ONCE = 5;
/** The other account's sessions while the first one's endpoints hang. */
const FAIR_SESSIONS = Number(process.env.VOXFLOW_BENCH_WEBHOOK_FAIR_SESSIONS ?? 20);
const HANGING_ENDPOINTS = 20;

type Server = Awaited<ReturnType<typeof startTestServer>>;
type Account = Awaited<ReturnType<typeof createAccount>>;

/** A short session ended by the client; when the client saw the end, and its id. */
async function playSession(server: Server, account: Account, flowId: string): Promise<{ sessionId: string; endedAt: number }> {
  const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${account.jwt}`));
  const started = await client.waitFor('session_started', undefined, 15_000);
  await client.waitFor('flow_state');
  client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'a bench' } });
  await client.waitFor('flow_state', (e) => e.state === 'playing');
  client.send({ type: 'end' });
  await client.waitFor('session_ended');
  const endedAt = Date.now();
  await client.closed;
  return { sessionId: started.session_id as string, endedAt };
}

/** Another account's session.ended latencies (ms) while one account's 20 endpoints never answer. */
async function latencyBesideHangingEndpoints(): Promise<{ sorted: number[]; hangingRequests: number; how: string }> {
  const server = await startTestServer({ webhooks: { allowPrivate: true } });
  const hanging = await startWebhookReceiver();
  const healthy = await startWebhookReceiver();
  hanging.answerWith(() => 'hang');
  try {
    const noisy = await createAccount(server);
    const noisyFlow = await createFlow(server, noisy.apiKey);
    for (let i = 0; i < HANGING_ENDPOINTS; i++) {
      const hook = await server.request('POST', '/v1/webhooks', { jwt: noisy.jwt, body: { url: `${hanging.url}?endpoint=${i}` } });
      if (hook.status !== 201) throw new Error(`webhook create failed: ${hook.text}`);
    }
    await playSession(server, noisy, noisyFlow);
    await hanging.waitFor(() => true, 15_000, 'the hanging endpoints’ first delivery');

    const quiet = await createAccount(server);
    const quietFlow = await createFlow(server, quiet.apiKey);
    const hook = await server.request('POST', '/v1/webhooks', { jwt: quiet.jwt, body: { url: healthy.url, events: ['session.ended'] } });
    if (hook.status !== 201) throw new Error(`webhook create failed: ${hook.text}`);
    const load = loadavg()[0]!;
    const latencies: number[] = [];
    for (let i = 0; i < FAIR_SESSIONS; i++) {
      const { sessionId, endedAt } = await playSession(server, quiet, quietFlow);
      const arrived = await healthy.waitFor((r) => r.json?.data?.session_id === sessionId, 120_000, 'session.ended');
      latencies.push(arrived.at - endedAt);
      // Spread over more than one 10 s timeout, so the hanging endpoints' attempts end and start again meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    const how =
      `${HANGING_ENDPOINTS} endpoints of one account that accept and never answer, 80 deliveries for them (production settings: 8 places, 2 per endpoint, 10 s timeout); ` +
      `${FAIR_SESSIONS} sessions of another account ended one after another, a second apart, session.ended to a loopback receiver; load average ${load.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after`;
    return { sorted: latencies.sort((a, b) => a - b), hangingRequests: hanging.received.length, how };
  } finally {
    await server.close();
    await hanging.close();
    await healthy.close();
  }
}

export async function run(): Promise<BenchRow[]> {
  const server = await startTestServer({ webhooks: { allowPrivate: true } });
  const receiver = await startWebhookReceiver();
  try {
    const account = await createAccount(server);
    const flowId = await createFlow(server, account.apiKey);
    const hook = await server.request('POST', '/v1/webhooks', { jwt: account.jwt, body: { url: receiver.url, events: ['session.ended'] } });
    if (hook.status !== 201) throw new Error(`webhook create failed: ${hook.text}`);

    const latencies: number[] = [];
    const playOne = async () => {
      const client = await connectVoice(wsUrl(server.url, `/ws?mode=flow&program_id=${flowId}&access_token=${account.jwt}`));
      const started = await client.waitFor('session_started', undefined, 15_000);
      await client.waitFor('flow_state');
      client.send({ type: 'simulate_tool', name: 'begin_game', arguments: { secret_thing: 'a bench' } });
      await client.waitFor('flow_state', (e) => e.state === 'playing');
      client.send({ type: 'end' });
      await client.waitFor('session_ended');
      const endedAt = Date.now();
      const arrived = await receiver.waitFor((r) => r.json?.data?.session_id === started.session_id, 30_000, 'session.ended');
      latencies.push(arrived.at - endedAt);
      await client.closed;
    };
    const load = loadavg()[0]!;
    for (let done = 0; done < SESSIONS; done += AT_ONCE) await Promise.all(Array.from({ length: Math.min(AT_ONCE, SESSIONS - done) }, playOne));
    const sorted = latencies.sort((a, b) => a - b);

    // The hook's own cost: a buffered event, no I/O (the flush timer is far off).
    const outbox = new WebhookOutbox({} as Store, { error: () => {} }, () => {}, () => '', 3_600_000);
    const metadata = { crm_id: 'c-42', campaign: 'spring', tags: ['vip', 'returning'], agent: { team: 'north', shift: 2 } };
    const events = 20_000;
    const t = performance.now();
    for (let i = 0; i < events; i++) {
      outbox.handle(
        { type: 'tool_called', name: 'record_answer', status: 'accepted', source: 'model', state: 'playing', arguments: { last_answer: 'yes', questions_asked: String(i) }, reason: null },
        { sessionId: 's', accountId: 'a', metadata, at: Date.now() / 1000 },
      );
    }
    const handleUs = ((performance.now() - t) * 1000) / events;
    const fair = await latencyBesideHangingEndpoints();

    const how = `${SESSIONS} sessions ended ${AT_ONCE} at a time, session.ended to a receiver on loopback; load average ${load.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after, on ${availableParallelism()} cores`;
    return [
      {
        name: 'webhooks: session_ended → session.ended at the receiver',
        value: `${percentile(sorted, 50).toFixed(0)} / ${percentile(sorted, 95).toFixed(0)} ms p50/p95 (max ${sorted.at(-1)!.toFixed(0)})`,
        target: 'p95 ≤ 1 s',
        how,
      },
      { name: 'webhooks: hook per event, on the audio thread', value: `${handleUs.toFixed(2)} µs`, target: '≤ 20 µs', how: `${events} tool_called events with a 100-byte metadata object, buffered only` },
      {
        name: "webhooks: another account's session.ended while one account's 20 endpoints hang",
        value: `${percentile(fair.sorted, 50).toFixed(0)} / ${percentile(fair.sorted, 95).toFixed(0)} ms p50/p95 (max ${fair.sorted.at(-1)!.toFixed(0)}; ${fair.hangingRequests} requests to the hanging endpoints meanwhile)`,
        target: 'p95 ≤ 2 s',
        how: fair.how,
      },
    ];
  } finally {
    await server.close();
    await receiver.close();
  }
}
