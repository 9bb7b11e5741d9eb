// Groups on the canvas (docs/flows.md#groups): the states that name one `group` are framed
// together, and a collapsed group is drawn as one node in their stead. This is the pure model of
// what is drawn: which states and transitions stay, where each frame and each group node goes,
// and the transitions into and out of a collapsed group bundled into one edge per pair of ends.
// Which groups are collapsed is the designer's view preference (FlowGraph keeps it per flow in
// localStorage), never part of the document.
import type { FlowGraph, StateCard, TransitionLink } from '../../../../../server/flow/graph/graph.ts';
import { NODE_WIDTH, estimateHeight, loopRoom, type Positions, type XY } from '../../../../../server/flow/graph/layout.ts';

/** A collapsed group's node is drawn this size (GroupNode.svelte). */
export const GROUP_NODE_WIDTH = NODE_WIDTH;
export const GROUP_NODE_HEIGHT = 104;
/** Room round a group's states inside its frame, and above them for its label and button. */
export const FRAME_PADDING = 22;
export const FRAME_HEADER = 52;

const GROUP_ID_PREFIX = 'group:';

/** The node id a collapsed group is drawn with (a group name has no `:`, a state name rarely starts so). */
export function groupNodeId(group: string): string {
  return `${GROUP_ID_PREFIX}${group}`;
}

/** The group a node id stands for, or null for a state's node. */
export function groupOfNodeId(id: string): string | null {
  return id.startsWith(GROUP_ID_PREFIX) ? id.slice(GROUP_ID_PREFIX.length) : null;
}

/** What a collapsed group's node shows of the states inside it. */
export interface GroupSummary {
  name: string;
  /** The node's place: the top-left corner of where its states are. */
  position: XY;
  states: number;
  /** It holds the start state. */
  start: boolean;
  /** It holds a state that ends the call. */
  endsCall: boolean;
  errors: number;
  warnings: number;
  /** The states it holds, in the flow's order: the live path and coverage are painted on the node for them. */
  members: string[];
}

/**
 * A frame round an expanded group's states (flow coordinates), with its label above them. A group
 * whose states lie in separate places (a long flow's ranks wrap into bands side by side) has a
 * frame round each place; the first (with the group's first state) carries the label.
 */
export interface GroupFrame {
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
  states: number;
  /** The group's first frame: its name, count and Collapse button are on it. */
  labelled: boolean;
}

/** The transitions between two drawn ends when one or both is a collapsed group. */
export interface BundledLink {
  id: string;
  /** Node ids: a state's name, or groupNodeId() of a collapsed group. */
  source: string;
  target: string;
  /** The tools (or keys) of the transitions it stands for, in the flow's order. */
  tools: string[];
  /** The ids of those transitions (TransitionLink.id): a talk or a test that took one lights the bundle. */
  links: string[];
}

export interface GroupedView {
  /** The states drawn as cards and the links between them; `graph` itself when nothing is collapsed. */
  graph: FlowGraph;
  collapsed: GroupSummary[];
  frames: GroupFrame[];
  bundles: BundledLink[];
}

/** Each group's states, in the flow's order, by group name (in the order groups first appear). */
export function groupMembers(cards: ReadonlyArray<StateCard>): Map<string, StateCard[]> {
  const members = new Map<string, StateCard[]>();
  for (const card of cards) {
    if (card.group === null) continue;
    const list = members.get(card.group);
    if (list) list.push(card);
    else members.set(card.group, [card]);
  }
  return members;
}

/** The group `state` is in, when that group is collapsed: drawing the state means expanding it. */
export function collapsedGroupOf(graph: FlowGraph, collapsed: ReadonlySet<string>, state: string): string | null {
  const group = graph.cards.find((c) => c.name === state)?.group ?? null;
  return group !== null && collapsed.has(group) ? group : null;
}

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** States whose boxes are closer than this (flow px) are in one place. */
const NEAR = 120;
/**
 * States a transition joins are in one place when they are less than this apart up or down
 * (flow px): a few ranks (layout.ts), far less than a band of a long flow's ranks, wrapped
 * beside the one before it, rises from the foot of one to the head of the next.
 */
const JOINED_SPAN = 640;

/**
 * The places `cards` lie in as they are placed (their loops included): states next to one
 * another, or joined by a transition a few ranks long, are one place, and a group that goes on
 * from the foot of one band of a long flow to the head of the next is two. The place of the first
 * card first; empty when none is placed.
 */
