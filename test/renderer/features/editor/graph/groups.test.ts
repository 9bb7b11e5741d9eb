// Groups on the canvas: what is drawn when a group is collapsed (its states gone, one node in
// their stead with what they hold marked, the transitions in and out bundled per pair of ends with
// their count, those inside not drawn), the frames of expanded groups, and the view kept per flow.
import { describe, expect, it } from 'vitest';
import { parseFlow } from '../../../../../server/flow/parse.ts';
import type { FlowData } from '../../../../../server/flow/graph/flow-data.ts';
import { deriveGraph } from '../../../../../server/flow/graph/graph.ts';
import type { TalkMarks } from '../../../../../renderer/src/features/editor/graph/marks.ts';
import { bundleLabel, collapsedGroupOf, groupNodeId, groupOfNodeId, groupedView } from '../../../../../renderer/src/features/editor/graph/groups.ts';
import { buildBundleEdges, buildGroupNodes } from '../../../../../renderer/src/features/editor/graph/group-view.ts';
import { NODE_WIDTH } from '../../../../../server/flow/graph/layout.ts';
import { collapsedGroupsKey, loadCollapsed, saveCollapsed } from '../../../../../renderer/src/features/editor/graph/collapsed-groups.ts';
import { setStateGroup } from '../../../../../renderer/src/features/editor/document/operations.ts';
import { generateFlowYaml } from '../../../../support/generate-flow.ts';

// s0..s9 in groups of 3: part0 = s0 s1 s2, part1 = s3 s4 s5, part2 = s6 s7 s8, part3 = s9.
// Each state moves to the next (next<i>) and skips one (skip<i>), round to s0: s8 skips to s0,
// s9 moves to s0 and skips to s1.
const data = parseFlow(generateFlowYaml(10, { groupEvery: 3 })).document as unknown as FlowData;
const graph = deriveGraph(data, []);
// One column, s0 at the top: each group's states in one place.
const positions = Object.fromEntries(graph.cards.map((c, i) => [c.name, { x: 0, y: i * 200 }]));

const bundles = (collapsed: string[]) =>
  Object.fromEntries(groupedView(graph, positions, new Set(collapsed)).bundles.map((b) => [`${b.source} > ${b.target}`, b.tools]));

