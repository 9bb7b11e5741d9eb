// Where the canvas looks on big flows: when names read, where Fit stops, which state a big flow is
// centred on, and what the canvas search finds, best first.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import {
  OVERVIEW_ZOOM,
  anchorState,
  fitChoice,
  focusZoom,
  nameSizeOnScreen,
  namesReadable,
  nodesInView,
  openingView,
  searchStates,
} from '../../../../../renderer/src/features/editor/graph/graph-viewport.ts';
import { adoptUserNodes, getNodesInside, getViewportForBounds, type InternalNodeBase, type NodeBase } from '@xyflow/system';
import { analyzeFlowText } from '../../../../../server/flow/graph/analyze.ts';
import { openAnalysed } from '../../../../../server/flow/graph/laid-out.ts';
import { estimateHeight } from '../../../../../server/flow/graph/layout.ts';
import { presized } from '../../../../../renderer/src/features/editor/graph/graph-view.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';
import { GUESSING_GAME_YAML } from '../../../../support/server.ts';

const big = deriveGraph(parseFlow(generateFlowYaml(200)).document as unknown as FlowData, []);
const game = deriveGraph(parseFlow(GUESSING_GAME_YAML).document as unknown as FlowData, []);

describe('readable names', () => {
  it('reads the card name close in, the large name zoomed out, and neither far out', () => {
    expect(namesReadable(1)).toBe(true);
    // 13.5 px × 0.7: the card's own name is too small there, and the cards still show it.
    expect(namesReadable(0.7)).toBe(false);
    expect(nameSizeOnScreen(OVERVIEW_ZOOM)).toBeGreaterThanOrEqual(11);
    expect(namesReadable(OVERVIEW_ZOOM)).toBe(true);
    expect(namesReadable(0.2)).toBe(false);
  });

  it('keeps the zoom to bring a state into view where names read, else goes close enough to read the card', () => {
    expect(focusZoom(1.4)).toBe(1.4);
    expect(focusZoom(0.4)).toBe(0.4);
    expect(focusZoom(0.7)).toBe(1);
    expect(focusZoom(0.05)).toBe(1);
  });
});

describe('Fit', () => {
  const canvas = { width: 650, height: 700 };
  it('shows a flow of 100 states or fewer whole, however small', () => {
    expect(fitChoice({ width: 20_000, height: 15_000 }, canvas, 100, 0.06)).toBe('whole');
  });

  it('shows a bigger flow whole only where its names still read, else stays centred', () => {
    expect(fitChoice({ width: 20_000, height: 15_000 }, canvas, 200, 0.06)).toBe('centre');
    expect(fitChoice({ width: 1_500, height: 1_500 }, canvas, 200, 0.06)).toBe('whole');
  });
});

describe('the state a big flow is centred on', () => {
  it('is the selected state, else the start', () => {
    expect(anchorState(big, 's150')).toBe('s150');
    expect(anchorState(big, null)).toBe('s0');
    expect(anchorState(big, 'no_such_state')).toBe('s0');
  });
});

describe('the part of a big flow the canvas takes in first', () => {
  // A 500-state flow laid out as the studio lays it out, each state sized as the canvas sizes it
  // before drawing it; xyflow's own code says what it draws in the view the flow opens on.
  const yaml = generateFlowYaml(500);
  const opened = openAnalysed(analyzeFlowText(yaml), {});
  const positions = opened.laidOut!.positions;
  const placed: NodeBase[] = opened.graph.cards.map((c) => presized({ id: c.name, position: positions[c.name]!, data: {} }, estimateHeight(c)));
  const lookup = new Map<string, InternalNodeBase>();
  adoptUserNodes(placed, lookup, new Map());

  /** The states xyflow draws of the whole flow in a canvas of `canvas` fitted on `state` at the overview zoom (as FlowGraph fits it). */
  function drawnByXyflow(state: string, canvas: { width: number; height: number }): string[] {
    const node = lookup.get(state)!;
    const box = { x: node.position.x, y: node.position.y, width: node.measured.width!, height: node.measured.height! };
    const view = getViewportForBounds(box, canvas.width, canvas.height, OVERVIEW_ZOOM, OVERVIEW_ZOOM, 0);
    return getNodesInside(lookup, { x: 0, y: 0, ...canvas }, [view.x, view.y, view.zoom], true).map((n) => n.id);
  }

  it('holds every state the opening view draws, for any canvas the window holds, and a small part of the flow', () => {
    const window = { width: 1280, height: 800 };
    for (const state of ['s0', 's250', 's499']) {
      const part = nodesInView(placed, openingView(placed.find((n) => n.id === state)!, window, OVERVIEW_ZOOM));
      for (const canvas of [window, { width: 900, height: 640 }, { width: 400, height: 300 }]) {
        const drawn = drawnByXyflow(state, canvas);
        expect(drawn).toContain(state);
        expect(drawn.filter((id) => !part.has(id))).toEqual([]);
      }
      expect(part.size).toBeLessThan(placed.length / 4);
    }
  });
});

describe('canvas search', () => {
  it('finds the name itself first, then names starting with it, then names containing it', () => {
    expect(searchStates(big, 'S15').map((h) => h.name)).toEqual(['s15', 's150', 's151', 's152', 's153', 's154', 's155', 's156']);
    expect(searchStates(game, 'ay').map((h) => h.name)).toEqual(['playing']);
  });

  it('finds a state by words of its card prompt, with the prompt', () => {
    expect(searchStates(big, 'step 173:')).toEqual([{ name: 's173', excerpt: expect.stringContaining('Step 173:') }]);
  });

  it('finds nothing for blank or unknown text', () => {
    expect(searchStates(big, '   ')).toEqual([]);
    expect(searchStates(big, 'zebra')).toEqual([]);
  });
});
