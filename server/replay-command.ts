// `voxflow replay --server URL --api-key KEY FLOW_ID`: what callers said to a flow's published
// version, replayed against its draft before it is published, from a terminal or CI. The command
// has no store of its own: recorded sessions are on the server, so it asks the server's API
// (POST /v1/flows/{id}/replays), polls the run, and prints the report as `voxflow test` does.
// Exit 0 when every replayed session kept its recorded path (or enough of them, --min-pass-rate),
// 1 when one changed, 2 when it could not replay (usage, an unreachable server, a refusal).
// The key is sent only in the X-Service-Key header and never written out; the server's own error
// messages never carry it.
import { writeFile } from 'node:fs/promises';
import { junitReport, prettyReport, REPORTERS, type ReporterName } from './testing/reporters.ts';
import type { SuiteResult } from './testing/results.ts';
import { MAX_REPLAYED_SESSIONS } from './testing/replay.ts';
import { UsageError, readArgs } from './cli-args.ts';

/** The variables the command reads (the server reads neither: they say which server to ask, and with what key). */
export const REPLAY_VARIABLES = ['VOXFLOW_SERVER', 'VOXFLOW_API_KEY'] as const;

export const REPLAY_USAGE = `Usage: voxflow replay --server URL --api-key KEY FLOW_ID [options]

Replays a flow's latest recorded calls (ended sessions of its published version) against its
draft on a running Voxflow server, the server's configured model playing the agent, and reports
where the draft's path leaves the recorded one. Exits 0 when every call kept its path, 1 when
one changed, 2 when the calls could not be replayed.

Options:
  --server URL                 the server (e.g. http://localhost:3000); or VOXFLOW_SERVER
  --api-key KEY                an API key of the flow's account; or VOXFLOW_API_KEY (which keeps
                               it out of the process list)
  --sessions N                 how many of the latest recorded calls to replay (1-${MAX_REPLAYED_SESSIONS}, default 5)
  --reporter pretty|junit      pretty (default) for a terminal, junit (JUnit XML) for CI
  --output FILE                also write the report to FILE
  --min-pass-rate R            pass when at least R (0-1) of the calls kept their path (default 1: all)
  --help                       this text
`;

export interface ReplayCommandIo {
  stdout(text: string): Promise<void> | void;
  stderr(text: string): Promise<void> | void;
}

/** The replay could not be run or finished: exit 2 with this message. */
class CannotReplay extends Error {}

interface ReplayArgs {
  server: string;
  apiKey: string;
  flowId: string;
  sessions: number;
  reporter: ReporterName;
  output: string | null;
  minPassRate: number;
  help: boolean;
}

/** How often the run is asked for its status while it plays. */
const POLL_MS = 500;
/** One request's longest wait: a server that accepts the connection and never answers is unreachable too. */
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * The longest the command waits for a run: the server's own bound on a run's wall time
 * (VOXFLOW_TEST_RUN_MAX_SECONDS, 900 s by default) ends it first, so this only catches a server
 * that stopped answering about it.
 */
const RUN_WAIT_MS = 20 * 60_000;

function parseReplayArgs(argv: readonly string[], env: NodeJS.ProcessEnv): ReplayArgs {
  const out: ReplayArgs = { server: env.VOXFLOW_SERVER ?? '', apiKey: env.VOXFLOW_API_KEY ?? '', flowId: '', sessions: 5, reporter: 'pretty', output: null, minPassRate: 1, help: false };
  const positionals: string[] = [];
  for (const { arg, flag, value, number } of readArgs(argv)) {
    switch (flag) {
      case '--help':
      case '-h':
        out.help = true;
        break;
      case '--server':
        out.server = value();
        break;
      case '--api-key':
        out.apiKey = value();
        break;
      case '--sessions':
        out.sessions = number(1, MAX_REPLAYED_SESSIONS);
        if (!Number.isInteger(out.sessions)) throw new UsageError('--sessions must be a whole number');
        break;
      case '--reporter': {
        const reporter = value();
        if (!(REPORTERS as readonly string[]).includes(reporter)) throw new UsageError(`--reporter must be one of ${REPORTERS.join(', ')}, not ${reporter}`);
        out.reporter = reporter as ReporterName;
        break;
      }
      case '--output':
        out.output = value();
        break;
      case '--min-pass-rate':
        out.minPassRate = number(0, 1);
        break;
      default:
        // An unknown flag is named, never echoed with its value: it may be a mistyped --api-key.
        if (arg.startsWith('-')) throw new UsageError(`unknown option ${flag}`);
        positionals.push(arg);
    }
  }
  if (out.help) return out;
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'expected the FLOW_ID to replay' : `expected one FLOW_ID, got ${positionals.length}`);
  out.flowId = positionals[0]!;
  if (!out.server) throw new UsageError('--server URL is needed (or VOXFLOW_SERVER)');
  if (!out.apiKey) throw new UsageError('--api-key KEY is needed (or VOXFLOW_API_KEY)');
  let url: URL;
  try {
    url = new URL(out.server);
  } catch {
    throw new UsageError(`--server must be a URL such as http://localhost:3000, not ${out.server}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--server must be an http or https URL, not ${url.protocol}`);
  out.server = url.origin + url.pathname.replace(/\/+$/, '');
  return out;
}

