// A big flow's canvas is first drawn from the server's view (server/flow/graph/view.ts), then the
// flow worker's answer lands on it: the same cards and links must stay the very objects drawn, so
// the canvas keeps its nodes and edges, and only what differs (a state edited meanwhile) is new.
import { describe, expect, it } from 'vitest';
import { analyzeFlowText } from '../../../../../server/flow/graph/analyze.ts';
import { keepSame } from '../../../../../server/flow/graph/graph.ts';
import { openAnalysed } from '../../../../../server/flow/graph/laid-out.ts';
import { flowView } from '../../../../../server/flow/graph/view.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';

const YAML = generateFlowYaml(30);
/** The view as the page has it: through JSON, as the endpoint sends it. */
const received = JSON.parse(JSON.stringify(flowView(YAML, {})));
const drawn = { cards: received.cards, links: received.links, initial: received.initial };

describe("the worker's answer after the server's view", () => {
  it('is the same picture: every card, link, position and route', () => {
    const opened = openAnalysed(analyzeFlowText(YAML), {});
    expect(JSON.parse(JSON.stringify(opened.graph))).toEqual(drawn);
    expect(received.positions).toEqual(opened.laidOut!.positions);
    expect(received.paths).toEqual(Object.fromEntries(opened.laidOut!.paths));
    // Nothing differs, so the graph drawn stays the graph.
    expect(keepSame(opened.graph, drawn)).toBe(drawn);
  });

  it('keeps the drawn cards and links, and takes only what changed', () => {
    const edited = YAML.replace('prompt: "Step 4: {a4}"', 'prompt: "Step four: {a4}"');
    const opened = openAnalysed(analyzeFlowText(edited), {});
    const next = keepSame(opened.graph, drawn);
    expect(next).not.toBe(drawn);
    const changed = next.cards.filter((card, i) => card !== drawn.cards[i]).map((card) => card.name);
    expect(changed).toEqual(['s4']);
    expect(next.cards.find((c) => c.name === 's4')!.excerpt).toBe('Step four: {a4}');
    expect(next.links.every((link, i) => link === drawn.links[i])).toBe(true);
  });

  it('is nothing to draw for a text that is not readable YAML', () => {
    expect(flowView('states: [unclosed\n', {})).toBeNull();
  });
});
