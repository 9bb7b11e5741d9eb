// The graph the editor draws, derived from the flow's data (STYLE: the document is the source of
// truth, graph nodes and edges are derived from it). One card per state, one link per
// transition labelled with its tool, and a self-loop for every listed tool that stays.
//
// the extended flow keys show too: a state's on-entry line, one that ends the call, one that cannot
// be interrupted, the global tools that lead to it, and an http tool's result branches
// (`on_tool_result`) as links of their own.
//
// A phone keypad's moves (a state's `dtmf`) are links too, labelled as coverage names them
// ("key 1", "collect account_number"), so a key no flow test presses is painted like a tool.
//
// Derivation runs after every edit and every re-parse of the YAML; on a 200-state flow most
// states did not change, so cards and links equal to the previous derivation are handed back as
// the same objects. The graph component then keeps its xyflow node objects for them, and xyflow
// skips re-measuring and re-rendering what is unchanged.
import type { Diagnostic } from '../types.ts';
import { keypadMoves } from '../keypad.ts';
import { initialStateOf, readStates, type FlowData } from './flow-data.ts';

export type ToolChipKind =
  /** Listed, with a transition to another state. */
  | 'move'
  /** Listed, no transition (or one back to its own state): the session stays. */
  | 'stay'
  /** A transition to a state that does not exist. */
  | 'dangling'
  /** Defined or given a transition but not listed: the model cannot call it here. */
  | 'unlisted';

export interface ToolChip {
  name: string;
  kind: ToolChipKind;
  target: string | null;
}

export interface StateCard {
  name: string;
  initial: boolean;
  /** The card prompt (`ui.prompt`) the user sees, shortened for the node. */
  excerpt: string;
  tools: ToolChip[];
  errors: number;
  warnings: number;
  /** `on_enter.say`: the state says a fixed line on entering. */
  says: boolean;
  /** `on_enter.end_session`: entering it ends the call. */
  endsCall: boolean;
  /** `interruptible: false`: what it says on entering cannot be cut. */
  uninterruptible: boolean;
  /** Global tools whose target this state is: reached from every state. */
  globalTools: string[];
  /** The group it is drawn in (`group`), or null for none. */
  group: string | null;
}

export interface TransitionLink {
  /** Unique: a tool belongs to one state, so source + tool names one transition. */
  id: string;
  source: string;
  target: string;
  tool: string;
  selfLoop: boolean;
  /** Among the self-loops of one state (they are drawn nested), or among parallel links. */
  index: number;
  count: number;
  /** One of the states an http tool's answer may choose (`on_tool_result`), not a call's move. */
  branch?: boolean;
}

export interface FlowGraph {
  cards: StateCard[];
  links: TransitionLink[];
  initial: string | null;
}

export const EMPTY_GRAPH: FlowGraph = { cards: [], links: [], initial: null };

const EXCERPT_LENGTH = 110;

export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT_LENGTH ? `${flat.slice(0, EXCERPT_LENGTH - 1).trimEnd()}…` : flat;
}

export function linkId(source: string, tool: string): string {
  return `${source}→${tool}`;
}

/** A result branch: one tool of one state may lead to several states by its answer. */
export function branchLinkId(source: string, tool: string, target: string): string {
  return `${source}→${tool}⇢${target}`;
}

type Obj = Record<string, unknown>;
const asObj = (value: unknown): Obj => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : {});

/** Global tool names by the state they lead to. */
function globalTargets(data: FlowData | null): Map<string, string[]> {
  const byTarget = new Map<string, string[]>();
  for (const [tool, entry] of Object.entries(asObj(asObj(asObj(data).settings).global_tools))) {
    const target = asObj(entry).target;
    if (typeof target === 'string') byTarget.set(target, [...(byTarget.get(target) ?? []), tool]);
  }
  return byTarget;
}

/** The state a diagnostic points into, if any. */
export function stateOfDiagnostic(diagnostic: Pick<Diagnostic, 'path'>): string | null {
  const [root, state] = diagnostic.path;
  return root === 'states' && typeof state === 'string' ? state : null;
}

