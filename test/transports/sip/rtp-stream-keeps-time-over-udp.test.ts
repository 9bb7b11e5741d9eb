// A SIP call's RTP over real UDP sockets on loopback: what a phone on the other end hears (one
// continuous stream per call, sequence numbers +1 and timestamps +160 a packet, through a stall
// of the event loop and across a hold) and what it may send (audio, keys, and packets that are not
// RTP at all, which are counted and dropped).
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeG711, G711_SILENCE } from '../../../server/audio/g711.ts';
import { bindRtpSocket, RtpStream, type MediaTarget } from '../../../server/transports/sip/rtp.ts';

interface Heard {
  ssrc: number;
  sequence: number;
  timestamp: number;
  marker: boolean;
  payloadType: number;
  payload: Buffer;
}

const made: Array<{ close(): void }> = [];

afterEach(() => {
  for (const each of made.splice(0)) each.close();
});

async function phone(): Promise<{ socket: Socket; port: number; heard: Heard[] }> {
  const socket = createSocket('udp4');
  made.push({ close: () => socket.close() });
  await new Promise<void>((done) => socket.bind(0, '127.0.0.1', done));
  const heard: Heard[] = [];
  socket.on('message', (data) => {
    heard.push({
      ssrc: data.readUInt32BE(8),
      sequence: data.readUInt16BE(2),
      timestamp: data.readUInt32BE(4),
      marker: (data[1]! & 0x80) !== 0,
      payloadType: data[1]! & 0x7f,
      payload: data.subarray(12),
    });
  });
  return { socket, port: socket.address().port, heard };
}

async function call(port: number, events: { audio?: Int16Array[]; digits?: string[] } = {}): Promise<RtpStream> {
  const target: MediaTarget = { address: '127.0.0.1', port, law: 'alaw', payloadType: 8, telephoneEvent: 101, sending: true, receiving: true };
  const stream = new RtpStream(await bindRtpSocket('127.0.0.1', { first: 0, last: 0 }), target, {
    audio: (pcm) => events.audio?.push(pcm),
    digit: (key) => events.digits?.push(key),
    problem: () => {},
  });
  made.push(stream);
  return stream;
}

