// `voxflow test FLOW.yaml TESTS.yaml`: runs a flow's tests with no server, no data dir and no
// studio build, so a team runs them in CI. Exit 0 when every test passed, 1 when one failed,
// 2 when the command could not run them (usage, a file that does not parse, a missing provider).
// Providers come from the server's own settings (VOXFLOW_* variables, or the same flags).
//
// The flow and the tests are parsed here, on the only thread, before any session starts: nothing
// is paced yet, so nothing waits behind the parse (the server parses in its worker pool instead).
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { ConfigError, makeConfig, parseCommandLine } from './config.ts';
import { parseFlow } from './flow/parse.ts';
import { parseFlowTests, type TestDiagnostic } from './flow/tests-format.ts';
import type { Diagnostic } from './flow/types.ts';
import { holdFlite } from './providers/tts/flite.ts';
import { releaseSileroModels } from './providers/turn/silero.ts';
import { configuredProviders } from './testing/configured-providers.ts';
import { junitReport, prettyReport, REPORTERS, type ReporterName } from './testing/reporters.ts';
import type { TestMode } from './testing/results.ts';
import { MAX_REPEAT, MAX_SPEED, RunnerSetupError, TEST_MODES, runTests } from './testing/run-tests.ts';
import { UsageError, readArgs } from './cli-args.ts';

/**
 * Runs of one test played at once from the command line: the model's provider is the one limit
 * here (no account), and a few calls at a time keep a local model server responsive.
 */
const DEFAULT_PARALLEL = 4;

export const TEST_USAGE = `Usage: voxflow test FLOW.yaml TESTS.yaml [options]

Runs a flow's tests (a test or a suite file) without a server. Exits 0 when all pass, 1 when one
fails, 2 when they cannot be run.

Options:
  --mode scripted|model|audio  scripted (default): the tests name the agent's tool calls, no model;
                               model: the configured LLM plays the agent;
                               audio: the caller's turns are spoken (flite) through VAD and STT
                               (a simulated caller talks with the configured LLM's agent, and
                               hears it through STT)
  --reporter pretty|junit      pretty (default) for a terminal, junit (JUnit XML) for CI
  --output FILE                also write the report to FILE
  --runs N, --repeat N         model mode: run each test N times (1-${MAX_REPEAT}) and report the pass rate
                               (a test's own runs: wins)
  --min-pass-rate R            model mode: a test passes when at least R (0-1) of its runs pass (default 1;
                               a test's own min_pass_rate: wins)
  --parallel N                 model mode: play up to N runs of a test at once (default ${DEFAULT_PARALLEL})
  --speed N                    audio mode: 1 streams in real time (default), up to ${MAX_SPEED} times faster
  --help                       this text
Providers are the server's settings: VOXFLOW_LLM_PROVIDER, VOXFLOW_LLM_BASE_URL, VOXFLOW_LLM_MODEL,
VOXFLOW_LLM_API_KEY (or OPENAI_API_KEY), VOXFLOW_STT_* and VOXFLOW_TTS_* (see voxflow --help);
their flags (--llm-provider …) work here too.
`;

export interface TestCommandIo {
  stdout(text: string): Promise<void> | void;
  stderr(text: string): Promise<void> | void;
}



interface TestArgs {
  flowPath: string;
  testsPath: string;
  mode: TestMode;
  reporter: ReporterName;
  output: string | null;
  repeat: number;
  minPassRate: number;
  speed: number;
  parallel: number;
  help: boolean;
  /** Everything else: the server's provider flags. */
  rest: string[];
}