export function deriveGraph(data: FlowData | null, diagnostics: ReadonlyArray<Diagnostic>, previous: FlowGraph = EMPTY_GRAPH): FlowGraph {
  const states = readStates(data);
  const names = new Set(states.map((s) => s.name));
  const initial = initialStateOf(data);
  const counts = new Map<string, { errors: number; warnings: number }>();
  for (const diagnostic of diagnostics) {
    const state = stateOfDiagnostic(diagnostic);
    if (state === null) continue;
    const count = counts.get(state) ?? { errors: 0, warnings: 0 };
    if (diagnostic.severity === 'error') count.errors++;
    else count.warnings++;
    counts.set(state, count);
  }

  const globals = globalTargets(data);
  const rawStates = asObj(asObj(data).states);
  const oldCards = new Map(previous.cards.map((c) => [c.name, c]));
  const oldLinks = new Map(previous.links.map((l) => [l.id, l]));
  const cards: StateCard[] = [];
  const links: TransitionLink[] = [];

  for (const state of states) {
    const tools: ToolChip[] = state.tools.map((tool) => {
      const kind: ToolChipKind = !tool.listed
        ? 'unlisted'
        : tool.target === null || tool.target === state.name
          ? 'stay'
          : names.has(tool.target)
            ? 'move'
            : 'dangling';
      return { name: tool.name, kind, target: tool.target };
    });
    const raw = Object.hasOwn(rawStates, state.name) ? asObj(rawStates[state.name]) : {};
    const onEnter = asObj(raw.on_enter);
    const card: StateCard = {
      name: state.name,
      initial: state.name === initial,
      excerpt: excerpt(state.uiPrompt),
      tools,
      errors: counts.get(state.name)?.errors ?? 0,
      warnings: counts.get(state.name)?.warnings ?? 0,
      says: typeof onEnter.say === 'string' && onEnter.say.trim() !== '',
      endsCall: onEnter.end_session === true,
      uninterruptible: raw.interruptible === false,
      globalTools: globals.get(state.name) ?? [],
      // Drawn as written, even a name the validator refuses: the draft is shown as it is.
      group: typeof raw.group === 'string' && raw.group.trim() !== '' ? raw.group : null,
    };
    const old = oldCards.get(state.name);
    cards.push(old && sameCard(old, card) ? old : card);

    // A transition from a tool that is not listed never fires; drawing it would mislead, and the
    // chip and the diagnostic already say so.
    const moving = tools.filter((t) => t.kind === 'move');
    const staying = tools.filter((t) => t.kind === 'stay');
    // Result branches of listed tools to other existing states (a branch back here is the stay loop).
    const listedNames = new Set(tools.filter((t) => t.kind !== 'unlisted').map((t) => t.name));
    const branches: Array<{ tool: string; target: string }> = [];
    for (const [tool, choices] of Object.entries(asObj(asObj(raw.transitions).on_tool_result))) {
      if (!listedNames.has(tool) || !Array.isArray(choices)) continue;
      for (const target of new Set(choices)) {
        if (typeof target === 'string' && target !== state.name && names.has(target)) branches.push({ tool, target });
      }
    }
    // The keypad's moves to existing states; a key that leads back here stays, as a tool does.
    const keypad = keypadLinks(raw.dtmf).filter((k) => names.has(k.target));
    const keypadStays = keypad.filter((k) => k.target === state.name).map((k) => ({ name: k.tool }));
    // Moves, branches and keys to one state bow apart together.
    const outgoing = [
      ...moving.map((t) => ({ tool: t.name, target: t.target!, branch: false })),
      ...branches.map((b) => ({ ...b, branch: true })),
      ...keypad.filter((k) => k.target !== state.name).map((k) => ({ ...k, branch: false })),
    ];
    const byTarget = new Map<string, typeof outgoing>();
    for (const link of outgoing) byTarget.set(link.target, [...(byTarget.get(link.target) ?? []), link]);
    for (const link of outgoing) {
      const siblings = byTarget.get(link.target)!;
      pushLink(links, oldLinks, {
        id: link.branch ? branchLinkId(state.name, link.tool, link.target) : linkId(state.name, link.tool),
        source: state.name,
        target: link.target,
        tool: link.tool,
        selfLoop: false,
        index: siblings.indexOf(link),
        count: siblings.length,
        ...(link.branch ? { branch: true } : {}),
      });
    }
    const loops = [...staying, ...keypadStays];
    loops.forEach((tool, index) =>
      pushLink(links, oldLinks, {
        id: linkId(state.name, tool.name),
        source: state.name,
        target: state.name,
        tool: tool.name,
        selfLoop: true,
        index,
        count: loops.length,
      }),
    );
  }

  const reused = cards.length === previous.cards.length && cards.every((c, i) => c === previous.cards[i]);
  const linksReused = links.length === previous.links.length && links.every((l, i) => l === previous.links[i]);
  if (reused && linksReused && initial === previous.initial) return previous;
  return { cards, links, initial };
}

