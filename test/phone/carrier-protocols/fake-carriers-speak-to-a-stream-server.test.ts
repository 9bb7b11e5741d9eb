// The fakes against a small stand-in for our server built from the carrier modules alone: the
// signed webhook is verified and answered with our markup, the fake opens the stream that markup
// names and speaks its carrier's messages, and what each side hears is what the other sent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { decodeG711, encodeG711 } from '../../../server/audio/g711.ts';
import { concatPcm, rms } from '../../../server/audio/pcm.ts';
import type { CarrierName, StreamMessage } from '../../../server/transports/carriers/carrier.ts';
import { CARRIERS } from '../../../server/transports/carriers/index.ts';
import { ReorderWindow } from '../../../server/transports/carriers/reorder-window.ts';
import { FakeCarrierStream, streamTargetFromMarkup } from '../../fakes/carriers/media-stream-client.ts';
import { telnyxSigningKey } from '../../fakes/carriers/signing.ts';
import { inboundCallParams, sendVoiceWebhook, type WebhookSigner } from '../../fakes/carriers/voice-webhook.ts';
import { tone } from '../../audio/tones.ts';

const TOKEN = 'Str3amTokenForThisCall';
const telnyxKey = telnyxSigningKey();
const CREDENTIALS = { twilio: { accountSid: 'AC1', authToken: 'tw-token' }, telnyx: { apiKey: 'KEY', publicKey: telnyxKey.publicKeyBase64 }, plivo: { authId: 'MA1', authToken: 'pl-token' } };
const SIGNERS: Record<CarrierName, WebhookSigner> = { twilio: { carrier: 'twilio', authToken: 'tw-token' }, telnyx: { carrier: 'telnyx', key: telnyxKey }, plivo: { carrier: 'plivo', authToken: 'pl-token' } };

interface OurSide {
  url: string;
  messages: StreamMessage[];
  /** Caller audio as the server received it, in sequence order. */
  callerAudio: () => Int16Array;
  sockets: WebSocket[];
  close(): Promise<void>;
}

let ours: OurSide | undefined;
afterEach(async () => {
  await ours?.close();
  ours = undefined;
});

