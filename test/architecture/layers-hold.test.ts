// Imports point down the layers only (docs/architecture.md), and the modules the studio bundles stay pure.
// The checker is proved on planted violations, so a passing run means the tree is clean, not
// that the checker sees nothing.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listSourceFiles, readImportGraph } from './import-graph.ts';
import { findImpureImports, findViolations, importsOf, layerOf } from './layers.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const PRODUCT = ['server', 'renderer/src', 'electron'];

describe('the layers of docs/architecture.md', () => {
  const edges = readImportGraph(ROOT, PRODUCT);

  it('reads the real import graph (a few hundred edges, value and type-only)', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges.some((e) => e.typeOnly)).toBe(true);
    expect(edges).toContainEqual({ from: 'server/app.ts', to: 'server/http/auth.ts', typeOnly: false });
  });

  it('hold in the whole product: no import crosses a layer the wrong way', () => {
    expect(findViolations(edges).map((v) => v.reason)).toEqual([]);
  });

  it('keep flow/, protocol/ and the provider catalog free of Node built-ins, so the studio can bundle them', () => {
    const files = new Map(listSourceFiles(ROOT, PRODUCT).map((f) => [f, readFileSync(ROOT + f, 'utf8')] as const));
    expect(findImpureImports(files).map((v) => v.reason)).toEqual([]);
  });

  it('catch a planted import of the engine from the flow model', () => {
    const planted = importsOf('server/flow/planted.ts', "import { VoiceSession } from '../engine/session.ts';\n");
    const violations = findViolations([...edges, ...planted]);
    expect(violations.map((v) => v.reason)).toEqual(['flow may not import engine: server/flow/planted.ts → server/engine/session.ts']);
  });

  it('catch the transports reaching into api/, and the studio importing engine types', () => {
    const planted = [
      ...importsOf('server/transports/websocket/planted.ts', "import { accountOf } from '../../api/sessions/index.ts';\n"),
      ...importsOf('renderer/src/features/talk/planted.ts', "import type { VoiceSession } from '../../../../server/engine/session.ts';\n"),
    ];
    expect(findViolations(planted).map((v) => v.reason)).toEqual([
      'transports may not import api: server/transports/websocket/planted.ts → server/api/sessions/index.ts',
      'renderer may not import engine (not even its types): renderer/src/features/talk/planted.ts → server/engine/session.ts',
    ]);
  });

  it('allow a type-only import where only types may cross, and refuse the same import at run time', () => {
    const typeOnly = importsOf('server/http/planted.ts', "import type { VoiceEngine } from '../engine/voice-engine.ts';\n");
    const mixed = importsOf('server/http/planted.ts', "import { type VoiceEngine, EngineRefusal } from '../engine/voice-engine.ts';\n");
    expect(findViolations(typeOnly)).toEqual([]);
    expect(findViolations(mixed).map((v) => v.reason)).toEqual(['http may not import engine: server/http/planted.ts → server/engine/voice-engine.ts']);
  });

  it('catch a Node built-in planted in the flow model, and a file in a folder no layer names', () => {
    const impure = findImpureImports(new Map([['server/flow/planted.ts', "import { readFile } from 'node:fs/promises';\n"]]));
    expect(impure.map((v) => v.reason)).toEqual(['flow is pure (the studio bundles it) but server/flow/planted.ts imports node:fs/promises']);
    expect(layerOf('server/gadgets/thing.ts')).toBeNull();
    expect(findViolations(importsOf('server/gadgets/thing.ts', "import { AppError } from '../errors.ts';\n"))[0]!.reason).toMatch(/in no layer/);
  });

  it('never let product code import the tests', () => {
    const planted = importsOf('server/engine/planted.ts', "import { startFakeOpenAI } from '../../test/fakes/openai-server.ts';\n");
    expect(findViolations(planted).map((v) => v.reason)).toEqual(['engine may not import test: server/engine/planted.ts → test/fakes/openai-server.ts']);
  });

  it('keep store/store.ts the interface only: it loads neither the sql.js nor the PostgreSQL store', () => {
    const fromInterface = edges.filter((e) => e.from === 'server/store/store.ts').map((e) => e.to);
    expect(fromInterface.length).toBeGreaterThan(5);
    expect(fromInterface.filter((to) => /^server\/store\/(sqljs|postgres)\//.test(to))).toEqual([]);
  });
});