/** The keypad's moves as the document has them so far (the studio draws a draft with errors too). */
function keypadLinks(dtmf: unknown): Array<{ tool: string; target: string }> {
  const keypad = asObj(dtmf);
  const keys = Object.entries(asObj(keypad.keys)).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  const collect = asObj(keypad.collect);
  const { into, then } = collect;
  const moves = keypadMoves({ keys: Object.fromEntries(keys), ...(typeof into === 'string' && typeof then === 'string' ? { collect: { into, then } } : {}) });
  return moves.map((m) => ({ tool: m.via, target: m.to }));
}

function pushLink(links: TransitionLink[], old: Map<string, TransitionLink>, link: TransitionLink): void {
  const before = old.get(link.id);
  links.push(before && sameLink(before, link) ? before : link);
}

function sameLink(a: TransitionLink, b: TransitionLink): boolean {
  return a.source === b.source && a.target === b.target && a.tool === b.tool && a.selfLoop === b.selfLoop && a.index === b.index && a.count === b.count && a.branch === b.branch;
}

/**
 * `next` (a graph derived elsewhere: the flow worker's, or the server's view) with the cards and
 * links equal to `previous`'s handed back as `previous`'s objects, and `previous` itself when
 * nothing differs: the canvas then keeps what it drew for them, as after a derivation here.
 */
export function keepSame(next: FlowGraph, previous: FlowGraph): FlowGraph {
  const oldCards = new Map(previous.cards.map((c) => [c.name, c]));
  const oldLinks = new Map(previous.links.map((l) => [l.id, l]));
  const cards = next.cards.map((card) => {
    const old = oldCards.get(card.name);
    return old && old.name === card.name && sameCard(old, card) ? old : card;
  });
  const links = next.links.map((link) => {
    const old = oldLinks.get(link.id);
    return old && sameLink(old, link) ? old : link;
  });
  const reused = cards.length === previous.cards.length && cards.every((c, i) => c === previous.cards[i]);
  const linksReused = links.length === previous.links.length && links.every((l, i) => l === previous.links[i]);
  if (reused && linksReused && next.initial === previous.initial) return previous;
  return { cards, links, initial: next.initial };
}

function sameCard(a: StateCard, b: StateCard): boolean {
  return (
    a.initial === b.initial &&
    a.excerpt === b.excerpt &&
    a.errors === b.errors &&
    a.warnings === b.warnings &&
    a.says === b.says &&
    a.endsCall === b.endsCall &&
    a.uninterruptible === b.uninterruptible &&
    a.group === b.group &&
    a.globalTools.join() === b.globalTools.join() &&
    a.tools.length === b.tools.length &&
    a.tools.every((t, i) => t.name === b.tools[i]!.name && t.kind === b.tools[i]!.kind && t.target === b.tools[i]!.target)
  );
}

/**
 * The states in the order a reader follows the flow: the start state, then breadth-first along
 * its transitions (in the order its tools are listed), then any state not reached from it, in
 * the YAML's order. The canvas's Tab order.
 */
export function readingOrder(graph: Pick<FlowGraph, 'cards' | 'links' | 'initial'>): string[] {
  const names = new Set(graph.cards.map((c) => c.name));
  const next = new Map<string, string[]>();
  for (const link of graph.links) if (!link.selfLoop) next.set(link.source, [...(next.get(link.source) ?? []), link.target]);
  const seen = new Set<string>();
  const order: string[] = [];
  const visit = (root: string) => {
    if (seen.has(root)) return;
    seen.add(root);
    order.push(root);
    for (let i = order.length - 1; i < order.length; i++) {
      for (const target of next.get(order[i]!) ?? []) {
        if (seen.has(target) || !names.has(target)) continue;
        seen.add(target);
        order.push(target);
      }
    }
  };
  if (graph.initial !== null && names.has(graph.initial)) visit(graph.initial);
  for (const name of names) visit(name);
  return order;
}
