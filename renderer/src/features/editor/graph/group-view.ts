// Collapsed groups as xyflow nodes and their bundled transitions as xyflow edges (groups.ts says
// what they are). As in graph-view.ts, a node or edge whose content is unchanged is handed back
// as the very same object, so xyflow neither re-measures nor re-draws it.
import type { Edge, Node } from '@xyflow/svelte';
import { presized } from './graph-view.ts';
import { GROUP_NODE_HEIGHT, GROUP_NODE_WIDTH, bundleLabel, groupNodeId, type BundledLink, type GroupSummary } from './groups.ts';

export interface GroupNodeData extends Record<string, unknown> {
  summary: GroupSummary;
}

export interface BundleEdgeData extends Record<string, unknown> {
  bundle: BundledLink;
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
    a.warnings === b.warnings
  );
}

/** A node for each collapsed group, sized and with its handles (it is never dragged or selected). */
export function buildGroupNodes(collapsed: ReadonlyArray<GroupSummary>, previous: ReadonlyArray<Node>): GroupNode[] {
  const before = new Map(previous.filter((n): n is GroupNode => n.type === 'group-node').map((n) => [n.id, n]));
  return collapsed.map((summary) => {
    const id = groupNodeId(summary.name);
    const old = before.get(id);
    if (old && sameSummary(old.data.summary, summary)) return old;
    const marks = [summary.start ? 'start' : '', summary.endsCall ? 'ends the call' : '', summary.errors > 0 ? `${summary.errors} errors` : ''].filter(Boolean);
    const node: GroupNode = {
      id,
      type: 'group-node',
      position: summary.position,
      selectable: false,
      draggable: false,
      connectable: false,
      deletable: false,
      ariaLabel: `Group ${summary.name}, collapsed: ${summary.states} states${marks.length > 0 ? `, ${marks.join(', ')}` : ''}`,
      data: { summary },
      width: GROUP_NODE_WIDTH,
      height: GROUP_NODE_HEIGHT,
    };
    return presized({ ...node, measured: { width: GROUP_NODE_WIDTH, height: GROUP_NODE_HEIGHT } }, GROUP_NODE_HEIGHT);
  });
}

/** An edge for each bundle of transitions into, out of or between collapsed groups. */
export function buildBundleEdges(bundles: ReadonlyArray<BundledLink>, previous: ReadonlyArray<Edge>): BundleEdge[] {
  const before = new Map(previous.filter((e): e is BundleEdge => e.type === 'bundle').map((e) => [e.id, e]));
  return bundles.map((bundle) => {
    const old = before.get(bundle.id);
    if (old && old.data!.bundle.tools.join('\n') === bundle.tools.join('\n')) return old;
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
      data: { bundle },
    } as BundleEdge;
  });
}
