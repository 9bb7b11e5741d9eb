// The hand-written flow the yaml-edit tests edit, and the helpers that say which lines an edit
// touched. Shared by the test files of this folder; not a test itself.

import { readFileSync } from 'node:fs';
import { yamlToJson } from '../../../server/flow/yaml-edit/index.ts';


// A designer's hand-written flow: comments above, beside and below keys, blank lines between
// states, block literals, a folded scalar, quoted strings, flow and block lists, a flow map.
export const FLOW = `# Number guessing game.
# The caller thinks of a number; the agent guesses it.
id: guessing-game
version: "1.0.0" # quoted so it stays a string
initial_state: welcome

settings:
  # Shared by every state.
  base_system_prompt: |
    You are a friendly game host.
    Keep every answer short.

states:
  # First contact.
  welcome:
    ui:
      artifact_type: card
      prompt: 'Welcome, {name}!'
    agent:
      prompt: >-
        Greet the caller and
        explain the rules.
      tools: [start_game, quit] # the caller picks
    tools:
      start_game:
        description: The caller wants to play.
        parameters:
          max_number: { type: integer, required: true }
        speech_cue: "Let's go!"
      quit:
        description: The caller wants to stop.
    transitions:
      on_tool_call:
        start_game: guessing
        quit: goodbye

  # The main loop.
  guessing:
    agent:
      prompt: |
        Guess a number between 1 and {max_number}.
        Ask whether it is higher or lower.
      tools:
        - record_answer # higher, lower or correct
        - quit
    tools:
      record_answer:
        description: Record the caller's answer.
        parameters:
          answer:
            type: string
            required: true
      quit:
        description: The caller wants to stop.
    transitions:
      on_tool_call:
        record_answer: guessing # loop until correct
        quit: goodbye

  goodbye:
    agent:
      prompt: Say goodbye.
# end of flow
`;

export const SHIPPED = readFileSync(new URL('../../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8');

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Obj = { [key: string]: Json };

/** The flow as the editor holds it: the document's data as JSON (aliases become copies). */
export function dataOf(yaml: string): any {
  return JSON.parse(JSON.stringify(yamlToJson(yaml)));
}

export function changes(before: string, after: string): { removed: string[]; added: string[] } {
  const { removed, added } = lineDiff(before, after);
  return { removed, added };
}

export function commentLines(text: string): string[] {
  return text.split('\n').filter((line) => line.trimStart().startsWith('#'));
}

/** Lines only in `before` and lines only in `after`, from a longest common subsequence. */
export function lineDiff(before: string, after: string): { removed: string[]; added: string[]; removedAt: number[] } {
  const a = before.split('\n');
  const b = after.split('\n');
  // The common head and tail first: the table below is quadratic in what is left.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const aMid = a.slice(head, a.length - tail);
  const bMid = b.slice(head, b.length - tail);
  const lcs: number[][] = Array.from({ length: aMid.length + 1 }, () => new Array<number>(bMid.length + 1).fill(0));
  for (let i = aMid.length - 1; i >= 0; i--) {
    for (let j = bMid.length - 1; j >= 0; j--) {
      lcs[i]![j] = aMid[i] === bMid[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const removedAt: number[] = [];
  const added: string[] = [];
  let i = 0;
  let j = 0;
  while (i < aMid.length && j < bMid.length) {
    if (aMid[i] === bMid[j]) {
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) removedAt.push(head + i++);
    else added.push(bMid[j++]!);
  }
  for (; i < aMid.length; i++) removedAt.push(head + i);
  added.push(...bMid.slice(j));
  return { removed: removedAt.map((k) => a[k]!), added, removedAt };
}

/** Object with the keys in the given order, `value` inserted after `after` (or first). */
export function insertAfter(object: Obj, after: string | null, key: string, value: Json): Obj {
  const out: Obj = {};
  if (after === null) out[key] = value;
  for (const [k, v] of Object.entries(object)) {
    out[k] = v;
    if (k === after) out[key] = value;
  }
  return out;
}
