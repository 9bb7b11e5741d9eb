// N voice clients in one process, each a real-time caller: 100 ms chunks of audio every 100 ms
// (a spoken question, then silence while the agent answers), receiving the agent's audio.
// Prints a line once all are connected, and a JSON summary when done. Args: wsBase apiKey flowId sessions seconds [record]
import WebSocket from 'ws';
import { padWithSilence, synthesizeSpeech } from '../support/speech.ts';

const [wsBase, apiKey, flowId, sessionsArg, secondsArg, recordArg] = process.argv.slice(2);
const sessions = Number(sessionsArg);
const seconds = Number(secondsArg);
const CHUNK = 1600; // 100 ms

const question = await synthesizeSpeech('Is it something you can eat?');
// One cycle: the question, then silence long enough for a reply (8 s in all).
const cycle = padWithSilence(question, 200, 8000 - 200 - Math.round((question.length / 16000) * 1000));

let framesReceived = 0;
/** voice_to_voice_ms of the turns that ended in the measuring window (3 s after all connected). */
const voiceToVoice: number[] = [];
let windowFrom = Infinity;
let opened = 0;
let failures = 0;
const stops: Array<() => void> = [];

function noteMetrics(text: string): void {
  if (performance.now() < windowFrom || !text.includes('"metrics"')) return;
  const event = JSON.parse(text) as { type: string; voice_to_voice_ms?: number | null };
  if (event.type === 'metrics' && typeof event.voice_to_voice_ms === 'number') voiceToVoice.push(event.voice_to_voice_ms);
}

await Promise.all(
  Array.from({ length: sessions }, (_, i) =>
    new Promise<void>((resolve) => {
      const socket = new WebSocket(`${wsBase}/ws?mode=flow&program_id=${flowId}${recordArg === 'record' ? '&record=1' : ''}`, { headers: { "x-service-key": apiKey } });
      socket.on('message', (data, isBinary) => {
        if (isBinary) framesReceived++;
        else noteMetrics(String(data));
      });
      socket.on('error', () => failures++);
      socket.on('open', () => {
        opened++;
        // Stagger callers so their questions do not all land on the same tick.
        let position = Math.floor((i / sessions) * cycle.length / CHUNK) * CHUNK;
        const timer = setInterval(() => {
          if (socket.readyState !== socket.OPEN) return;
          const chunk = cycle.subarray(position, position + CHUNK);
          socket.send(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          position = (position + CHUNK) % cycle.length;
        }, 100);
        stops.push(() => {
          clearInterval(timer);
          socket.close();
        });
        resolve();
      });
      socket.on('unexpected-response', () => {
        failures++;
        resolve();
      });
    }),
  ),
);

// Every caller is connected: the bench starts its warm-up from here, not from this process's start.
process.stdout.write(`${JSON.stringify({ phase: 'connected', opened })}\n`);
windowFrom = performance.now() + 3000;
await new Promise((r) => setTimeout(r, seconds * 1000));
for (const stop of stops) stop();
process.stdout.write(`${JSON.stringify({ opened, failures, framesReceived, voiceToVoice })}\n`);
process.exit(0);
