// Session timelines: what keeping every event costs, in one run.
// - record(): the synchronous part on the thread that paces audio (serialize, buffer), per event;
// - the flush: the main-thread time of writing a second's worth of events of 30 sessions (one
//   durable write per session), per event.
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TimelineRecorder } from '../../server/outcomes/timeline.ts';
import type { ServerEvent } from '../../server/protocol/events.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import type { BenchRow } from './bench-kit.ts';

const EVENTS: ServerEvent[] = [
  { type: 'user_started_speaking' },
  { type: 'user_stopped_speaking' },
  { type: 'transcript', role: 'user', text: 'Is it something you can find in a kitchen?', final: true },
  { type: 'tool_call', name: 'record_answer', arguments: { last_answer: 'yes', questions_asked: '3' }, status: 'accepted', reason: null, from_state: 'playing', to_state: 'playing', source: 'model' },
  { type: 'flow_state', state: 'playing', prompt: 'Answer the question truthfully. Questions asked so far: 3.', artifact_type: 'text', variables: { secret_thing: 'a cat', questions_asked: '3', last_answer: 'yes' }, tools: ['record_answer', 'guess_correct', 'out_of_questions'] },
  { type: 'agent_started_speaking' },
  { type: 'transcript', role: 'agent', text: 'Yes, you can find it in a kitchen. What is your next question?', final: true },
  { type: 'metrics', turn: 3, endpointing_ms: 420, stt_ms: 180, llm_ttft_ms: 310, tts_ttfb_ms: 90, voice_to_voice_ms: 1100, server_ms: 1.2 },
  { type: 'agent_stopped_speaking' },
];

const processCpuMs = () => process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000;

export async function run(): Promise<BenchRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'voxflow-timeline-bench-'));
  const store = await openStore({ dataDir });
  try {
    const account = await store.accounts.create({ email: 'bench@example.com', passwordHash: 'x' });
    const sessions = await Promise.all(
      Array.from({ length: 30 }, () => store.sessions.createConnected({ accountId: account.id, flowId: null, transport: 'websocket', mode: 'flow', context: {}, metadata: {} })),
    );
    // A long flush interval: the bench flushes by ending sessions, so each part is timed alone.
    const recorder = new TimelineRecorder(store, { error: () => {} }, 3_600_000);
    const perSession = 90; // ten turns of the events above
    let t = performance.now();
    for (let i = 0; i < perSession; i++) for (const session of sessions) recorder.record(session.id, EVENTS[i % EVENTS.length]!);
    const recordUs = ((performance.now() - t) * 1000) / (perSession * sessions.length);
    const cpuBefore = processCpuMs();
    t = performance.now();
    await Promise.all(sessions.map((session) => recorder.end(session.id)));
    const flushMs = performance.now() - t;
    const flushCpuUs = ((processCpuMs() - cpuBefore) * 1000) / (perSession * sessions.length);
    const how = `30 sessions × ${perSession} events of a guessing-game turn mix; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`;
    return [
      { name: 'timeline: record() per event, on the audio thread', value: `${recordUs.toFixed(1)} µs`, target: '≤ 20 µs', how },
      { name: 'timeline: storing, per event', value: `${flushCpuUs.toFixed(1)} µs of process CPU; ${flushMs.toFixed(1)} ms wall for all ${perSession * sessions.length}`, how: `${how}; one durable write per session, fsync'd` },
    ];
  } finally {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
