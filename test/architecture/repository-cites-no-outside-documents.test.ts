// The repository explains itself: whoever clones it has neither the design notes nor the issue
// tracker the project started from, so code, tests and docs never send the reader there (a
// section of the design notes, an issue by its number). The reason is written where it
// matters, or in docs/.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FOLDERS = ['server', 'renderer/src', 'electron', 'test', 'docs', 'scripts', '.ci', 'resources'];
const FILES = ['README.md', 'package.json', 'vitest.config.ts'];
const TEXT = /\.(ts|mts|mjs|js|svelte|md|json|yaml|yml|sh|html|css)$|^run$/;

/** A citation of a document outside the repository; the pattern is split so this file passes. */
const CITATION = new RegExp(['DESIGN(\\.md)?\\s*§', 'DESIGN\\.md', '\\bissues?\\s+#?\\d+', '\\bissue\\s+\\d+\\s+item'].join('|'), 'i');

async function* textFiles(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* textFiles(path);
    else if (TEXT.test(entry.name)) yield path;
  }
}

describe('the repository', () => {
  it('cites no design notes or issue numbers in its code, tests or docs', async () => {
    const found: string[] = [];
    const paths: string[] = FILES.map((f) => join(ROOT, f));
    for (const folder of FOLDERS) for await (const path of textFiles(join(ROOT, folder))) paths.push(path);
    expect(paths.length).toBeGreaterThan(500);
    for (const path of paths) {
      const lines = (await readFile(path, 'utf8')).split('\n');
      lines.forEach((line, i) => {
        if (CITATION.test(line)) found.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(found, found.join('\n')).toEqual([]);
  });
});
