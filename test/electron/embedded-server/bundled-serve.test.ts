// The built Electron main bundle (scripts/build-electron.mjs), run with `--serve` under Node
// with a stand-in for Electron: the bundle links, finds the files it loads beside itself (the
// flite and Silero workers), serves, and closes on SIGTERM through app.exit(0). This is as close
// to the packaged app as a machine without Electron's binary gets.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REGISTER = fileURLToPath(new URL('../stand-in/register.mjs', import.meta.url));
const ENV = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VOXFLOW_|OPENAI_API_KEY$|DEEPGRAM_API_KEY$|DISPLAY$|WAYLAND_DISPLAY$)/.test(name))) };

let outdir = '';
let dataDir = '';
beforeAll(async () => {
  // Inside the project, so the bundle's package imports resolve from node_modules.
  outdir = join(ROOT, 'dist', `.electron-test-${process.pid}`);
  await promisify(execFile)(process.execPath, ['scripts/build-electron.mjs', `--outdir=${outdir}`], { cwd: ROOT });
  dataDir = await mkdtemp(join(tmpdir(), 'voxflow-bundle-'));
}, 60_000);
afterAll(async () => {
  await rm(outdir, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

describe('the built main bundle with --serve', () => {
  it('serves headless, warms up the embedded voice from its worker, and exits 0 on SIGTERM', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, ['--import', REGISTER, join(outdir, 'main.mjs'), '--no-sandbox', '--serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'info'], {
      cwd: ROOT,
      env: ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await vi.waitFor(() => {
        if (child.exitCode !== null) throw new Error(`exited early:\n${output}`);
        expect(output).toMatch(/Voxflow is serving at http:\/\/127\.0\.0\.1:\d+ /);
      }, { timeout: 30_000, interval: 25 });
      const url = /Voxflow is serving at (\S+)/.exec(output)![1]!;
      const health = await fetch(`${url}/health`);
      expect(await health.json()).toMatchObject({ status: 'ok', tts_provider: 'flite', tts_configured: true });
      // The voice models load after listening, in worker threads started from files beside the
      // bundle: a wrong path would log an error instead of these lines.
      await vi.waitFor(() => {
        expect(output).toContain('the embedded voice is ready');
        expect(output).toContain('voice activity detection is ready');
      }, { timeout: 30_000, interval: 50 });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    // No display in this environment: the headless platform was chosen, and the GPU is off.
    expect(output).toContain('[stand-in] chromium switch --ozone-platform=headless');
    expect(output).toContain('[stand-in] chromium switch --disable-gpu');
    expect(output).toContain('[stand-in] app.exit(0)');
    expect(output).not.toMatch(/"level":(50|60)/);
    expect(output).not.toMatch(/could not (warm up|be loaded)/);
  });
});
