// There is no Electron binary on the machines that run the tests or the headless server, and
// `import 'electron'` outside Electron throws. So: nothing in server/ mentions Electron's module,
// and nothing any test loads (following relative imports) imports it at run time. Type-only
// imports are erased before anything runs and are allowed outside server/.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|mts|mjs|js)$/.test(name) ? [path] : [];
  });
}

interface ImportSite {
  specifier: string;
  /** `import type …` / `export type … from`: erased, never loaded. */
  typeOnly: boolean;
}

/** Static, re-export, side-effect and dynamic imports, and require() calls. */
function importsOf(source: string): ImportSite[] {
  const sites: ImportSite[] = [];
  for (const match of source.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/gm)) {
    sites.push({ specifier: match[2]!, typeOnly: Boolean(match[1]) });
  }
  for (const match of source.matchAll(/\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) sites.push({ specifier: match[1]!, typeOnly: false });
  return sites;
}

const isElectron = (specifier: string) => specifier === 'electron' || specifier.startsWith('electron/');

/** Every file a test loads at run time by relative imports, starting from `entry`. */
function runtimeClosure(entry: string, seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  for (const { specifier, typeOnly } of importsOf(readFileSync(entry, 'utf8'))) {
    if (typeOnly || !specifier.startsWith('.')) continue;
    const target = resolve(dirname(entry), specifier);
    try {
      if (statSync(target).isFile()) runtimeClosure(target, seen);
    } catch {
      // Not a source file (a missing optional path): nothing to follow.
    }
  }
  return seen;
}

describe('no Electron where there is no Electron', () => {
  it('finds the runtime import in the Electron adapters, so the scan itself works', () => {
    const adapters = sourceFiles(join(ROOT, 'electron')).filter((file) => importsOf(readFileSync(file, 'utf8')).some((site) => isElectron(site.specifier) && !site.typeOnly));
    const names = adapters.map((file) => relative(ROOT, file));
    expect(names).toEqual(expect.arrayContaining(['electron/main.ts', 'electron/preload.ts', 'electron/session-security.ts']));
    // Split so that this file's own text holds no import of electron.
    const sample = ['import type { A } from', "'electron';\nimport { b, type C } from 'elec" + "tron';\nconst x = await import(", "'electron');"].join(' ');
    expect(importsOf(sample)).toEqual([
      { specifier: 'electron', typeOnly: true },
      { specifier: 'electron', typeOnly: false },
      { specifier: 'electron', typeOnly: false },
    ]);
  });

  it('server/ never imports electron, not even its types', () => {
    const offenders = sourceFiles(join(ROOT, 'server')).filter((file) => importsOf(readFileSync(file, 'utf8')).some((site) => isElectron(site.specifier)));
    expect(offenders.map((file) => relative(ROOT, file))).toEqual([]);
  });

  it('nothing a test loads imports electron at run time', () => {
    const tests = sourceFiles(join(ROOT, 'test'));
    // One walk for them all: what a test reaches through a file already walked is already in.
    const loaded = new Set<string>();
    for (const file of tests) runtimeClosure(file, loaded);
    // The pure Electron modules are among what tests load: the walk really follows imports.
    expect(loaded).toContain(join(ROOT, 'electron', 'ipc-hub.ts'));
    const offenders = [...loaded].filter((file) => importsOf(readFileSync(file, 'utf8')).some((site) => isElectron(site.specifier) && !site.typeOnly));
    expect(offenders.map((file) => relative(ROOT, file))).toEqual([]);
  });
});
