// A flow drawn as the editor draws it, for a screen that shows it without editing it (the session
// view replays a session's path on it): the same analysis, graph and layout as the editor's open
// (flow-editor.svelte.ts), without the history, the saving and the live re-analysis. The parse
// and a first layout run in the flow worker, off the page's thread, like the editor's.
import { api, type ApiResult } from '../../../lib/api.ts';
import { deriveGraph, type FlowGraph } from '../../../../../server/flow/graph/graph.ts';
import { placeMissing, type Positions } from '../../../../../server/flow/graph/layout.ts';
import { startFlowWorker } from '../document/worker-client.ts';

export interface FlowPicture {
  name: string;
  graph: FlowGraph;
  positions: Positions;
  /** Which text is drawn, in a sentence: "Version 3 of “Guessing game”, which this session ran." */
  drawn: string;
}

/**
 * Which text of the flow to draw: a published version (a session records the one it ran), the draft
 * (a studio test ran the draft, docs/flows.md#drafts), or — neither known — the published flow.
 */
export type FlowText = { version: number } | { draft: true } | null;

export async function loadFlowPicture(flowId: string, text: FlowText = null): Promise<ApiResult<FlowPicture>> {
  // Positions are kept per flow, not per version: every text is drawn where the designer put it.
  const flow = await api.getFlow(flowId);
  if (!flow.ok) return flow;
  const name = `“${flow.value.name}”`;
  let yaml = flow.value.yaml_content;
  let drawn = `${name} as it is published now.`;
  if (text && 'version' in text) {
    const version = await api.getVersion(flowId, text.version);
    // A version no longer kept (or a server without versions): the published text, said so.
    if (version.ok) [yaml, drawn] = [version.value.yaml_content, `Version ${text.version} of ${name}, which this session ran.`];
  } else if (text) {
    // The draft as it is now: the one the session tested may have been saved over since.
    const draft = await api.getDraft(flowId);
    if (draft.ok) {
      yaml = draft.value.yaml_content;
      drawn = draft.value.is_draft
        ? `The draft of ${name} as it is now: this session tested the draft.`
        : `Version ${draft.value.published_version} of ${name}: the draft this session tested is gone (published or discarded since).`;
    }
  }
  const worker = startFlowWorker();
  try {
    const analysis = await worker.analyze(yaml);
    const graph = deriveGraph(analysis.data, analysis.diagnostics);
    const saved = flow.value.layout?.positions ?? {};
    const known: Positions = {};
    for (const card of graph.cards) if (saved[card.name]) known[card.name] = saved[card.name]!;
    // Where the designer put the states; a flow never laid out gets the editor's first layout.
    const positions =
      Object.keys(known).length === 0 && graph.cards.length > 0 ? (await worker.layout(graph.cards, graph.links, graph.initial)).positions : placeMissing(known, graph.cards, graph.links);
    return { ok: true, value: { name: flow.value.name, graph, positions, drawn } };
  } finally {
    worker.dispose();
  }
}
