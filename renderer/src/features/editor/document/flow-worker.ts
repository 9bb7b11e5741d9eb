// The editor's worker: parsing and validating the YAML, and the dagre layout, are the two costs
// that grow with the flow (~100 ms and ~300 ms on 200 states on this machine), so they run here
// and the page stays responsive while a designer types. A keystroke re-parses only the state it
// changed (incremental-analysis.ts). Messages are plain data (worker-client.ts).
import { IncrementalAnalyzer } from './incremental-analysis.ts';
import { layOut, openAnalysed } from '../graph/laid-out.ts';
import type { WorkerRequest, WorkerResponse } from './worker-client.ts';

const analyzer = new IncrementalAnalyzer();
const scope = self as unknown as { onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null; postMessage(message: WorkerResponse): void };

scope.onmessage = (event) => {
  const request = event.data;
  if (request.kind === 'analyze') {
    scope.postMessage({ id: request.id, kind: 'analyze', analysis: analyzer.analyze(request.text) });
  } else if (request.kind === 'open') {
    scope.postMessage({ id: request.id, kind: 'open', opened: openAnalysed(analyzer.analyze(request.text), request.saved) });
  } else {
    scope.postMessage({ id: request.id, kind: 'layout', laidOut: layOut(request.cards, request.links, request.initial) });
  }
};
