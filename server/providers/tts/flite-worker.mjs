// Runs flite (a WASI command-line program) off the main thread: one run takes tens of
// milliseconds of synchronous work, longer than an audio frame. Plain JavaScript with only
// node: imports, so it loads the same under tsx, vitest and a bundler.
//
// Protocol. In: { id, text, voice }. Out: { type: 'ready', module? } once (with the compiled
// flite.wasm when this worker compiled it), then per job
// { type: 'done', id, sampleRate, samples: ArrayBuffer (PCM16 mono, transferred) } or
// { type: 'failed', id, message }.
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WASI } from 'node:wasi';
import { parentPort, threadId, workerData } from 'node:worker_threads';

if (!parentPort) throw new Error('flite-worker.mjs runs as a worker thread');

// A look-ahead thread (workerData.nice 10) yields the CPU to the main thread, which paces every
// session's audio in 20 ms frames: on a busy machine a frame that waits for a core is a gap the
// caller hears, while synthesis that runs ahead of playback can wait a little. The prompt lane
// (nice 0) keeps the process's priority: the caller is waiting for its sentence. Linux keeps a
// nice value per thread, so setting it on this thread's own id leaves the rest of the process
// alone. Elsewhere (no /proc/thread-self) it is skipped: os.setPriority there would lower the
// whole process.
if (workerData.nice) {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), workerData.nice);
  } catch {
    // not Linux, or not permitted: run at the process's priority
  }
}
const port = parentPort;

// Node 20 bugs, both reproduced here as a SIGABRT/SIGSEGV of the whole process, not just this
// thread: (1) V8 may collect a WASI object while its own start() is still running (the fast
// API callbacks do not keep it alive), and (2) WASI fast API calls crash once flite grows its
// memory on long text. Holding the WASI object, and calling its imports through plain JS
// closures (which V8 cannot lower to fast API calls), avoids both.
const running = new Set();

const tempRoot = pickTempRoot();
// flite.wasm is 21 MB: compiling it, and the throwaway run below that tiers it up, cost a worker
// 0.8–1.4 s of CPU. So the first worker of a process to do both hands the module to the host
// (`ready`), which gives it to every later worker (workerData.module): V8 shares a compiled
// module between the threads of a process, with the code it tiered up.
const compiled = workerData.module ? Promise.resolve(workerData.module) : readFile(workerData.wasmPath).then((bytes) => WebAssembly.compile(bytes));

port.on('message', async (job) => {
  const module = await compiled;
  try {
    const { sampleRate, samples } = synthesize(module, job.text, job.voice);
    port.postMessage({ type: 'done', id: job.id, sampleRate, samples: samples.buffer }, [samples.buffer]);
  } catch (error) {
    port.postMessage({ type: 'failed', id: job.id, message: error instanceof Error ? error.message : String(error) });
  }
});

// The first runs of the module go through V8's baseline compiler and are several times slower
// (~600 ms for one sentence here); a throwaway run tiers it up before real jobs arrive. A module
// from the host was tiered up in the worker that compiled it: the first sentence here costs what
// any does (about 0.2 s of CPU, measured), so there is no throwaway run.
compiled.then((module) => {
  if (workerData.module) {
    port.postMessage({ type: 'ready', tempRoot });
  } else {
    synthesize(module, 'Ready.', 'slt');
    port.postMessage({ type: 'ready', module, tempRoot });
  }
});

function synthesize(module, text, voice) {
  // A directory per job, gone when the job is: a process killed by a signal (no exit handlers
  // run) then leaves nothing behind in /dev/shm, which is RAM. A worker terminated mid-job (its
  // server closing) runs no `finally`: the host removes what this thread left by the name's
  // process and thread (jobDirPrefix in flite-worker-host.ts).
  const dir = mkdtempSync(join(tempRoot, `voxflow-flite-${process.pid}-${threadId}-`));
  const logPath = join(dir, 'flite.log');
  const log = openSync(logPath, 'w');
  const wasi = new WASI({
    version: 'preview1',
    args: ['flite', '-voice', voice, '-t', text, '-o', '/work/speech.wav'],
    env: {},
    preopens: { '/work': dir },
    stdout: log,
    stderr: log,
    returnOnExit: true,
  });
  const imports = {};
  for (const [name, fn] of Object.entries(wasi.wasiImport)) imports[name] = (...args) => Reflect.apply(fn, undefined, args);
  running.add(wasi);
  try {
    const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: imports });
    const code = wasi.start(instance);
    if (code !== 0) throw new Error(`flite exited with code ${code}: ${readFileSync(logPath, 'utf8').trim().slice(0, 300)}`);
    return readWav(readFileSync(join(dir, 'speech.wav')));
  } finally {
    running.delete(wasi);
    closeSync(log);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** flite writes canonical PCM16 mono WAV; anything else means a broken build, not user input. */
function readWav(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at) => bytes.toString('latin1', at, at + 4);
  if (tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('flite wrote no WAV');
  let sampleRate = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === 'fmt ') {
      const channels = view.getUint16(at + 10, true);
      const bits = view.getUint16(at + 22, true);
      if (channels !== 1 || bits !== 16) throw new Error(`flite wrote ${channels} channel(s) of ${bits}-bit audio`);
      sampleRate = view.getUint32(at + 12, true);
    } else if (tag(at) === 'data') {
      const count = Math.floor(Math.min(size, bytes.length - at - 8) / 2);
      const samples = new Int16Array(count);
      for (let i = 0; i < count; i++) samples[i] = view.getInt16(at + 8 + 2 * i, true);
      if (sampleRate === 0) throw new Error('flite wrote audio without a format');
      return { sampleRate, samples };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error('flite wrote a WAV without audio');
}

/** RAM-backed /dev/shm where there is one and it is writable: every job writes and reads a WAV. */
function pickTempRoot() {
  if (existsSync('/dev/shm')) {
    try {
      rmSync(mkdtempSync(join('/dev/shm', `voxflow-flite-${process.pid}-${threadId}-`)), { recursive: true });
      return '/dev/shm';
    } catch {
      // Not writable (a locked-down container): fall back to the usual temp dir.
    }
  }
  return tmpdir();
}