function placesOf(cards: ReadonlyArray<StateCard>, positions: Positions, links: ReadonlyArray<TransitionLink>): Box[] {
  const boxes: Box[] = [];
  const index = new Map<string, number>();
  for (const card of cards) {
    const at = positions[card.name];
    if (!at) continue;
    index.set(card.name, boxes.length);
    boxes.push({ left: at.x, top: at.y, right: at.x + NODE_WIDTH + loopRoom(card), bottom: at.y + estimateHeight(card) });
  }
  const root = boxes.map((_, i) => i);
  const find = (i: number): number => {
    while (root[i] !== i) i = root[i] = root[root[i]!]!;
    return i;
  };
  const join = (i: number, j: number) => {
    const [a, b] = [find(i), find(j)];
    // The smaller index stays the root: the first card's place is found first below.
    if (a !== b) root[Math.max(a, b)] = Math.min(a, b);
  };
  const near = (a: Box, b: Box) => a.left < b.right + NEAR && b.left < a.right + NEAR && a.top < b.bottom + NEAR && b.top < a.bottom + NEAR;
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) if (near(boxes[i]!, boxes[j]!)) join(i, j);
  }
  for (const link of links) {
    const i = index.get(link.source);
    const j = index.get(link.target);
    if (i !== undefined && j !== undefined && Math.abs(boxes[i]!.top - boxes[j]!.top) < JOINED_SPAN) join(i, j);
  }
  const places = new Map<number, Box>();
  boxes.forEach((box, i) => {
    const key = find(i);
    const place = places.get(key);
    places.set(key, place ? { left: Math.min(place.left, box.left), top: Math.min(place.top, box.top), right: Math.max(place.right, box.right), bottom: Math.max(place.bottom, box.bottom) } : { ...box });
  });
  return [...places.values()];
}

/**
 * What the canvas draws with `collapsed` groups collapsed: the other states and the links
 * between them as they are, a frame round each expanded group, a node for each collapsed group,
 * and one bundled link per (source, target) pair for the links with an end inside a collapsed
 * group (links inside one collapsed group are not drawn: the group node stands for them).
 */
export function groupedView(graph: FlowGraph, positions: Positions, collapsed: ReadonlySet<string>): GroupedView {
  const members = groupMembers(graph.cards);
  const frames: GroupFrame[] = [];
  const summaries: GroupSummary[] = [];
  for (const [name, cards] of members) {
    const places = placesOf(cards, positions, graph.links);
    if (places.length === 0) continue;
    if (!collapsed.has(name)) {
      places.forEach((box, i) =>
        frames.push({
          name,
          x: box.left - FRAME_PADDING,
          y: box.top - FRAME_PADDING - FRAME_HEADER,
          width: box.right - box.left + 2 * FRAME_PADDING,
          height: box.bottom - box.top + 2 * FRAME_PADDING + FRAME_HEADER,
          states: cards.length,
          labelled: i === 0,
        }),
      );
      continue;
    }
    // Where the group's first state is: where a reader of the flow meets the group.
    summaries.push({
      name,
      position: { x: places[0]!.left, y: places[0]!.top },
      states: cards.length,
      start: cards.some((c) => c.initial),
      endsCall: cards.some((c) => c.endsCall),
      errors: cards.reduce((sum, c) => sum + c.errors, 0),
      warnings: cards.reduce((sum, c) => sum + c.warnings, 0),
      members: cards.map((c) => c.name),
    });
  }
  if (summaries.length === 0) return { graph, collapsed: [], frames, bundles: [] };

  // Where each hidden state is drawn now: its group's node.
  const drawnAs = new Map<string, string>();
  for (const summary of summaries) for (const card of members.get(summary.name)!) drawnAs.set(card.name, groupNodeId(summary.name));
  const cards = graph.cards.filter((c) => !drawnAs.has(c.name));
  const links: TransitionLink[] = [];
  const bundles = new Map<string, BundledLink>();
  for (const link of graph.links) {
    const source = drawnAs.get(link.source);
    const target = drawnAs.get(link.target);
    if (source === undefined && target === undefined) {
      links.push(link);
      continue;
    }
    const from = source ?? link.source;
    const to = target ?? link.target;
    if (from === to) continue;
    const id = `bundle:${from}→${to}`;
    const bundle = bundles.get(id);
    if (bundle) {
      bundle.tools.push(link.tool);
      bundle.links.push(link.id);
    } else bundles.set(id, { id, source: from, target: to, tools: [link.tool], links: [link.id] });
  }
  return { graph: { cards, links, initial: graph.initial }, collapsed: summaries, frames, bundles: [...bundles.values()] };
}

/** What a bundled edge's label says: its one tool, or how many transitions it stands for. */
export function bundleLabel(bundle: Pick<BundledLink, 'tools'>): string {
  return bundle.tools.length === 1 ? bundle.tools[0]! : `${bundle.tools.length} transitions`;
}
