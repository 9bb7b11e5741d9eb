// `npx voxflow test FLOW.yaml TESTS.yaml`, run as a CI job runs it: a child process with no server
// and no studio build. Its exit code says pass or fail, and its JUnit report has what the JUnit
// XML schema requires (testsuites > testsuite with name, tests and failures > testcase with name
// and classname, a failure with a message), so CI systems show each test.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlowTests } from '../../server/flow/tests-format.ts';
import { startFakeDeepgram } from '../fakes/deepgram-server.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { afterThisTest } from '../support/cleanups.ts';
import { GAME_PATH, GUESSING_GAME_TEST_RULES, SUITE_PATH, SUITE_YAML } from '../support/guessing-game-tests.ts';
import { synthesizeSpeech, voicedMs } from '../support/speech.ts';
import { VOXFLOW_BIN, voxflow } from '../support/voxflow-command.ts';

/** The spoken suite runs real audio through Silero at 4× speed: 26 s alone here, over a minute beside a second test suite. */
const SPOKEN_KILL_AFTER_MS = 170_000;

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

/** A strict reader of the XML a JUnit report uses: elements, attributes, text; fails on bad nesting. */
function readXml(text: string): XmlElement {
  const body = text.replace(/^<\?xml[^?]*\?>\s*/, '');
  const root: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const stack = [root];
  const entity = (s: string) => s.replace(/&(lt|gt|quot|apos|amp);/g, (_, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e]!);
  const tag = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let match: RegExpExecArray | null;
  let end = 0;
  while ((match = tag.exec(body))) {
    end = tag.lastIndex;
    const [, closing, name, attrs, selfClosing, chars] = match;
    const top = stack[stack.length - 1]!;
    if (chars !== undefined) {
      top.text += entity(chars);
      continue;
    }
    if (closing) {
      if (top.name !== name) throw new Error(`</${name}> closes <${top.name}>`);
      stack.pop();
      continue;
    }
    const element: XmlElement = { name: name!, attributes: {}, children: [], text: '' };
    for (const [, key, value] of attrs!.matchAll(/([\w.-]+)="([^"]*)"/g)) element.attributes[key!] = entity(value!);
    top.children.push(element);
    if (!selfClosing) stack.push(element);
  }
  if (end !== body.length || stack.length !== 1) throw new Error(`not well-formed at ${end}: ${body.slice(end, end + 40)}`);
  expect(root.children).toHaveLength(1);
  return root.children[0]!;
}

