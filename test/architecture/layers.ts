// The layers as data: which layer each file belongs to and what it may import (docs/architecture.md
// explains them, and a test keeps its table and these rules the same).
// Arrows point down only; a type-only import is allowed a little more widely, since it is gone
// once compiled (e.g. http/ names the engine's type in its Services, without loading it).
import { importsOf, type ImportEdge } from './import-graph.ts';

export type Layer =
  | 'errors' | 'config' | 'catalog' | 'flow' | 'protocol' | 'audio' | 'concurrency' | 'security' | 'store' | 'cluster' | 'providers' | 'billing'
  | 'jobs' | 'engine' | 'outcomes' | 'testing' | 'http' | 'api' | 'transports' | 'observability' | 'composition' | 'renderer' | 'electron' | 'resources' | 'test';

interface Rule {
  /** Layers this one may import at run time (its own is always allowed). */
  value: readonly Layer[];
  /** Layers it may import types from, besides those. */
  types?: readonly Layer[];
  /** Pure layers run in the browser studio too: no Node built-ins. */
  pure?: true;
}

export const RULES: Record<Layer, Rule> = {
  errors: { value: [] },
  catalog: { value: [], pure: true },
  config: { value: ['catalog'] },
  flow: { value: [], pure: true },
  /** The session protocol and the API's response schemas; a diagnostic's codes are the flow model's. */
  protocol: { value: ['flow'], pure: true },
  audio: { value: [] },
  /** Bounds on work at once (the queue in front of password hashing): used by security/ and api/. */
  concurrency: { value: [] },
  security: { value: ['concurrency'] },
  store: { value: ['security', 'errors'] },
  /** This process as one node among several sharing the store: its heartbeat and the sweep of gone nodes' sessions. */
  cluster: { value: ['store'] },
  providers: { value: ['audio', 'catalog'], types: ['flow', 'config', 'store', 'security'] },
  billing: { value: ['catalog'], types: ['store', 'config', 'providers'] },
  /** The flow-job pool: the flow model in worker threads, off the thread that paces audio. */
  jobs: { value: ['flow', 'errors'] },
  /** engine/tools/ sends flows' http tool requests: signed, secrets opened, through the private-network guard. */
  engine: { value: ['providers', 'catalog', 'flow', 'protocol', 'audio', 'billing', 'jobs', 'security'], types: ['store', 'config'] },
  outcomes: { value: ['store', 'protocol', 'flow', 'audio', 'security', 'errors'], types: ['config', 'engine'] },
  /** The flow-test runner, and runs of stored tests admitted and metered like sessions (errors are the API's codes). */
  testing: { value: ['engine', 'providers', 'catalog', 'flow', 'protocol', 'audio', 'billing', 'errors'], types: ['config', 'store', 'jobs'] },
  http: { value: ['errors', 'security', 'store', 'protocol'], types: ['config', 'engine', 'outcomes', 'jobs'] },
  /** providers/ at run time for the vendor table's key check; the vendors' SDKs load only when a provider is made. */
  api: { value: ['http', 'billing', 'store', 'flow', 'protocol', 'errors', 'security', 'catalog', 'outcomes', 'testing', 'jobs', 'concurrency', 'providers', 'audio'], types: ['config', 'engine'] },
  /** Carriers' REST calls (hang-up, transfer) share the providers' one retry loop. */
  transports: { value: ['http', 'engine', 'errors', 'security', 'protocol', 'audio', 'catalog', 'providers'], types: ['config', 'store'] },
  /**
   * Metrics, traces, the session's logger, /metrics and /ready: fed from the engine's hooks and
   * events (their types only), so nothing below knows it is watched.
   */
  observability: { value: ['errors', 'protocol'], types: ['config', 'engine', 'store'] },
  /** app.ts, serve.ts, main.ts, studio.ts, test-command.ts, replay-command.ts, migrate-command.ts, cli-args.ts: they put the server (or a CLI command) together. */
  composition: { value: ['errors', 'config', 'catalog', 'flow', 'protocol', 'audio', 'concurrency', 'security', 'store', 'cluster', 'providers', 'billing', 'jobs', 'engine', 'outcomes', 'testing', 'http', 'api', 'transports', 'observability'] },
  /** The studio imports only the pure modules (one validator, one protocol, one vendor list). */
  renderer: { value: ['flow', 'protocol', 'catalog', 'resources'], types: ['electron'] },
  /** The desktop app embeds the whole server. */
  electron: { value: ['errors', 'config', 'catalog', 'flow', 'protocol', 'store', 'billing', 'security', 'composition', 'http'], types: ['engine', 'providers'] },
  resources: { value: [] },
  test: { value: [] },
};

const COMPOSITION = new Set(['app', 'serve', 'main', 'studio', 'test-command', 'replay-command', 'migrate-command', 'cli-args']);

export function layerOf(path: string): Layer | null {
  if (path === 'server/providers/catalog.ts') return 'catalog';
  const server = /^server\/([^/]+)(\/)?/.exec(path);
  if (server) {
    const name = server[2] ? server[1]! : server[1]!.replace(/\.[^.]+$/, '');
    if (COMPOSITION.has(name)) return 'composition';
    return name in RULES ? (name as Layer) : null;
  }
  const top = path.split('/')[0]!;
  return top in RULES ? (top as Layer) : null;
}

export interface Violation {
  edge: ImportEdge;
  reason: string;
}

export function findViolations(edges: readonly ImportEdge[]): Violation[] {
  const violations: Violation[] = [];
  for (const edge of edges) {
    const from = layerOf(edge.from);
    const to = layerOf(edge.to);
    if (from === null) {
      violations.push({ edge, reason: `${edge.from} is in no layer (docs/architecture.md): place its folder in test/architecture/layers.ts` });
      continue;
    }
    if (to === null) {
      violations.push({ edge, reason: `${edge.to} is in no layer (docs/architecture.md)` });
      continue;
    }
    if (from === to) continue;
    const rule = RULES[from];
    if (rule.value.includes(to) || (edge.typeOnly && rule.types?.includes(to))) continue;
    violations.push({ edge, reason: `${from} may not import ${to}${edge.typeOnly ? ' (not even its types)' : ''}: ${edge.from} → ${edge.to}` });
  }
  return violations;
}

/** Node built-ins in a pure layer's file: the studio bundles these, and they must not need Node. */
export function findImpureImports(files: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  for (const [file, text] of files) {
    const layer = layerOf(file);
    if (!layer || !RULES[layer].pure) continue;
    for (const m of text.matchAll(/from\s+['"](node:[^'"]+|fs|path|os|crypto|url|worker_threads)['"]/g)) {
      violations.push({ edge: { from: file, to: m[1]!, typeOnly: false }, reason: `${layer} is pure (the studio bundles it) but ${file} imports ${m[1]}` });
    }
  }
  return violations;
}

export { importsOf };
