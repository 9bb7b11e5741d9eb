// A flow's view: what the studio's canvas needs to draw the flow (its states as cards, the links
// between them, where each state goes and where each edge runs), made by the very code the
// studio's flow worker runs when it opens a big flow (openAnalysed). The server makes it in its
// flow-job workers and serves it beside the flow's text (GET /v1/flows/{id}/view,
// docs/api.md#flows), so the studio can draw the canvas before its own worker has parsed the text,
// and what the worker answers later is the same picture: nothing moves.
import { analyzeFlowText } from './analyze.ts';
import type { EdgePath } from './edge-routes.ts';
import type { StateCard, TransitionLink } from './graph.ts';
import { openAnalysed } from './laid-out.ts';
import type { Positions } from './layout.ts';

export interface FlowView {
  cards: StateCard[];
  links: TransitionLink[];
  /** The state a call starts in, when the flow names one that exists. */
  initial: string | null;
  /** Every state's place: the saved ones, the rest placed as the studio places them (dagre's layout when none was saved). */
  positions: Positions;
  /** Edge id → where it runs on exactly these positions. */
  paths: Record<string, EdgePath>;
}

/** The view of `text` with the positions saved with the flow; null when the text is not readable YAML (nothing to draw). */
export function flowView(text: string, saved: Positions): FlowView | null {
  const opened = openAnalysed(analyzeFlowText(text), saved);
  if (!opened.analysis.data) return null;
  const { cards, links, initial } = opened.graph;
  return { cards, links, initial, positions: opened.laidOut?.positions ?? {}, paths: Object.fromEntries(opened.laidOut?.paths ?? []) };
}
