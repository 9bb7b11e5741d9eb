// A flow drawn as the editor draws it, for a screen that shows it without editing it (the session
// view replays a session's path on it): the same analysis, graph and layout as the editor's open
// (flow-editor.svelte.ts), without the history, the saving and the live re-analysis. The parse
// and a first layout run in the flow worker, off the page's thread, like the editor's.
import { api, type ApiResult } from '../../lib/api.ts';
import { deriveGraph, type FlowGraph } from './graph.ts';
import { placeMissing, type Positions } from './layout.ts';
import { startFlowWorker } from './worker-client.ts';

export interface FlowPicture {
  name: string;
  graph: FlowGraph;
  positions: Positions;
}

export async function loadFlowPicture(flowId: string): Promise<ApiResult<FlowPicture>> {
  const flow = await api.getFlow(flowId);
  if (!flow.ok) return flow;
  const worker = startFlowWorker();
  try {
    const analysis = await worker.analyze(flow.value.yaml_content);
    const graph = deriveGraph(analysis.data, analysis.diagnostics);
    const saved = flow.value.layout?.positions ?? {};
    const known: Positions = {};
    for (const card of graph.cards) if (saved[card.name]) known[card.name] = saved[card.name]!;
    // Where the designer put the states; a flow never laid out gets the editor's first layout.
    const positions =
      Object.keys(known).length === 0 && graph.cards.length > 0 ? await worker.layout(graph.cards, graph.links, graph.initial) : placeMissing(known, graph.cards, graph.links);
    return { ok: true, value: { name: flow.value.name, graph, positions } };
  } finally {
    worker.dispose();
  }
}