/** Waits for `done`, for at most 10 s (a slow machine), then fails. */
const until = async (done: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('waited 10 s for packets that did not come');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** One stream's packets in order of arrival: each one the next sequence number and 20 ms later. */
function expectContinuous(packets: Heard[]): void {
  for (let i = 1; i < packets.length; i++) {
    expect((packets[i]!.sequence - packets[i - 1]!.sequence) & 0xffff).toBe(1);
    expect((packets[i]!.timestamp - packets[i - 1]!.timestamp) >>> 0).toBe(160);
  }
}

function packet(sequence: number, timestamp: number, payloadType: number, payload: Uint8Array, first = 0x80): Buffer {
  const data = Buffer.alloc(12 + payload.length);
  data[0] = first;
  data[1] = payloadType;
  data.writeUInt16BE(sequence, 2);
  data.writeUInt32BE(timestamp, 4);
  data.writeUInt32BE(0xcafe, 8);
  data.set(payload, 12);
  return data;
}

describe("a SIP call's RTP", () => {
  it('gives each of two calls one continuous stream, marked at its start, of the agent voice then silence', async () => {
    const ear = await phone();
    const [first, second] = [await call(ear.port), await call(ear.port)];
    const voice = new Int16Array(320 * 3).map((_, i) => Math.round(8000 * Math.sin(i / 5)));
    for (let f = 0; f < 3; f++) first.agentAudio(voice.subarray(f * 320, (f + 1) * 320));
    first.start();
    second.start();
    await until(() => ear.heard.length >= 30);
    first.close();
    second.close();
    const streams = new Map<number, Heard[]>();
    for (const p of ear.heard) streams.set(p.ssrc, [...(streams.get(p.ssrc) ?? []), p]);
    expect(streams.size).toBe(2);
    for (const packets of streams.values()) {
      expect(packets.length).toBeGreaterThan(3);
      expectContinuous(packets);
      expect(packets.map((p) => p.marker)).toEqual([true, ...packets.slice(1).map(() => false)]);
      expect(packets.every((p) => p.payloadType === 8 && p.payload.length === 160)).toBe(true);
    }
    // The first call spoke (its first two packets are audio, not the silence code: the third
    // frame is partly held back by the resampler's delay) then fell silent.
    const spoke = streams.get(ear.heard.find((p) => p.payload.some((b) => b !== G711_SILENCE.alaw))!.ssrc)!;
    expect(spoke.slice(0, 2).every((p) => p.payload.some((b) => b !== G711_SILENCE.alaw))).toBe(true);
    expect(spoke.at(-1)!.payload.every((b) => b === G711_SILENCE.alaw)).toBe(true);
  });

  it('sends what it owes after the event loop stalls, with no hole in sequence numbers or timestamps', async () => {
    const ear = await phone();
    const stream = await call(ear.port);
    stream.start();
    await until(() => ear.heard.length >= 3);
    const before = ear.heard.length;
    const stalled = performance.now();
    while (performance.now() - stalled < 250) {
      // The event loop is blocked: no clock tick, no send.
    }
    await until(() => ear.heard.length >= before + 15);
    stream.close();
    expectContinuous(ear.heard);
    expect(ear.heard.filter((p) => p.marker)).toHaveLength(1);
  });

  it('sends nothing on hold, then a marked packet that goes on from the last sequence number', async () => {
    const ear = await phone();
    const stream = await call(ear.port);
    stream.start();
    await until(() => ear.heard.length >= 3);
    stream.retarget({ ...stream.media, sending: false });
    await new Promise((r) => setTimeout(r, 200));
    stream.retarget({ ...stream.media, sending: true });
    const resumedAt = ear.heard.length;
    await until(() => ear.heard.length >= resumedAt + 3);
    stream.close();
    const marked = ear.heard.flatMap((p, i) => (p.marker ? [i] : []));
    expect(marked).toHaveLength(2);
    expectContinuous(ear.heard.slice(0, marked[1]));
    expectContinuous(ear.heard.slice(marked[1]));
    const [last, resumed] = [ear.heard[marked[1]! - 1]!, ear.heard[marked[1]!]!];
    // Nothing was sent on hold (the next sequence number), yet the timestamps counted its 200 ms.
    expect((resumed.sequence - last.sequence) & 0xffff).toBe(1);
    expect((resumed.timestamp - last.timestamp) >>> 0).toBeGreaterThanOrEqual(160 * 10);
  });

  it("hears the caller's audio at 16 kHz and each key once, and drops what is not RTP without stopping", async () => {
    const ear = await phone();
    const audio: Int16Array[] = [];
    const digits: string[] = [];
    const stream = await call(ear.port, { audio, digits });
    const send = (data: Buffer) => ear.socket.send(data, stream.port, '127.0.0.1');
    const speech = encodeG711('alaw', new Int16Array(160).map((_, i) => Math.round(6000 * Math.sin(i / 3))));
    send(packet(1, 160, 8, speech));
    send(Buffer.from('not rtp at all'));
    send(packet(9, 320, 8, speech, 0x40)); // version 1
    send(packet(9, 480, 8, speech, 0x8f).subarray(0, 40)); // fifteen CSRCs: more than the packet holds
    send(packet(9, 640, 8, speech, 0x90).subarray(0, 14)); // an extension cut short
    // Key 5: its start and its end three times, all one event (one timestamp).
    for (const end of [0, 0x80, 0x80, 0x80]) send(packet(9, 800, 101, Uint8Array.from([5, end, 0, 160])));
    send(packet(2, 960, 8, speech));
    send(packet(3, 1120, 8, speech));
    await until(() => stream.counters.packetsIn >= 7 && stream.counters.malformed >= 4);
    await new Promise((r) => setTimeout(r, 50));
    expect(digits).toEqual(['5']);
    expect(stream.counters.malformed).toBe(4);
    expect(audio.reduce((n, pcm) => n + pcm.length, 0)).toBeGreaterThanOrEqual(320);
    expect(audio.some((pcm) => pcm.some((s) => Math.abs(s) > 1000))).toBe(true);
  });
});