describe('a collapsed group', () => {
  it('draws nothing different while no group is collapsed: the same graph, a frame per group', () => {
    const view = groupedView(graph, positions, new Set());
    expect(view.graph).toBe(graph);
    expect(view.collapsed).toEqual([]);
    expect(view.bundles).toEqual([]);
    expect(view.frames.map((f) => [f.name, f.states, f.labelled])).toEqual([['part0', 3, true], ['part1', 3, true], ['part2', 3, true], ['part3', 1, true]]);
    // Each frame holds its states.
    for (const frame of view.frames) {
      for (const card of graph.cards.filter((c) => c.group === frame.name)) {
        const at = positions[card.name]!;
        expect(at.x).toBeGreaterThan(frame.x);
        expect(at.y).toBeGreaterThan(frame.y);
        expect(at.x + NODE_WIDTH).toBeLessThan(frame.x + frame.width);
      }
    }
  });

  it('frames each place the states of a group lie in, labelling the first, and collapses to where it starts', () => {
    // part1 split as a long flow's ranks wrap into bands: s3 at the foot of one band, s4 and s5
    // at the head of the next, far to its right.
    const wrapped = { ...positions, s3: { x: 0, y: 2000 }, s4: { x: 3000, y: 0 }, s5: { x: 3000, y: 200 } };
    const frames = groupedView(graph, wrapped, new Set()).frames.filter((f) => f.name === 'part1');
    expect(frames.map((f) => [f.labelled, f.x < 1000])).toEqual([
      [true, true],
      [false, false],
    ]);
    expect(frames[1]!.y).toBeLessThan(0);
    expect(frames[1]!.y + frames[1]!.height).toBeGreaterThan(200);
    expect(groupedView(graph, wrapped, new Set(['part1'])).collapsed[0]!.position).toEqual({ x: 0, y: 2000 });
  });

  it('takes its states off the canvas and draws one node where they were, with their count and marks', () => {
    const view = groupedView(graph, positions, new Set(['part0']));
    expect(view.graph.cards.map((c) => c.name)).toEqual(['s3', 's4', 's5', 's6', 's7', 's8', 's9']);
    expect(view.frames.map((f) => f.name)).toEqual(['part1', 'part2', 'part3']);
    const left = Math.min(...['s0', 's1', 's2'].map((s) => positions[s]!.x));
    const top = Math.min(...['s0', 's1', 's2'].map((s) => positions[s]!.y));
    expect(view.collapsed).toEqual([{ name: 'part0', position: { x: left, y: top }, states: 3, start: true, endsCall: false, errors: 0, warnings: 0, members: ['s0', 's1', 's2'] }]);
    // No link left on the canvas has an end inside the group.
    expect(view.graph.links.every((l) => !['s0', 's1', 's2'].includes(l.source) && !['s0', 's1', 's2'].includes(l.target))).toBe(true);
  });

  it('bundles the transitions in and out into one edge per pair of ends, with how many they are', () => {
    // Out of part0: s1 skips to s3, s2 moves to s3 and skips to s4. In: s8 skips to s0, s9 moves
    // to s0 and skips to s1.
    expect(bundles(['part0'])).toEqual({
      'group:part0 > s3': ['skip1', 'next2'],
      'group:part0 > s4': ['skip2'],
      's8 > group:part0': ['skip8'],
      's9 > group:part0': ['next9', 'skip9'],
    });
    const view = groupedView(graph, positions, new Set(['part0']));
    expect(view.bundles.map(bundleLabel)).toEqual(['2 transitions', 'skip2', 'skip8', '2 transitions']);
  });

  it('bundles between two collapsed groups, and draws nothing for transitions inside one', () => {
    expect(bundles(['part0', 'part1'])).toEqual({
      'group:part0 > group:part1': ['skip1', 'next2', 'skip2'],
      'group:part1 > s6': ['skip4', 'next5'],
      'group:part1 > s7': ['skip5'],
      's8 > group:part0': ['skip8'],
      's9 > group:part0': ['next9', 'skip9'],
    });
  });

  it('marks a group holding a state that ends the call, and the problems inside it', () => {
    const states = data.states as Record<string, object>;
    const ends = { ...data, states: { ...states, s4: { ...states.s4, on_enter: { say: 'Bye.', end_session: true } } } };
    const problems = [
      { code: 'wrong_type', severity: 'error', message: '', path: ['states', 's5', 'agent'], line: 1, column: 1 },
      { code: 'dead_end_state', severity: 'warning', message: '', path: ['states', 's3'], line: 1, column: 1 },
    ] as const;
    const marked = deriveGraph(ends, problems as never);
    const [summary] = groupedView(marked, positions, new Set(['part1'])).collapsed;
    expect(summary).toMatchObject({ name: 'part1', start: false, endsCall: true, errors: 1, warnings: 1 });
  });

  it('is drawn as a node with handles and bundled edges that xyflow can place before drawing', () => {
    const view = groupedView(graph, positions, new Set(['part0']));
    const [node] = buildGroupNodes(view.collapsed, []);
    expect(node).toMatchObject({ id: 'group:part0', type: 'group-node', draggable: false, selectable: false });
    expect(node!.handles?.map((h) => h.id)).toEqual(['in', 'out']);
    expect(node!.ariaLabel).toBe('Group part0, collapsed: 3 states, start');
    // Unchanged, it is the same object (xyflow skips it).
    expect(buildGroupNodes(view.collapsed, [node!])[0]).toBe(node);
    const edges = buildBundleEdges(view.bundles, []);
    expect(edges.map((e) => [e.source, e.target, e.ariaLabel])).toEqual([
      ['group:part0', 's3', '2 transitions: group:part0 to s3'],
      ['group:part0', 's4', 'skip2: group:part0 to s4'],
      ['s8', 'group:part0', 'skip8: s8 to group:part0'],
      ['s9', 'group:part0', '2 transitions: s9 to group:part0'],
    ]);
    expect(buildBundleEdges(view.bundles, edges)).toEqual(edges);
    expect(buildBundleEdges(view.bundles, edges)[0]).toBe(edges[0]);
  });

  it("shows a talk's live path and the tests' coverage of the states it hides: the conversation in it, through it, the transitions taken into it, the states untested", () => {
    const view = groupedView(graph, positions, new Set(['part0', 'part1']));
    const into = graph.links.find((l) => l.source === 's2' && l.target === 's3')!;
    // A talk that went s0 → s1 → s2 → s3 → s4 and is in s4 now; no test reaches s5.
    const marks: TalkMarks = {
      active: 's4',
      live: true,
      visits: new Map([['s0', [1]], ['s1', [2]], ['s2', [3]], ['s3', [4]], ['s4', [5]]]),
      taken: new Map([[into.id, [4]]]),
      loops: new Map(),
      lastLink: null,
      untested: { states: new Set(['s5']), links: new Set() },
    };
    const nodes = buildGroupNodes(view.collapsed, [], marks);
    const byName = Object.fromEntries(nodes.map((n) => [n.data.summary.name, n]));
    expect(byName.part0!.data).toMatchObject({ talk: 'visited', pastRun: false, untested: 0 });
    expect(byName.part1!.data).toMatchObject({ talk: 'active', pastRun: false, untested: 1 });
    expect(byName.part1!.ariaLabel).toBe('Group part1, collapsed: 3 states, the conversation is in it, 1 untested');
    // The move from part0 into part1 is lit on the bundle between the two groups.
    const edges = buildBundleEdges(view.bundles, [], marks);
    const between = edges.find((e) => e.source === 'group:part0' && e.target === 'group:part1')!;
    expect(between.data!.bundle.links).toContain(into.id);
    expect(between.data!.taken).toBe(true);
    expect(edges.filter((e) => e.data!.taken)).toEqual([between]);
    // Once the talk has ended the marks stay, drawn as a past run; a new mark is a new object.
    const ended = buildGroupNodes(view.collapsed, nodes, { ...marks, live: false });
    expect(ended.find((n) => n.data.summary.name === 'part1')!.data).toMatchObject({ talk: 'active', pastRun: true });
    expect(ended[1]).not.toBe(nodes[1]);
    // Without a talk or a test run, nothing is lit.
    expect(buildGroupNodes(view.collapsed, []).map((n) => n.data.talk)).toEqual([null, null]);
  });

  it('is named by its node id, and says which state inside it is to be expanded for', () => {
    expect(groupOfNodeId(groupNodeId('part2'))).toBe('part2');
    expect(groupOfNodeId('s2')).toBeNull();
    expect(collapsedGroupOf(graph, new Set(['part2']), 's7')).toBe('part2');
    expect(collapsedGroupOf(graph, new Set(['part2']), 's3')).toBeNull();
    expect(collapsedGroupOf(graph, new Set(), 's7')).toBeNull();
  });
});