async function startOurSide(name: CarrierName): Promise<OurSide> {
  const carrier = CARRIERS[name];
  const messages: StreamMessage[] = [];
  const frames: Int16Array[] = [];
  const sockets: WebSocket[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const rawBody = Buffer.concat(parts).toString('utf8');
      const params = Object.fromEntries(new URLSearchParams(rawBody));
      const verdict = (carrier.verifyVoiceWebhook as (r: unknown, c: unknown) => { ok: boolean })({ url: `${base}${req.url}`, headers: req.headers, rawBody, params }, CREDENTIALS[name]);
      if (!verdict.ok) return void res.writeHead(403).end();
      const markup = carrier.answerWithStream(`${base.replace('http', 'ws')}/stream`, { token: TOKEN });
      res.writeHead(200, { 'content-type': markup.contentType }).end(markup.body);
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket) => {
    sockets.push(socket);
    const reorder = new ReorderWindow<Int16Array>(3);
    let law: 'mulaw' | 'alaw' = 'mulaw';
    socket.on('message', (data) => {
      const message = carrier.parseStreamMessage(data.toString());
      messages.push(message);
      if (message.type === 'start') {
        law = message.encoding;
        if (message.customParameters.token !== TOKEN) socket.close(1008, 'stream token');
      }
      if (message.type === 'media') frames.push(...reorder.push(message.sequence ?? frames.length, decodeG711(law, message.payload)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/telephony/${name}/voice`,
    messages,
    callerAudio: () => concatPcm(frames),
    sockets,
    close: async () => {
      for (const socket of sockets) socket.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Sends `ms` of a 600 Hz tone from our side in 20 ms frames at once (the carrier buffers it), then a mark. */
function speak(name: CarrierName, socket: WebSocket, streamId: string, ms: number, mark: string): void {
  const carrier = CARRIERS[name];
  const audio = tone(600, 8000, ms * 8);
  for (let at = 0; at < audio.length; at += 160) socket.send(carrier.mediaMessage(streamId, encodeG711('mulaw', audio.subarray(at, at + 160))));
  socket.send(carrier.markMessage(streamId, mark));
}

const until = async (condition: () => boolean, ms = 3_000) => {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe.each(['twilio', 'telnyx', 'plivo'] as const)('%s', (name) => {
  test('a signed webhook is answered with markup whose stream the fake opens; audio, keys and marks flow both ways', async () => {
    ours = await startOurSide(name);
    const answer = await sendVoiceWebhook(SIGNERS[name], ours.url, inboundCallParams(name, { callId: 'call-1', from: '+15550100001', to: '+15550100002' }));
    expect(answer.status).toBe(200);
    const target = streamTargetFromMarkup(name, answer.body);
    expect(target.customParameters.token).toBe(TOKEN);
    const stream = await FakeCarrierStream.connect({ carrier: name, target, callId: 'call-1' });

    const caller = tone(440, 8000, 2400); // 300 ms
    await stream.sendAudio(caller);
    stream.pressDigit('5');
    await until(() => ours!.messages.some((m) => m.type === 'dtmf'));
    const types = ours.messages.map((m) => m.type);
    expect(types.slice(0, name === 'plivo' ? 1 : 2)).toEqual(name === 'plivo' ? ['start'] : ['connected', 'start']);
    expect(ours.messages.find((m) => m.type === 'start')).toMatchObject({ callId: 'call-1', streamId: stream.streamId });
    expect(ours.messages.filter((m) => m.type === 'media')).toHaveLength(15);
    expect(ours.messages.find((m) => m.type === 'dtmf')).toEqual({ type: 'dtmf', digit: '5' });
    // G.711 keeps the level within a fraction of a dB.
    expect(Math.abs(20 * Math.log10(rms(ours.callerAudio()) / rms(caller)))).toBeLessThan(0.3);

    const started = performance.now();
    speak(name, ours.sockets[0]!, stream.streamId, 200, 'first');
    await until(() => ours!.messages.some((m) => m.type === 'mark'));
    // Acknowledged once its 200 ms had played, not when it arrived.
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(ours.messages.find((m) => m.type === 'mark')).toEqual({ type: 'mark', name: 'first' });
    expect(stream.heardAudio().length).toBe(1600);
    expect(stream.protocolErrors).toEqual([]);

    await stream.hangUp();
    if (name !== 'plivo') await until(() => ours!.messages.at(-1)?.type === 'stop');
  });

  test('a clear cuts what the caller hears short; Twilio and Telnyx hand back the pending mark at once, Plivo confirms the clear instead', async () => {
    ours = await startOurSide(name);
    const answer = await sendVoiceWebhook(SIGNERS[name], ours.url, inboundCallParams(name, { callId: 'call-2', from: '+15550100001', to: '+15550100002' }));
    const stream = await FakeCarrierStream.connect({ carrier: name, target: streamTargetFromMarkup(name, answer.body) });
    await until(() => ours!.sockets.length === 1 && ours!.messages.some((m) => m.type === 'start'));
    speak(name, ours.sockets[0]!, stream.streamId, 1000, 'long');
    await new Promise((resolve) => setTimeout(resolve, 150));
    ours.sockets[0]!.send(CARRIERS[name].clearMessage(stream.streamId));
    await until(() => stream.clears === 1);
    // Some of the second played before the clear (150 ms after it was sent, less whatever a
    // loaded machine held the frames back: 85 ms once, beside a second test run), not all of it.
    const heard = stream.heardAudio().length / 8;
    expect(heard).toBeGreaterThan(0);
    expect(heard).toBeLessThan(900);
    expect(stream.receivedAudio().length).toBe(heard * 8);
    if (name === 'plivo') {
      await until(() => ours!.messages.some((m) => m.type === 'ignored'));
      expect(ours.messages.some((m) => m.type === 'mark')).toBe(false);
    } else {
      await until(() => ours!.messages.some((m) => m.type === 'mark'));
      expect(stream.acknowledgedMarks).toEqual(['long']);
    }
    expect(stream.protocolErrors).toEqual([]);
    await stream.hangUp();
  });

  test('a webhook with a forged signature gets no markup', async () => {
    ours = await startOurSide(name);
    const forged: WebhookSigner = name === 'telnyx' ? { carrier: 'telnyx', key: telnyxSigningKey() } : { ...(SIGNERS[name] as { carrier: 'twilio'; authToken: string }), authToken: 'guessed' };
    const answer = await sendVoiceWebhook(forged, ours.url, inboundCallParams(name, { callId: 'call-3', from: '+15550100001', to: '+15550100002' }));
    expect(answer.status).toBe(403);
  });
});

test('Telnyx frames delivered out of order reach the engine in order, A-law included', async () => {
  ours = await startOurSide('telnyx');
  const answer = await sendVoiceWebhook(SIGNERS.telnyx, ours.url, inboundCallParams('telnyx', { callId: 'v3:call-4', from: '+15550100001', to: '+15550100002' }));
  const stream = await FakeCarrierStream.connect({ carrier: 'telnyx', target: streamTargetFromMarkup('telnyx', answer.body), encoding: 'alaw', swapPairsEvery: 4 });
  // A rising ramp: any frame out of place shows as a step down.
  const ramp = Int16Array.from({ length: 1600 }, (_, i) => i * 10 - 8000);
  await stream.sendAudio(ramp);
  await until(() => ours!.messages.filter((m) => m.type === 'media').length === 10);
  const sequences = ours.messages.flatMap((m) => (m.type === 'media' ? [m.sequence!] : []));
  expect(sequences).not.toEqual([...sequences].sort((a, b) => a - b));
  const received = ours.callerAudio();
  expect(received).toHaveLength(1600);
  for (let i = 1; i < received.length; i++) expect(received[i]!, `sample ${i}`).toBeGreaterThanOrEqual(received[i - 1]! - 1);
  await stream.hangUp();
});
