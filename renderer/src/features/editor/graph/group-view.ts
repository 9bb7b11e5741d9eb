// Collapsed groups as xyflow nodes and their bundled transitions as xyflow edges (groups.ts says
// what they are). As in graph-view.ts, a node or edge whose content is unchanged is handed back
// as the very same object, so xyflow neither re-measures nor re-draws it.
import type { Edge, Node } from '@xyflow/svelte';
import { presized } from './graph-view.ts';
import type { TalkMarks } from './marks.ts';
import { GROUP_NODE_HEIGHT, GROUP_NODE_WIDTH, bundleLabel, groupNodeId, type BundledLink, type GroupSummary } from './groups.ts';

export interface GroupNodeData extends Record<string, unknown> {
  summary: GroupSummary;
  /** Lit by a test-talk or a session replay as its states would be: the conversation is (or ended) in one of them, or went through one. */
  talk: 'active' | 'visited' | null;
  /** The talk has ended: its marks are drawn quieter. */
  pastRun: boolean;
  /** How many of its states no flow test reaches (the Tests tab's coverage). */
  untested: number;
}

export interface BundleEdgeData extends Record<string, unknown> {
  bundle: BundledLink;
  /** A transition it stands for was taken (a talk, a replay). */
  taken: boolean;
  pastRun: boolean;
  /** A transition it stands for is taken by no flow test. */
  untested: boolean;
}

export type GroupNode = Node<GroupNodeData, 'group-node'>;
export type BundleEdge = Edge<BundleEdgeData, 'bundle'>;

function sameSummary(a: GroupSummary, b: GroupSummary): boolean {
  return (
    a.name === b.name &&
    a.position.x === b.position.x &&
    a.position.y === b.position.y &&
    a.states === b.states &&
    a.start === b.start &&
    a.endsCall === b.endsCall &&
    a.errors === b.errors &&
    a.warnings === b.warnings &&
    a.members.join('\n') === b.members.join('\n')
  );
}

/** What a collapsed group shows of a talk and of coverage: the marks its states would have, gathered. */
function groupMarks(summary: GroupSummary, marks: TalkMarks | null): Pick<GroupNodeData, 'talk' | 'pastRun' | 'untested'> {
  if (!marks) return { talk: null, pastRun: false, untested: 0 };
  const talk = marks.active !== null && summary.members.includes(marks.active) ? 'active' : summary.members.some((m) => (marks.visits.get(m)?.length ?? 0) > 0) ? 'visited' : null;
  const untested = marks.untested ? summary.members.filter((m) => marks.untested!.states.has(m)).length : 0;
  return { talk, pastRun: talk !== null && !marks.live, untested };
}

/** A node for each collapsed group, sized and with its handles (it is never dragged or selected). */
export function buildGroupNodes(collapsed: ReadonlyArray<GroupSummary>, previous: ReadonlyArray<Node>, talkMarks: TalkMarks | null = null): GroupNode[] {
  const before = new Map(previous.filter((n): n is GroupNode => n.type === 'group-node').map((n) => [n.id, n]));
  return collapsed.map((summary) => {
    const id = groupNodeId(summary.name);
    const old = before.get(id);
    const lit = groupMarks(summary, talkMarks);
    if (old && sameSummary(old.data.summary, summary) && old.data.talk === lit.talk && old.data.pastRun === lit.pastRun && old.data.untested === lit.untested) return old;
    const marks = [
      summary.start ? 'start' : '',
      summary.endsCall ? 'ends the call' : '',
      summary.errors > 0 ? `${summary.errors} errors` : '',
      lit.talk === 'active' ? 'the conversation is in it' : lit.talk === 'visited' ? 'the conversation went through it' : '',
      lit.untested > 0 ? `${lit.untested} untested` : '',
    ].filter(Boolean);
    const node: GroupNode = {
      id,
      type: 'group-node',
      position: summary.position,
      selectable: false,
      draggable: false,
      connectable: false,
      deletable: false,
      ariaLabel: `Group ${summary.name}, collapsed: ${summary.states} states${marks.length > 0 ? `, ${marks.join(', ')}` : ''}`,
      data: { summary, ...lit },
      width: GROUP_NODE_WIDTH,
      height: GROUP_NODE_HEIGHT,
    };
    return presized({ ...node, measured: { width: GROUP_NODE_WIDTH, height: GROUP_NODE_HEIGHT } }, GROUP_NODE_HEIGHT);
  });
}

/** An edge for each bundle of transitions into, out of or between collapsed groups. */
export function buildBundleEdges(bundles: ReadonlyArray<BundledLink>, previous: ReadonlyArray<Edge>, talkMarks: TalkMarks | null = null): BundleEdge[] {
  const before = new Map(previous.filter((e): e is BundleEdge => e.type === 'bundle').map((e) => [e.id, e]));
  return bundles.map((bundle) => {
    const old = before.get(bundle.id);
    const taken = talkMarks !== null && bundle.links.some((link) => (talkMarks.taken.get(link)?.length ?? 0) > 0);
    const pastRun = taken && !talkMarks!.live;
    const untested = talkMarks?.untested ? bundle.links.some((link) => talkMarks.untested!.links.has(link)) : false;
    const data = old?.data;
    if (old && data && data.bundle.tools.join('\n') === bundle.tools.join('\n') && data.taken === taken && data.pastRun === pastRun && data.untested === untested) return old;
    return {
      id: bundle.id,
      type: 'bundle',
      source: bundle.source,
      target: bundle.target,
      sourceHandle: 'out',
      targetHandle: 'in',
      deletable: false,
      selectable: false,
      markerEnd: { type: 'arrowclosed', width: 18, height: 18 },
      ariaLabel: `${bundleLabel(bundle)}: ${bundle.source} to ${bundle.target}`,
      data: { bundle, taken, pastRun, untested },
    } as BundleEdge;
  });
}
