// `npm run bench`: runs every test/bench/*.bench.ts and prints one table.
// Each bench module exports `run(): Promise<BenchRow[]>`. Figures are measured in this run,
// on this machine; where a target is a ratio, the baseline is measured in the same run.
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import type { BenchRow } from './bench-kit.ts';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv[2];
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts') || f === 'studio-editor.ts')
  .filter((f) => !only || f.includes(only))
  .sort();

const rows: Array<BenchRow & { bench: string }> = [];
for (const file of files) {
  const bench = file.replace(/(\.bench)?\.ts$/, '');
  process.stderr.write(`running ${bench}…\n`);
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { run: () => Promise<BenchRow[]> };
  for (const row of await mod.run()) rows.push({ bench, ...row });
}

const header = ['bench', 'measure', 'value', 'target', 'how measured'];
const table = rows.map((r) => [r.bench, r.name, r.value, r.target ?? '', r.how]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => String(row[i]).length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
for (const row of table) console.log(line(row.map(String)));

// Benches leave nothing running, but a library's stray handle must not keep the table from returning.
process.exit(0);
