// The editor's worker: parsing and validating the YAML, and the dagre layout, are the two costs
// that grow with the flow (~100 ms and ~300 ms on 200 states on this machine), so they run here
// and the page stays responsive while a designer types. A keystroke re-parses only the state it
// changed (incremental-analysis.ts), and the answer carries only what changed since the last one
// (analysis-delta.ts). Messages are plain data (worker-client.ts).
import { AnalysisPacker } from './analysis-delta.ts';
import { IncrementalAnalyzer } from './incremental-analysis.ts';
import { EMPTY_GRAPH, deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import { layOut, openAnalysed, routeAnalysed } from '../../../../../server/flow/graph/laid-out.ts';
import type { WorkerRequest, WorkerResponse } from './worker-client.ts';

const analyzer = new IncrementalAnalyzer();
const packer = new AnalysisPacker();
/** The graph of the last analysis routed (routeAnalysed keeps its unchanged cards and links). */
let graph = EMPTY_GRAPH;
const scope = self as unknown as { onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null; postMessage(message: WorkerResponse): void };

scope.onmessage = (event) => {
  const request = event.data;
  if (request.kind === 'analyze') {
    const analysis = analyzer.analyze(request.text);
    const routed = routeAnalysed(analysis, request.positions, graph);
    graph = routed.graph;
    scope.postMessage({ id: request.id, kind: 'analyze', analysis: packer.pack(analysis), paths: routed.paths });
  } else if (request.kind === 'open_drawn') {
    // The page drew this flow from the server's view: the graph is kept here for the keystrokes
    // to come (routeAnalysed), nothing is laid out, routed or sent back but the analysis.
    const analysis = analyzer.analyze(request.text);
    graph = deriveGraph(analysis.data, analysis.diagnostics);
    scope.postMessage({ id: request.id, kind: 'open_drawn', analysis: packer.pack(analysis) });
  } else if (request.kind === 'open') {
    const opened = openAnalysed(analyzer.analyze(request.text), request.saved);
    graph = opened.graph;
    scope.postMessage({ id: request.id, kind: 'open', opened: { ...opened, analysis: packer.pack(opened.analysis) } });
  } else {
    scope.postMessage({ id: request.id, kind: 'layout', laidOut: layOut(request.cards, request.links, request.initial) });
  }
};