describe('which groups are collapsed', () => {
  /** The browser's storage, as a page has it (these tests run in Node). */
  function storage() {
    const kept = new Map<string, string>();
    return { kept, getItem: (key: string) => kept.get(key) ?? null, setItem: (key: string, value: string) => void kept.set(key, value), removeItem: (key: string) => void kept.delete(key) };
  }

  it('is kept per flow, and forgotten once none is', () => {
    const store = storage();
    saveCollapsed(store, 'flow-1', new Set(['part1', 'part0']));
    expect([...loadCollapsed(store, 'flow-1')]).toEqual(['part0', 'part1']);
    expect([...loadCollapsed(store, 'flow-2')]).toEqual([]);
    saveCollapsed(store, 'flow-1', new Set());
    expect(store.kept.size).toBe(0);
  });

  it('reads as none collapsed when what is stored is not a list of names', () => {
    const store = storage();
    store.setItem(collapsedGroupsKey('flow-2'), '{not json');
    expect([...loadCollapsed(store, 'flow-2')]).toEqual([]);
    store.setItem(collapsedGroupsKey('flow-2'), '["part0", 3]');
    expect([...loadCollapsed(store, 'flow-2')]).toEqual(['part0']);
  });

  it('is kept nowhere for a flow shown without an id, and a refused write changes nothing', () => {
    const store = storage();
    saveCollapsed(store, null, new Set(['part0']));
    expect(store.kept.size).toBe(0);
    const full = { ...store, setItem: () => { throw new Error('QuotaExceededError'); } };
    expect(() => saveCollapsed(full, 'flow-1', new Set(['part0']))).not.toThrow();
  });
});

describe('setting a state group', () => {
  it('writes the key, and takes it away for no group', () => {
    const set = setStateGroup(data, 's1', '  billing ');
    expect((set.states as Record<string, { group?: string }>).s1!.group).toBe('billing');
    const cleared = setStateGroup(set, 's1', '');
    expect(Object.hasOwn((cleared.states as Record<string, object>).s1!, 'group')).toBe(false);
    expect(setStateGroup(data, 'nowhere', 'billing')).toBe(data);
  });
});