describe('voxflow test', () => {
  let dir: string;
  let openai: FakeOpenAI;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'voxflow-cli-'));
    openai = await startFakeOpenAI({ rules: GUESSING_GAME_TEST_RULES });
  });
  afterAll(async () => {
    await openai?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('passes the guessing game suite, exits 0 and prints its full coverage', async () => {
    // Through the package's bin, as `npx voxflow` runs it; the other cases run the same code from the bundle.
    const run = await voxflow(['test', GAME_PATH, SUITE_PATH], { entry: VOXFLOW_BIN });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('✓ a game won, with the caller cutting in on the win');
    expect(run.stdout).toContain('3 passed, 0 failed');
    expect(run.stdout).toContain('coverage: 4/4 states, 7/7 transitions, 6/6 tools');
  });

  it('exits 1 on a failed expectation, with a JUnit report a CI system can read', async () => {
    const broken = join(dir, 'broken.tests.yaml');
    // The lost game now claims to end in `won`.
    await writeFile(broken, SUITE_YAML.replace('          state: lost\n', '          state: won\n'));
    const report = join(dir, 'junit.xml');
    const run = await voxflow(['test', GAME_PATH, broken, '--reporter', 'junit', '--output', report]);
    expect(run.code).toBe(1);
    expect(await readFile(report, 'utf8')).toBe(run.stdout);

    const suites = readXml(run.stdout);
    expect(suites.name).toBe('testsuites');
    const [suite, ...others] = suites.children;
    expect(others).toEqual([]);
    expect(suite!.name).toBe('testsuite');
    expect(suite!.attributes).toMatchObject({ name: 'guessing-game', tests: '3', failures: '1' });
    const cases = suite!.children.filter((c) => c.name === 'testcase');
    expect(cases).toHaveLength(3);
    for (const testcase of cases) {
      expect(testcase.attributes.name).toBeTruthy();
      expect(testcase.attributes.classname).toBe('guessing-game.scripted');
    }
    const failed = cases.filter((c) => c.children.some((f) => f.name === 'failure'));
    expect(failed.map((c) => c.attributes.name)).toEqual(['a game lost when the caller gives up, then played again']);
    const failure = failed[0]!.children.find((f) => f.name === 'failure')!;
    expect(failure.attributes.message).toBe('step 2 (user: I give up, I am out of questions): expected state won, but the session is in lost');
    expect(failure.text).toContain('user: I give up, I am out of questions');
    expect(failure.text).toContain('path: setup -> playing -> lost');
  });

  it('exits 2, saying where, when the tests do not validate', async () => {
    const bad = join(dir, 'bad.tests.yaml');
    await writeFile(bad, 'name: typo\nsteps:\n  - user: hi\n    expct: {state: playing}\n');
    const run = await voxflow(['test', GAME_PATH, bad]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${bad}:4:5: error unknown_key`);
    expect(run.stdout).toBe('');
  });

  it('runs the suite with the configured model, each test twice, and reports the pass rate', async () => {
    const run = await voxflow(['test', GAME_PATH, SUITE_PATH, '--mode', 'model', '--repeat', '2'], {
      env: { VOXFLOW_LLM_PROVIDER: 'openai', VOXFLOW_LLM_BASE_URL: openai.url, VOXFLOW_LLM_API_KEY: 'sk-test' },
    });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('✓ a game won, with the caller cutting in on the win (2/2 runs passed, 100%)');
    expect(run.stdout).toContain('coverage: 4/4 states, 7/7 transitions, 6/6 tools');
    expect(run.code).toBe(0);
    // The model was asked, with the flow's tools of each state.
    const chats = openai.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(chats.length).toBeGreaterThan(10);
  });

  it('runs the suite spoken, 4× faster than real time, through Silero and the configured STT', { timeout: 180_000 }, async () => {
    // The fake hears each utterance as the next line; a caller's pause inside a line ("I give up,
    // I am out…") makes the engine ask for the words so far, and the fake then gives the words
    // heard by then, as Deepgram would, knowing from flite how long each line takes to say.
    const lines = parseFlowTests(SUITE_YAML).tests!.flatMap((t) => t.steps!.flatMap((step) => (step.user !== undefined ? [step.user] : [])));
    const lengths = await Promise.all(lines.map(async (line) => voicedMs(await synthesizeSpeech(line))));
    const deepgram = await startFakeDeepgram({ transcripts: lines, transcriptAudioMs: lengths });
    afterThisTest(() => deepgram.close());
    const run = await voxflow(['test', GAME_PATH, SUITE_PATH, '--mode', 'audio', '--speed', '4', '--reporter', 'junit'], {
      env: { VOXFLOW_STT_PROVIDER: 'deepgram', VOXFLOW_STT_BASE_URL: deepgram.url, VOXFLOW_STT_API_KEY: 'dg-test' },
      killAfterMs: SPOKEN_KILL_AFTER_MS,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const suite = readXml(run.stdout).children[0]!;
    expect(suite.attributes).toMatchObject({ tests: '3', failures: '0' });
    expect(suite.children.filter((c) => c.name === 'testcase').map((c) => c.attributes.classname)).toEqual(Array(3).fill('guessing-game.audio'));
    // Every line was heard by the speech-to-text provider, in order.
    expect(deepgram.transcripts).toEqual([]);
  });
});