function parseTestArgs(argv: readonly string[]): TestArgs {
  const out: TestArgs = { flowPath: '', testsPath: '', mode: 'scripted', reporter: 'pretty', output: null, repeat: 1, minPassRate: 1, speed: 1, parallel: DEFAULT_PARALLEL, help: false, rest: [] };
  const positionals: string[] = [];
  for (const { arg, flag, value, number, valueIfAny } of readArgs(argv)) {
    switch (flag) {
      case '--help':
      case '-h':
        out.help = true;
        break;
      case '--mode': {
        const mode = value();
        if (!(TEST_MODES as readonly string[]).includes(mode)) throw new UsageError(`--mode must be one of ${TEST_MODES.join(', ')}, not ${mode}`);
        out.mode = mode as TestMode;
        break;
      }
      case '--reporter': {
        const reporter = value();
        if (!(REPORTERS as readonly string[]).includes(reporter)) throw new UsageError(`--reporter must be one of ${REPORTERS.join(', ')}, not ${reporter}`);
        out.reporter = reporter as ReporterName;
        break;
      }
      case '--output':
        out.output = value();
        break;
      case '--runs':
      case '--repeat':
        out.repeat = number(1, MAX_REPEAT);
        if (!Number.isInteger(out.repeat)) throw new UsageError(`${flag} must be a whole number`);
        break;
      case '--parallel':
        out.parallel = number(1, MAX_REPEAT);
        if (!Number.isInteger(out.parallel)) throw new UsageError('--parallel must be a whole number');
        break;
      case '--min-pass-rate':
        out.minPassRate = number(0, 1);
        break;
      case '--speed':
        out.speed = number(1, MAX_SPEED);
        break;
      default:
        if (arg.startsWith('-')) {
          out.rest.push(arg);
          const next = valueIfAny();
          if (next !== undefined) out.rest.push(next);
        } else {
          positionals.push(arg);
        }
    }
  }
  if (out.help) return out;
  if (positionals.length !== 2) throw new UsageError(`expected FLOW.yaml and TESTS.yaml, got ${positionals.length === 0 ? 'neither' : positionals.join(' ')}`);
  [out.flowPath, out.testsPath] = positionals as [string, string];
  return out;
}

function describeDiagnostics(path: string, diagnostics: ReadonlyArray<Diagnostic | TestDiagnostic>): string {
  return diagnostics.map((d) => `${path}:${d.line}:${d.column}: ${d.severity} ${d.code}: ${d.message}`).join('\n');
}

/** Runs the command; resolves to the exit code. */
export async function runTestCommand(argv: readonly string[], env: NodeJS.ProcessEnv, io: TestCommandIo): Promise<number> {
  let args: TestArgs;
  try {
    args = parseTestArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    await io.stderr(`voxflow test: ${error.message}\n\n${TEST_USAGE}`);
    return 2;
  }
  if (args.help) {
    await io.stdout(TEST_USAGE);
    return 0;
  }
  let providerSettings;
  try {
    const cli = parseCommandLine(args.rest, env);
    providerSettings = makeConfig({ providers: cli.config.providers }).providers;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    await io.stderr(`voxflow test: ${error.message}\n`);
    return 2;
  }

  let flowText: string;
  let testsText: string;
  try {
    [flowText, testsText] = await Promise.all([readFile(args.flowPath, 'utf8'), readFile(args.testsPath, 'utf8')]);
  } catch (error) {
    await io.stderr(`voxflow test: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  const flow = parseFlow(flowText);
  if (!flow.document) {
    await io.stderr(`voxflow test: the flow does not validate\n${describeDiagnostics(args.flowPath, flow.diagnostics.filter((d) => d.severity === 'error'))}\n`);
    return 2;
  }
  const tests = parseFlowTests(testsText, flow.document);
  const warnings = tests.diagnostics.filter((d) => d.severity === 'warning');
  if (!tests.tests) {
    await io.stderr(`voxflow test: the tests do not validate\n${describeDiagnostics(args.testsPath, tests.diagnostics)}\n`);
    return 2;
  }
  if (warnings.length > 0) await io.stderr(`${describeDiagnostics(args.testsPath, warnings)}\n`);

  const releaseFlite = holdFlite();
  try {
    const providers = await configuredProviders(providerSettings, args.mode, args.mode === 'model' || tests.tests.some((t) => t.caller !== undefined));
    const result = await runTests(flow.document, tests.tests, {
      mode: args.mode,
      providers,
      repeat: args.repeat,
      minPassRate: args.minPassRate,
      speed: args.speed,
      parallel: args.parallel,
    });
    const name = flow.document.id || basename(args.flowPath);
    const report = args.reporter === 'junit' ? junitReport(result, name) : prettyReport(result, `${name}: ${basename(args.testsPath)}`);
    if (args.output) await writeFile(args.output, report);
    await io.stdout(report);
    return result.passed ? 0 : 1;
  } catch (error) {
    if (!(error instanceof RunnerSetupError)) throw error;
    await io.stderr(`voxflow test: ${error.message}\n`);
    return 2;
  } finally {
    // The embedded voice's and VAD's worker threads would keep the process alive.
    await Promise.all([releaseFlite(), releaseSileroModels()]);
  }
}
