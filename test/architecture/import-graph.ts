// Reads the relative imports of the product's source files, to check them against
// the layers (docs/architecture.md). Text-level on purpose: it must run in milliseconds and see `.svelte` files too.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export interface ImportEdge {
  /** Repo-relative paths with forward slashes. */
  from: string;
  to: string;
  /** `import type …`, or every imported name marked `type`: gone once compiled. */
  typeOnly: boolean;
}

const SOURCE = /\.(ts|mts|mjs|svelte)$/;
// `import … from '…'`, `export … from '…'`, `import('…')` and bare `import '…'`.
const STATIC = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g;
const DYNAMIC = /import\(\s*['"]([^'"]+)['"]\s*\)/g;
const BARE = /(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g;

export function listSourceFiles(root: string, folders: readonly string[]): string[] {
  const files: string[] = [];
  for (const folder of folders) {
    for (const entry of readdirSync(join(root, folder), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        files.push(relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'));
      }
    }
  }
  return files.sort();
}

function isTypeOnly(keyword: string, typeWord: string | undefined, clause: string): boolean {
  if (keyword === 'import' && typeWord) return true;
  if (keyword === 'export' && typeWord) return true;
  const named = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!named) return false;
  const names = named[1]!.split(',').map((n) => n.trim()).filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

/** The relative imports of one file's text, resolved against its path. */
export function importsOf(file: string, text: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    if (!specifier.startsWith('.')) return;
    const to = relative('.', resolve(dirname(file), specifier)).split(sep).join('/');
    edges.push({ from: file, to, typeOnly });
  };
  for (const m of text.matchAll(STATIC)) add(m[4]!, isTypeOnly(m[1]!, m[2], m[3]!));
  for (const m of text.matchAll(DYNAMIC)) add(m[1]!, false);
  for (const m of text.matchAll(BARE)) add(m[1]!, false);
  return edges;
}

export function readImportGraph(root: string, folders: readonly string[]): ImportEdge[] {
  return listSourceFiles(root, folders).flatMap((file) => importsOf(file, readFileSync(join(root, file), 'utf8')));
}
