// Prints the import graph between the product's folders (server/<folder>, renderer/src/<folder>,
// electron), with how many files import across each edge and the folder cycles, so a change of
// layering can be shown as a before and after:
//   npx tsx test/architecture/print-folder-graph.ts [ROOT]
// ROOT defaults to this checkout; pass a `git worktree` of an older commit for the "before".
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readImportGraph } from './import-graph.ts';

const root = resolve(process.argv[2] ?? fileURLToPath(new URL('../..', import.meta.url)));
const folders = ['server', 'renderer/src', 'electron'].filter((folder) => existsSync(resolve(root, folder)));

/**
 * server/engine/session.ts → server/engine. A file directly in server/ (app.ts, errors.ts,
 * config.ts…) stands for itself: the composition root and the leaf modules every layer reads sit
 * side by side there, and one node for all of them would show a cycle that no file has.
 */
function folderOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] === 'electron') return 'electron';
  const base = parts[0] === 'renderer' ? 2 : 1;
  return parts.slice(0, base + 1).join('/').replace(/\.(ts|mts|mjs|svelte)$/, '');
}

/** Edge "from -> to" → the files importing across it; runtime imports, or type-only ones too. */
function folderEdges(withTypes: boolean): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const edge of readImportGraph(root, folders)) {
    const from = folderOf(edge.from);
    const to = folderOf(edge.to.replace(/\.(js|mjs)$/, '.ts'));
    if (from === to || (edge.typeOnly && !withTypes)) continue;
    const key = `${from} -> ${to}`;
    if (!edges.has(key)) edges.set(key, new Set());
    edges.get(key)!.add(edge.from);
  }
  return edges;
}

function graphOf(edges: Map<string, Set<string>>): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const key of edges.keys()) {
    const [from, to] = key.split(' -> ') as [string, string];
    if (!graph.has(from)) graph.set(from, new Set());
    graph.get(from)!.add(to);
  }
  return graph;
}

/** Folder pairs that import each other, directly or through others (the strongly connected ones). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return out;
}

const runtime = folderEdges(false);
const lines = [...runtime.entries()].sort(([a], [b]) => a.localeCompare(b));
console.log(`${lines.length} folder-to-folder edges (runtime imports; type-only imports left out), files importing:`);
for (const [key, files] of lines) console.log(`  ${key}  (${files.size})`);
for (const [label, edges] of [['runtime imports', runtime], ['counting type-only imports too', folderEdges(true)]] as const) {
  const found = cycles(graphOf(edges));
  console.log(found.length === 0 ? `no folder cycles (${label})` : `${found.length} folder cycle(s) (${label}):`);
  for (const component of found) console.log(`  ${component.join(' <-> ')}`);
}
