// How the CLI prints a suite's result: `pretty` for a person at a terminal, `junit` for CI (the
// JUnit XML that GitHub Actions, GitLab, Jenkins and CircleCI read: testsuites > testsuite >
// testcase, a <failure> per failed test with the failed checks as its text).
import { addAdherence, noAdherence } from '../protocol/adherence.ts';
import { describeCoverage } from '../flow/tests-coverage.ts';
import type { StepResult, SuiteResult, TestResult, TestRun } from './results.ts';

export const REPORTERS = ['pretty', 'junit'] as const;
export type ReporterName = (typeof REPORTERS)[number];

const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

function failedSteps(run: TestRun): StepResult[] {
  return run.steps.filter((s) => !s.passed);
}

/** The failed checks of a run, one line each: step, action, what differed. */
export function failureLines(run: TestRun): string[] {
  const lines = failedSteps(run).flatMap((step) =>
    step.checks.filter((c) => !c.passed).map((c) => `step ${step.index + 1} (${step.action}): ${c.message}`),
  );
  if (run.error) lines.unshift(`the run stopped: ${run.error}`);
  return lines;
}

/** The first failed run of a test (the one to show), if any. */
function firstFailure(test: TestResult): TestRun | undefined {
  return test.runs.find((r) => !r.passed);
}

/** "; needs 80%" when the test asked for less than every run. */
function needs(test: TestResult): string {
  return test.min_pass_rate !== undefined && test.min_pass_rate < 1 ? `; needs ${percent(test.min_pass_rate)}` : '';
}

function testSummary(test: TestResult): string {
  const runs = test.runs.length > 1 ? ` (${test.runs.filter((r) => r.passed).length}/${test.runs.length} runs passed, ${percent(test.pass_rate)}${needs(test)})` : '';
  return `${test.passed ? '✓' : '✗'} ${test.name}${runs}`;
}

export function prettyReport(result: SuiteResult, title: string): string {
  const out: string[] = [`${title} — ${result.mode} mode`, ''];
  for (const test of result.tests) {
    out.push(testSummary(test));
    const failed = firstFailure(test);
    if (!failed) continue;
    for (const line of failureLines(failed)) out.push(`    ${line}`);
    if (failed.transcript.length > 0) {
      out.push('    transcript:');
      for (const line of failed.transcript) out.push(`      ${line.role}: ${line.text}${line.interrupted ? ' [cut off]' : ''}`);
    }
    out.push(`    path: ${failed.path.join(' → ')}`);
  }
  const passed = result.tests.filter((t) => t.passed).length;
  out.push('', `${passed} passed, ${result.tests.length - passed} failed (${(result.duration_ms / 1000).toFixed(1)} s)`);
  out.push(`coverage: ${describeCoverage(result.coverage)}`);
  const adherence = describeAdherence(result.tests);
  if (adherence) out.push(`adherence: ${adherence}`);
  const { states, transitions } = result.coverage;
  if (states.uncovered.length > 0) out.push(`  states no test reaches: ${states.uncovered.join(', ')}`);
  if (transitions.uncovered.length > 0) out.push(`  transitions no test takes: ${transitions.uncovered.map((t) => `${t.from} —${t.tool}→ ${t.to}`).join(', ')}`);
  return `${out.join('\n')}\n`;
}

function xml(text: string): string {
  // Characters XML 1.0 cannot hold at all are dropped; the rest escaped.
  // eslint-disable-next-line no-control-regex
  return text.replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '').replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c]};`);
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

export function junitReport(result: SuiteResult, suiteName: string): string {
  const failures = result.tests.filter((t) => !t.passed).length;
  const cases = result.tests.map((test) => {
    const time = test.runs.reduce((sum, r) => sum + r.duration_ms, 0);
    const open = `    <testcase name="${xml(test.name)}" classname="${xml(`${suiteName}.${result.mode}`)}" time="${seconds(time)}"`;
    const failed = firstFailure(test);
    if (test.passed || !failed) return `${open}/>`;
    const lines = failureLines(failed);
    const rate = needs(test) ? ` (needs ${percent(test.min_pass_rate!)})` : '';
    const message = test.runs.length > 1 ? `passed ${percent(test.pass_rate)} of ${test.runs.length} runs${rate}; ${lines[0] ?? ''}` : (lines[0] ?? 'failed');
    const body = [...lines, '', 'transcript:', ...failed.transcript.map((l) => `  ${l.role}: ${l.text}${l.interrupted ? ' [cut off]' : ''}`), `path: ${failed.path.join(' -> ')}`].join('\n');
    return `${open}>\n      <failure message="${xml(message)}" type="${failed.error ? 'error' : 'expectation'}">${xml(body)}</failure>\n    </testcase>`;
  });
  const coverage = describeCoverage(result.coverage);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xml(suiteName)}" tests="${result.tests.length}" failures="${failures}" errors="0" time="${seconds(result.duration_ms)}">`,
    `  <testsuite name="${xml(suiteName)}" tests="${result.tests.length}" failures="${failures}" errors="0" skipped="0" time="${seconds(result.duration_ms)}">`,
    '    <properties>',
    `      <property name="mode" value="${result.mode}"/>`,
    `      <property name="coverage" value="${xml(coverage)}"/>`,
    // A test run several times: its pass rate (a testcase has no properties of its own).
    ...result.tests.filter((t) => t.runs.length > 1).map((t) => `      <property name="pass_rate: ${xml(t.name)}" value="${t.pass_rate}"/>`),
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/**
 * The model's tool calls over the suite and what the flow refused (null in scripted mode): the
 * figure that says the model could not leave its state (docs/api.md#the-adherence-figure).
 */
function describeAdherence(tests: readonly TestResult[]): string | null {
  const counted = tests.map((t) => t.adherence).filter((a) => a !== null && a !== undefined);
  if (counted.length === 0) return null;
  const sum = counted.reduce((into, a) => addAdherence(into, a), noAdherence());
  return `${sum.tool_calls} tool calls by the model, ${sum.moves} moves; refused: ${sum.rejected_off_state} not offered by the state, ${sum.rejected_arguments} with arguments that did not fit${sum.rejected_other ? `, ${sum.rejected_other} other` : ''}`;
}
