// `voxflow test` with a simulated caller, as CI runs it: a child process against a model server
// (the fake OpenAI). --runs 5 gives the pass rate, and --min-pass-rate decides the exit code; the
// JUnit report carries the rate. With --mode audio the caller is spoken, through the embedded
// voice, VAD and the configured STT (the Deepgram fake, hearing by sound). A suite with a
// simulated caller is refused in scripted mode.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFliteTts, shutdownFlite } from '../../server/providers/tts/flite.ts';
import { startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server.ts';
import { afterThisTest } from '../support/after-this-test.ts';
import { BOOKING_PATH, CALLER_TEST, GOOD_JUDGE, rules, rulesFailingJudgements } from '../support/booking-simulated-callers.ts';
import { bookingRecogniser } from '../support/booking-spoken-callers.ts';
import { VOXFLOW_BIN, voxflow } from '../support/voxflow-command.ts';

let fake: FakeOpenAI;
let dir: string;
let testsPath: string;
let env: Record<string, string>;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  dir = await mkdtemp(join(tmpdir(), 'voxflow-cli-callers-'));
  testsPath = join(dir, 'callers.tests.yaml');
  await writeFile(testsPath, CALLER_TEST);
  env = { VOXFLOW_LLM_PROVIDER: 'openai', VOXFLOW_LLM_BASE_URL: fake.url, VOXFLOW_LLM_API_KEY: 'sk-test' };
});
afterAll(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
  // The embedded voice this file started to teach the Deepgram fake the calls' lines.
  await shutdownFlite();
});

describe('voxflow test with a simulated caller', () => {
  // Two command runs of five simulated calls each, each a process of its own: seconds when quiet,
  // past the default 20 s beside a second test run.
  it('--runs 5 reports the pass rate, and exits 1 under --min-pass-rate, 0 at or above it', { timeout: 90_000 }, async () => {
    fake.setRules(rulesFailingJudgements(2, 4));
    const strict = await voxflow(['test', BOOKING_PATH, testsPath, '--mode', 'model', '--runs', '5', '--min-pass-rate', '0.8'], { env });
    expect(strict.stderr).toBe('');
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('✗ a patient who wants Tuesday gets booked (3/5 runs passed, 60%; needs 80%)');
    expect(strict.stdout).toContain('step 1 (simulated call): not met: The caller is booked on a Tuesday — No booking was confirmed.');

    fake.setRules(rulesFailingJudgements(2, 4));
    const junit = await voxflow(['test', BOOKING_PATH, testsPath, '--mode', 'model', '--runs', '5', '--min-pass-rate', '0.6', '--reporter', 'junit'], { env });
    expect(junit.code).toBe(0);
    expect(junit.stdout).toContain('<property name="pass_rate: a patient who wants Tuesday gets booked" value="0.6"/>');
    expect(junit.stdout).toContain('failures="0"');
  });

  // A spoken call plays about 15 s of audio at four times real time, in a process that first loads
  // the voice, the voice activity model and the server's sources: seconds when quiet, a minute or
  // more beside a second test run.
  it('--mode audio speaks the caller through the voice, VAD and STT both ways, and passes', { timeout: 180_000 }, async () => {
    fake.setRules(rules(GOOD_JUDGE));
    fake.requests.splice(0);
    const deepgram = await startFakeDeepgram({ transcribe: await bookingRecogniser(createFliteTts()) });
    afterThisTest(() => deepgram.close());
    const run = await voxflow(['test', BOOKING_PATH, testsPath, '--mode', 'audio', '--speed', '4'], {
      env: { ...env, VOXFLOW_STT_PROVIDER: 'deepgram', VOXFLOW_STT_BASE_URL: deepgram.url, VOXFLOW_STT_API_KEY: 'dg-test' },
      killAfterMs: 160_000,
    });
    expect(run.stderr).toBe('');
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain('audio mode');
    expect(run.stdout).toContain('✓ a patient who wants Tuesday gets booked');
    // The agent's model was told what the STT heard, not what the caller's model typed.
    const agentRequests = fake.requests.filter((r) => JSON.stringify(r.body).includes('Maple Street Dental') && !JSON.stringify(r.body).includes('voxflow_judgement'));
    const callerWords = agentRequests.flatMap((r) => (r.body as { messages: Array<{ role: string; content: unknown }> }).messages.filter((m) => m.role === 'user').map((m) => m.content));
    expect(callerWords).toContain('do you have anything on tuesday');
    expect(callerWords).not.toContain('Do you have anything on Tuesday?');
  });

  it('exits 2 in scripted mode, saying the caller needs model mode', async () => {
    // Through the package's bin, as `npx voxflow` runs it; the other cases run the same code from the bundle.
    const run = await voxflow(['test', BOOKING_PATH, testsPath], { env, entry: VOXFLOW_BIN });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('has a simulated caller, which talks to the configured model: run it in model mode (--mode model)');
  });
});
