// The order the suite's files run in (vitest.config.ts's sequencer).
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The run is CPU-bound on two cores: the browser files first, three at a time (each drives
 * Chromium beside a server); then the rest as one group, five at a time, since many of them wait
 * on real time more than they compute (three at a time left the cores about 30 % idle). The
 * projects follow one another, as a worker keeps its loaded modules only for a next file of the
 * same project (mixing them cost 24 s more of imports). Within a project, the folders whose files
 * run longest start first (a long file that starts late runs alone at the end), then vitest's
 * order: slowest first from its timings cache, else largest first (a fresh checkout has no cache).
 * The phone's files come first: calls played in real time through sipp, kamailio and the carrier
 * fakes, 20 to 55 s a file, the longest of the run (and on PostgreSQL too); then voice and server
 * (up to 35 s a file, about 190 s each in all).
 */
const PROJECT_ORDER = ['e2e', 'integration', 'unit', 'postgres'];
const SLOW_FOLDERS_FIRST = ['test/phone/', 'test/voice/', 'test/server/', 'test/api/not-about-the-store/', 'test/flow/', 'test/providers/embedded/'];
export class SlowFilesFirst extends BaseSequencer {
  override async sort(specs: TestSpecification[]): Promise<TestSpecification[]> {
    const position = new Map((await super.sort(specs)).map((spec, i) => [spec, i]));
    const folder = (spec: TestSpecification) => [...SLOW_FOLDERS_FIRST, ''].findIndex((f) => spec.moduleId.includes(`/${f}`));
    const project = (spec: TestSpecification) => PROJECT_ORDER.indexOf(spec.project.name);
    return [...specs].sort((a, b) => project(a) - project(b) || folder(a) - folder(b) || position.get(a)! - position.get(b)!);
  }
}
