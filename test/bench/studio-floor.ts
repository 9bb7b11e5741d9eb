// The studio bench's floor: a bare Svelte Flow page (test/bench/studio-floor/, the same
// @xyflow/svelte and Svelte as the studio, built by Vite in production mode as the studio is)
// drawing the nodes and edges the studio ends up with for a flow: the states at dagre's
// positions (computed here by the studio's own open job, as its flow worker does), default nodes
// with the state's name, default edges with the transition's name, the canvas the size of the
// studio's, opened at the view the studio settled on. Like the studio above 100 states it draws
// only what is in view and gives each node its size and handles (else xyflow draws every node
// once to measure it), so the floor is what xyflow itself needs to show that view: no YAML, no
// layout, no edge routing, no studio around the canvas.
import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { analyzeFlowText } from '../../server/flow/graph/analyze.ts';
import { openAnalysed } from '../../server/flow/graph/laid-out.ts';
import { DRAW_IN_VIEW_ONLY_ABOVE } from '../../renderer/src/features/editor/graph/graph-view.ts';
import { NODE_WIDTH, estimateHeight } from '../../server/flow/graph/layout.ts';

const source = fileURLToPath(new URL('./studio-floor/', import.meta.url));

/** Where the studio's canvas settled once a flow was on screen: its pane's size and its view. */
export interface StudioView {
  pane: { width: number; height: number };
  viewport: { x: number; y: number; zoom: number };
}

/** The studio canvas's size and view, read from its page (the flow on screen). */
export function studioView(page: Page): Promise<StudioView> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const box = doc.querySelector('.svelte-flow').getBoundingClientRect();
    const transform: string = doc.querySelector('.svelte-flow__viewport').style.transform;
    const [, x, y, zoom] = /translate\(([-\d.e]+)px, ?([-\d.e]+)px\) scale\(([-\d.e]+)\)/.exec(transform) ?? [];
    if (zoom === undefined) throw new Error(`the studio's viewport reads "${transform}"`);
    return { pane: { width: Math.round(box.width), height: Math.round(box.height) }, viewport: { x: Number(x), y: Number(y), zoom: Number(zoom) } };
  });
}

/** The floor page's data for `yaml`: the studio's nodes and edges as bare Svelte Flow ones. */
export function floorData(yaml: string, view: StudioView) {
  const { graph, laidOut } = openAnalysed(analyzeFlowText(yaml), {});
  if (!laidOut) throw new Error('the flow was not laid out');
  const presize = graph.cards.length > DRAW_IN_VIEW_ONLY_ABOVE;
  const nodes = graph.cards.map((card) => {
    const width = NODE_WIDTH;
    const height = estimateHeight(card);
    return {
      id: card.name,
      position: laidOut.positions[card.name]!,
      data: { label: card.name },
      ...(presize
        ? {
            measured: { width, height },
            handles: [
              { id: null, type: 'target', position: 'top', x: width / 2 - 4, y: -4, width: 8, height: 8 },
              { id: null, type: 'source', position: 'bottom', x: width / 2 - 4, y: height - 4, width: 8, height: 8 },
            ],
          }
        : { width }),
    };
  });
  const edges = graph.links.map((link) => ({ id: link.id, source: link.source, target: link.target, label: link.tool }));
  return { nodes, edges, inViewOnly: presize, ...view };
}

export interface FloorServer {
  /** The page's address for the data written with `put`. */
  url(states: number): string;
  put(states: number, data: ReturnType<typeof floorData>): Promise<void>;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };

/** Builds the floor page into a temporary folder and serves it on loopback. */
export async function startFloor(): Promise<FloorServer> {
  const outDir = await mkdtemp(join(tmpdir(), 'voxflow-studio-floor-'));
  const { build } = await import('vite');
  const { svelte } = await import('@sveltejs/vite-plugin-svelte');
  process.env.NODE_ENV = 'production';
  await build({ configFile: false, root: source, base: './', logLevel: 'warn', mode: 'production', plugins: [svelte()], build: { outDir, emptyOutDir: true, target: 'es2022' } });
  const server: Server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://floor').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(outDir, path === '/' ? 'index.html' : path);
    readFile(file).then(
      (body) => response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body),
      () => response.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (states) => `http://127.0.0.1:${port}/index.html?states=${states}`,
    put: (states, data) => writeFile(join(outDir, `data-${states}.json`), JSON.stringify(data)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(outDir, { recursive: true, force: true });
    },
  };
}
