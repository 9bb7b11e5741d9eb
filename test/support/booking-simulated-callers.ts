// The booking example with a simulated caller: what the fake OpenAI answers as the booking
// assistant (the flow's prompt), as a patient who wants Tuesday, as a rambler who never hangs up,
// and as the judge — rules keyed on each one's system prompt, so every run is the same call.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseFlow } from '../../server/flow/parse.ts';
import type { ChatRule } from '../fakes/openai-server.ts';

export const BOOKING_PATH = fileURLToPath(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url));
export const BOOKING = parseFlow(readFileSync(BOOKING_PATH, 'utf8')).document!;

export const PATIENT = 'Dana, a patient of the practice who can only come in on a Tuesday';
export const RAMBLER = 'Ray, who likes to chat and never gets to the point';
export const WEEKENDER = 'Sam, who works all week and can only come on a Saturday';

/** The booking assistant (the flow's prompt), a patient who wants Tuesday, a rambler, and the judge. */
export function rules(judge: ChatRule['respond']): ChatRule[] {
  const agent = 'Maple Street Dental';
  return [
    // The agent. After the availability answer: offer it; after the booking: nothing more is asked.
    { when: { systemIncludes: agent, lastRole: 'tool', toolsOffered: ['confirm_booking'] }, respond: { text: 'Tuesday at 10:00 is free. Shall I book it?' } },
    { when: { systemIncludes: agent, lastUserText: /tuesday/i, toolsOffered: ['check_availability'] }, respond: { toolCalls: [{ name: 'check_availability', arguments: { day: 'tuesday' } }] } },
    { when: { systemIncludes: agent, lastUserText: /yes/i, toolsOffered: ['confirm_booking'] }, respond: { toolCalls: [{ name: 'confirm_booking', arguments: {} }] } },
    { when: { systemIncludes: agent }, respond: { text: 'Which weekday would suit you?' } },
    // The patient: Tuesday, then yes.
    { when: { systemIncludes: PATIENT, lastUserText: /shall i book/i }, respond: { text: 'Yes please, book it.' } },
    { when: { systemIncludes: PATIENT }, respond: { text: 'Do you have anything on Tuesday?' } },
    // The weekender asks for Saturday, and hangs up when asked for a weekday again.
    { when: { systemIncludes: WEEKENDER, nth: 1 }, respond: { text: 'Can I come on Saturday?' } },
    { when: { systemIncludes: WEEKENDER }, respond: { toolCalls: [{ name: 'end_call', arguments: { reason: 'gave up: no Saturday' } }] } },
    // The rambler never asks for a day and never hangs up.
    { when: { systemIncludes: RAMBLER }, respond: { text: 'Oh, lovely weather today, is it not?' } },
    // The judge.
    { when: { jsonSchemaName: 'voxflow_judgement' }, respond: judge },
  ];
}

export const GOOD_JUDGE: ChatRule['respond'] = {
  json: {
    verdicts: [
      { criterion: 'The caller is booked on a Tuesday', passed: true, reason: 'The agent booked Tuesday at 10:00 and said so.' },
      { criterion: 'The agent never offers a time the service did not give', passed: true, reason: 'The only time offered, 10:00, came from the availability check.' },
    ],
  },
};

export const CALLER_TEST = `
name: a patient who wants Tuesday gets booked
caller:
  persona: "${PATIENT}"
  goal: "book a check-up on Tuesday"
  max_turns: 6
caller_llm: gpt-caller
tool_results:
  check_availability: {body: {next_state: offer_slot, slot: "10:00"}}
judge:
  criteria:
    - The caller is booked on a Tuesday
    - The agent never offers a time the service did not give
  model: gpt-judge
expect:
  state: booked
  tool_called: [{name: check_availability, arguments: {day: tuesday}}, {name: confirm_booking}]
  ended: true
`;


/** A judge that finds the caller was not booked. */
export const FAILING_JUDGE: ChatRule['respond'] = {
  json: {
    verdicts: [
      { criterion: 'The caller is booked on a Tuesday', passed: false, reason: 'No booking was confirmed.' },
      { criterion: 'The agent never offers a time the service did not give', passed: true, reason: 'Fine.' },
    ],
  },
};

/** The rules, with the judge failing the calls it is asked about in the places given (1-based). */
export function rulesFailingJudgements(...nth: number[]): ChatRule[] {
  return [...nth.map((n) => ({ when: { jsonSchemaName: 'voxflow_judgement', nth: n }, respond: FAILING_JUDGE })), ...rules(GOOD_JUDGE)];
}
