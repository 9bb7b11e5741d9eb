// The audio path's per-frame costs: resampling (every WebRTC frame, both ways), Silero (every
// 32 ms of user audio) and flite (every agent sentence, off the main thread). A 20 ms frame
// budget shared by every session on the machine is what these are measured against.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { int16ToFloat32 } from '../../server/audio/pcm.ts';
import { StreamingResampler } from '../../server/audio/resampler.ts';
import { FlitePool, createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { SILERO_FRAME_SAMPLES, createSileroVad, releaseSileroModels } from '../../server/providers/turn/silero.ts';
import { padWithSilence, synthesizeSpeech } from '../support/speech.ts';
import { ms, percentile, type BenchRow } from './bench-kit.ts';

const SENTENCES = [
  'Welcome back to the guessing game.',
  'I am thinking of something you can find in a kitchen.',
  'Is it an animal?',
  'No, it is not an animal, but it is alive.',
  'Can you eat it?',
  'Yes, you can eat it, but most people cook it first.',
  'Is it a potato?',
  'That is right, it is a potato!',
  'Would you like to play again?',
  'Thanks for playing, goodbye.',
];

const us = (value: number) => `${(value * 1000).toFixed(1)} µs`;

export async function run(): Promise<BenchRow[]> {
  const speech48k = await synthesizeSpeech(SENTENCES.join(' '), { sampleRate: 48_000 });
  const rows: BenchRow[] = [];

  for (const [from, to] of [
    [48_000, 16_000],
    [16_000, 48_000],
    [24_000, 16_000],
  ] as const) {
    const frames = framesOf(from === 48_000 ? speech48k : new StreamingResampler(48_000, from).process(speech48k), (from * 20) / 1000, 2000);
    const { times, cpuPerFrame } = timeEach(frames, new StreamingResampler(from, to), 200);
    rows.push({
      name: `resample ${from / 1000}k → ${to / 1000}k, per 20 ms frame`,
      value: `${us(percentile(times, 50))} p50, ${us(percentile(times, 95))} p95 wall; ${us(cpuPerFrame)} CPU`,
      target: '≤ 100 µs p50',
      how: `${times.length} frames of flite speech, Int16 in and out, 48 taps per phase, after 200 warm-up frames; CPU = process CPU time / frames`,
    });
  }

  const vad = createSileroVad();
  await vad.load();
  const detector = vad.createDetector();
  const speech16k = padWithSilence(await synthesizeSpeech(SENTENCES.slice(0, 5).join(' ')), 500, 500);
  const vadFrames = framesOf(speech16k, SILERO_FRAME_SAMPLES, 600).map((frame) => int16ToFloat32(frame));
  for (const frame of vadFrames.slice(0, 30)) await detector.probability(frame);
  const vadTimes: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (const frame of vadFrames) {
    const start = performance.now();
    await detector.probability(frame);
    vadTimes.push(performance.now() - start);
  }
  const cpu = process.cpuUsage(cpuBefore);
  vadTimes.sort((a, b) => a - b);
  detector.close();
  // Ten callers' frames at once: how much of the work stays on the thread that paces the audio.
  const callers = Array.from({ length: 10 }, () => vad.createDetector());
  const mainBefore = threadCpuMs();
  const allBefore = process.cpuUsage();
  await Promise.all(callers.map(async (caller) => {
    for (const frame of vadFrames.slice(0, 100)) await caller.probability(frame);
  }));
  const mainShare = (threadCpuMs() - mainBefore) / cpuMs(process.cpuUsage(allBefore));
  for (const caller of callers) caller.close();
  await releaseSileroModels();
  rows.push({
    name: 'Silero v5, per 32 ms frame',
    value: `${us(percentile(vadTimes, 50))} p50, ${us(percentile(vadTimes, 95))} p95`,
    target: '≤ 500 µs p95',
    how: `${vadTimes.length} frames of speech and silence, one detector, awaited one at a time (includes ORT's setImmediate hop), after 30 warm-up frames; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
  });
  rows.push({
    name: 'Silero v5, main thread share of the CPU, 10 callers',
    value: `${(mainShare * 100).toFixed(0)} %`,
    target: '< 33 %',
    how: "10 detectors × 100 frames at once; the main thread's CPU time (schedstat) / the process's",
  });
  // Wall time above includes waiting for a core on a busy machine; CPU time is what a frame costs.
  rows.push({
    name: 'Silero v5, CPU per 32 ms frame',
    value: us((cpu.user + cpu.system) / 1000 / vadFrames.length),
    how: 'process CPU time (user + system) over the same frames / frame count; ORT runs on the calling thread',
  });

  const tts = createFliteTts();
  await tts.warmUp();
  const synthMs: number[] = [];
  const factors: number[] = [];
  for (const sentence of SENTENCES) {
    const start = performance.now();
    let samples = 0;
    for await (const chunk of tts.synthesize(sentence, new AbortController().signal)) samples += chunk.length;
    const elapsed = performance.now() - start;
    synthMs.push(elapsed);
    factors.push(elapsed / ((samples / 16_000) * 1000));
  }
  await shutdownFlite();
  synthMs.sort((a, b) => a - b);
  factors.sort((a, b) => a - b);
  const how = `${SENTENCES.length} sentences of 3–11 words, worker warmed up, text in → last 16 kHz chunk out`;
  rows.push({ name: 'flite per sentence', value: `${ms(percentile(synthMs, 50))} p50, ${ms(percentile(synthMs, 95))} p95`, how });
  rows.push({ name: 'flite real-time factor', value: `${percentile(factors, 50).toFixed(3)} p50, ${percentile(factors, 95).toFixed(3)} p95`, target: '≤ 0.1', how: 'synthesis time / audio duration, same runs' });
  rows.push(...(await flitePoolThroughput()));
  return rows;
}

/**
 * The flite pool's throughput with 1 … cores look-ahead workers, each fed many sentences at once:
 * sentences per second per worker must hold as workers are added, up to the core count.
 */
async function flitePoolThroughput(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  let single = 0;
  for (let workers = 1; workers <= availableParallelism(); workers++) {
    const pool = new FlitePool({ workers, promptWorker: false });
    await pool.warmUp();
    const tts = createFliteTts({ host: pool });
    const jobs = Array.from({ length: 12 * workers }, (_, i) => SENTENCES[i % SENTENCES.length]!);
    const start = performance.now();
    await Promise.all(jobs.map(async (sentence) => {
      for await (const _chunk of tts.synthesize(sentence, new AbortController().signal, { aheadMs: 2_000 })) {
        // drained
      }
    }));
    const perSecond = jobs.length / ((performance.now() - start) / 1000);
    await pool.close();
    const perWorker = perSecond / workers;
    if (workers === 1) single = perWorker;
    rows.push({
      name: `flite pool, ${workers} worker${workers === 1 ? '' : 's'}`,
      value: `${perSecond.toFixed(1)} sentences/s, ${perWorker.toFixed(1)} per worker (${((perWorker / single) * 100).toFixed(0)} % of one worker's)`,
      target: workers === 1 ? undefined : '≥ 80 % of one worker’s, per worker',
      how: `${jobs.length} sentences of 3–11 words queued at once on a pool of ${workers} (no prompt worker), warmed up; wall time; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`,
    });
  }
  return rows;
}

/** CPU time this thread has run, in ms (Linux schedstat: exact, whatever else the machine does). */
function threadCpuMs(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
}

const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

function framesOf(pcm: Int16Array, frameSamples: number, count: number): Int16Array[] {
  const frames: Int16Array[] = [];
  for (let i = 0; frames.length < count; i = (i + frameSamples) % (pcm.length - frameSamples)) frames.push(pcm.subarray(i, i + frameSamples));
  return frames;
}

/** Per-call wall times in ms (sorted) and mean CPU ms per call, after `warmup` untimed calls. */
function timeEach(frames: Int16Array[], resampler: StreamingResampler, warmup: number): { times: number[]; cpuPerFrame: number } {
  for (let i = 0; i < warmup; i++) resampler.process(frames[i % frames.length]!);
  const times: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (const frame of frames) {
    const start = performance.now();
    resampler.process(frame);
    times.push(performance.now() - start);
  }
  const cpu = process.cpuUsage(cpuBefore);
  return { times: times.sort((a, b) => a - b), cpuPerFrame: (cpu.user + cpu.system) / 1000 / frames.length };
}
