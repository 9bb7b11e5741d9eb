// Silero VAD v5 inference off the event loop. onnxruntime-node's run() is synchronous native
// work (deferred to a setImmediate, but it still runs on the thread that calls it): on the main
// thread, twenty callers' frames landing together blocked the loop for 30–50 ms and made the
// agent's audio late for everyone. Here, every detector's next frame goes into one batched run
// ([N, 576] input, [2, N, 128] state), which also costs less per frame than N single runs.
//
// Messages in:  {type:'frames', frames:[{det, seq, fresh}], input: Float32Array(N × 576)}
//               {type:'close', det}
//               {type:'shutdown'}: finish the runs in flight, release the session, exit
// Messages out: {type:'ready'} | {type:'failed', message}
//               {type:'results', seqs: Int32Array, probabilities: Float32Array}
//               {type:'error', seqs: Int32Array, message}
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';

// This thread runs at the process's priority. It used to yield (nice 5) to the main thread that
// paces the audio, but a nice value yields to every other busy thread on the machine, not only to
// ours: with two test suites on two cores its answers came 0.4–2.0 s late on average (2.6 s at
// worst), against 0.07–0.45 s (0.86 s) at the process's priority (load average 17–27 both ways; measured
// 2026-11-24, two runs each). Late answers are late turns: a caller waits that long before the
// agent even starts to think. A frame costs ~125 µs of the 32 ms it covers, too little to starve
// the audio thread, and the VAD no longer waits for one answer to ask about the next frame.

const INPUT_SAMPLES = 576; // 64 samples of context + a 512-sample frame
const STATE_UNITS = 128;
const MAX_BATCH = 64;

/** det → {state: Float32Array(2 × 128), queue: [{seq, fresh, input}], closed} */
const detectors = new Map();
let scheduled = false;
/** Runs started and not finished: a shutdown waits for them (an exit during one aborts the process). */
let running = 0;
let shuttingDown = false;
let ort;
let session;
let sampleRate;

try {
  ort = await import('onnxruntime-node');
  session = await ort.InferenceSession.create(await readFile(workerData.modelPath), {
    // One thread: the batch is small, and extra ORT threads would contend with the server.
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const inputs = ['input', 'state', 'sr'];
  const outputs = ['output', 'stateN'];
  if (!inputs.every((n) => session.inputNames.includes(n)) || !outputs.every((n) => session.outputNames.includes(n))) {
    throw new Error(`expected inputs ${inputs.join(', ')} and outputs ${outputs.join(', ')}; the model has ${session.inputNames.join(', ')} → ${session.outputNames.join(', ')} (is it Silero v5?)`);
  }
  sampleRate = new ort.Tensor('int64', BigInt64Array.from([BigInt(workerData.sampleRate)]), []);
  parentPort.postMessage({ type: 'ready' });
} catch (error) {
  parentPort.postMessage({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(0);
}

parentPort.on('message', (message) => {
  if (message.type === 'frames') {
    message.frames.forEach((frame, i) => {
      let detector = detectors.get(frame.det);
      if (!detector) {
        detector = { state: new Float32Array(2 * STATE_UNITS), queue: [], closed: false };
        detectors.set(frame.det, detector);
      }
      detector.queue.push({ seq: frame.seq, fresh: frame.fresh, input: message.input.subarray(i * INPUT_SAMPLES, (i + 1) * INPUT_SAMPLES) });
    });
    schedule();
  } else if (message.type === 'shutdown') {
    // Finish the runs in flight, release the session, exit: terminating the thread during a run
    // aborts the process (server/providers/turn/worker-shutdown.ts).
    shuttingDown = true;
    void exitWhenIdle();
  } else if (message.type === 'close') {
    const detector = detectors.get(message.det);
    if (detector) {
      detector.closed = true;
      if (detector.queue.length === 0) detectors.delete(message.det);
    }
  }
});

async function exitWhenIdle() {
  if (running > 0) return; // the last run's end calls again
  try {
    await session.release();
  } catch {
    // released or broken already: exiting is all that is left
  }
  process.exit(0);
}

function schedule() {
  if (scheduled || shuttingDown) return;
  scheduled = true;
  setImmediate(runBatch);
}

/** One run over the next frame of every detector that has one (a detector's frames stay in order). */
function runBatch() {
  scheduled = false;
  if (shuttingDown) return;
  const batch = [];
  for (const [det, detector] of detectors) {
    if (detector.queue.length > 0 && batch.length < MAX_BATCH) batch.push({ det, detector, frame: detector.queue.shift() });
  }
  if (batch.length === 0) return;
  const n = batch.length;
  const input = new Float32Array(n * INPUT_SAMPLES);
  const state = new Float32Array(2 * n * STATE_UNITS);
  batch.forEach(({ detector, frame }, i) => {
    if (frame.fresh) detector.state.fill(0);
    input.set(frame.input, i * INPUT_SAMPLES);
    // The state tensor is [2, N, 128]: layer-major, so each detector's two rows are N apart.
    state.set(detector.state.subarray(0, STATE_UNITS), i * STATE_UNITS);
    state.set(detector.state.subarray(STATE_UNITS), (n + i) * STATE_UNITS);
  });
  const seqs = Int32Array.from(batch, (b) => b.frame.seq);
  running++;
  session
    .run({ input: new ort.Tensor('float32', input, [n, INPUT_SAMPLES]), state: new ort.Tensor('float32', state, [2, n, STATE_UNITS]), sr: sampleRate })
    .then(
      (outputs) => {
        const next = outputs.stateN.data;
        const probabilities = Float32Array.from(outputs.output.data);
        batch.forEach(({ detector }, i) => {
          detector.state.set(next.subarray(i * STATE_UNITS, (i + 1) * STATE_UNITS), 0);
          detector.state.set(next.subarray((n + i) * STATE_UNITS, (n + i + 1) * STATE_UNITS), STATE_UNITS);
        });
        parentPort.postMessage({ type: 'results', seqs, probabilities }, [seqs.buffer, probabilities.buffer]);
      },
      (error) => parentPort.postMessage({ type: 'error', seqs, message: error instanceof Error ? error.message : String(error) }, [seqs.buffer]),
    )
    .finally(() => {
      running--;
      if (shuttingDown) return void exitWhenIdle();
      for (const { det, detector } of batch) if (detector.closed && detector.queue.length === 0) detectors.delete(det);
      if ([...detectors.values()].some((d) => d.queue.length > 0)) schedule();
    });
}
