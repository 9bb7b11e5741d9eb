// The order the suite's files run in (vitest.config.ts's sequencer).
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The run is CPU-bound on two cores: the browser files first, three at a time (each drives
 * Chromium beside a server); then the rest as one group, seven at a time, since many of them wait
 * on real time more than they compute (three at a time left the cores about 30 % idle; five left
 * them 45–55 % idle for two minutes while the calls played). The projects follow one another, as
 * a worker keeps its loaded modules only for a next file of the same project (mixing them cost 24 s
 * more of imports). Within a project, the folders whose files run longest start first (a long file
 * that starts late runs alone at the end), then vitest's order: slowest first from its timings
 * cache, else largest first (a fresh checkout has no cache).
 * The files that play calls in real time (the phone's, through sipp, kamailio and the carrier
 * fakes, up to 36 s a file, the longest of the run; voice's, up to 26 s) mostly wait: they are
 * dealt out among the integration project's other files, one to every one or two of those, so the
 * cores have work while the calls play. Run one after another, they left the cores half idle
 * for a minute and a half (2026-11-29, quiet runs with a timeline of each file).
 */
const PROJECT_ORDER = ['e2e', 'integration', 'unit', 'postgres'];
const SLOW_FOLDERS_FIRST = ['test/phone/', 'test/voice/', 'test/server/', 'test/api/not-about-the-store/', 'test/flow/', 'test/providers/embedded/'];
/** Files that spend their time in calls played in real time. */
const REAL_TIME = ['test/phone/', 'test/voice/'];

export class SlowFilesFirst extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    const position = new Map((await super.sort(specs)).map((spec, i) => [spec, i]));
    const folder = (spec: TestSpecification) => [...SLOW_FOLDERS_FIRST, ''].findIndex((f) => spec.moduleId.includes(`/${f}`));
    const project = (spec: TestSpecification) => PROJECT_ORDER.indexOf(spec.project.name);
    const sorted = [...specs].sort((a, b) => project(a) - project(b) || folder(a) - folder(b) || position.get(a)! - position.get(b)!);
    return PROJECT_ORDER.flatMap((name) => {
      const files = sorted.filter((spec) => spec.project.name === name);
      return name === 'integration' ? dealtOut(files) : files;
    }).concat(sorted.filter((spec) => !PROJECT_ORDER.includes(spec.project.name)));
  }
}

/** The real-time files spread evenly among the others, each list keeping its own order. */
function dealtOut(files: TestSpecification[]): TestSpecification[] {
  const realTime = files.filter((spec) => REAL_TIME.some((f) => spec.moduleId.includes(`/${f}`)));
  const others = files.filter((spec) => !realTime.includes(spec));
  if (realTime.length === 0) return others;
  const out: TestSpecification[] = [];
  const step = others.length / realTime.length;
  realTime.forEach((spec, i) => {
    out.push(spec, ...others.slice(Math.round(i * step), Math.round((i + 1) * step)));
  });
  return out;
}