interface RunView {
  id: string;
  status: 'running' | 'passed' | 'failed' | 'error';
  error: string | null;
  result?: SuiteResult | null;
}

/** Asks the server; a refusal is the server's own words (its error code and message). */
async function call<T>(args: ReplayArgs, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${args.server}${path}`, {
      method,
      headers: { 'x-service-key': args.apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = error instanceof Error ? ((error.cause as { code?: string; message?: string } | undefined)?.code ?? (error.name === 'TimeoutError' ? `no answer in ${REQUEST_TIMEOUT_MS / 1000} s` : error.message)) : String(error);
    throw new CannotReplay(`could not reach the server at ${args.server} (${cause})`);
  }
  const text = await response.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // Not the API (a proxy's page, another service on that port): said below by its status.
  }
  if (response.ok && json !== null) return json as T;
  const apiError = (json as { error?: { code?: string; message?: string } } | null)?.error;
  if (response.status === 401) throw new CannotReplay(`the server refused the API key (${apiError?.message ?? 'unauthorized'})`);
  if (apiError?.message) throw new CannotReplay(`the server answered ${response.status} ${apiError.code ?? ''}: ${apiError.message}`.replace('  ', ' '));
  throw new CannotReplay(`the server at ${args.server} answered ${response.status} to ${method} ${path}, not the Voxflow API`);
}

/** Runs the command; resolves to the exit code. */
export async function runReplayCommand(argv: readonly string[], env: NodeJS.ProcessEnv, given: ReplayCommandIo): Promise<number> {
  // Whatever is written out, the key is not in it, even where a server or a proxy echoed it.
  let secret = '';
  const redact = (text: string) => (secret.length >= 4 ? text.replaceAll(secret, '[api key]') : text);
  const io: ReplayCommandIo = { stdout: (text) => given.stdout(redact(text)), stderr: (text) => given.stderr(redact(text)) };
  let args: ReplayArgs;
  try {
    args = parseReplayArgs(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    await io.stderr(`voxflow replay: ${error.message}\n\n${REPLAY_USAGE}`);
    return 2;
  }
  secret = args.apiKey;
  if (args.help) {
    await io.stdout(REPLAY_USAGE);
    return 0;
  }
  try {
    const flow = encodeURIComponent(args.flowId);
    const started = await call<RunView>(args, 'POST', `/v1/flows/${flow}/replays`, { sessions: args.sessions });
    let run = started;
    const giveUp = Date.now() + RUN_WAIT_MS;
    while (run.status === 'running') {
      if (Date.now() > giveUp) throw new CannotReplay(`the run ${started.id} was still running after ${RUN_WAIT_MS / 60_000} minutes`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      run = await call<RunView>(args, 'GET', `/v1/flows/${flow}/tests/runs/${encodeURIComponent(started.id)}`);
    }
    if (run.status === 'error' || !run.result) throw new CannotReplay(`the replay stopped: ${run.error ?? 'the server gave no report'}`);
    const result = run.result;
    const kept = result.tests.filter((t) => t.passed).length;
    const rate = result.tests.length === 0 ? 1 : kept / result.tests.length;
    const passed = rate >= args.minPassRate;
    const title = `${args.flowId}: the draft against ${result.tests.length} recorded call${result.tests.length === 1 ? '' : 's'}`;
    let report = args.reporter === 'junit' ? junitReport(result, `replay ${args.flowId}`) : prettyReport(result, title);
    if (args.reporter === 'pretty') {
      const needs = args.minPassRate < 1 ? ` (needs ${Math.round(args.minPassRate * 100)}%)` : '';
      report += `${kept} of ${result.tests.length} calls kept the recorded path${needs}\n`;
    }
    report = redact(report);
    if (args.output) await writeFile(args.output, report);
    await io.stdout(report);
    return passed ? 0 : 1;
  } catch (error) {
    if (!(error instanceof CannotReplay)) throw error;
    await io.stderr(`voxflow replay: ${error.message}\n`);
    return 2;
  }
}
