/// <reference types="vite/client" />
// The documents a new flow starts from. The guessing game and the appointment booking are the
// files the docs and the tests use (imported as text, so the studio creates them byte for byte,
// comments included: the booking's say what to set before it runs); the blank
// flow is the smallest document that shows the three ideas a designer edits — states, the tools
// each state offers, and where each tool leads — and validates with no errors and no warnings,
// so a new flow does not open with problems the designer did not make.
// The triple-slash reference lets the Node-side type check (tests import this file) know `?raw`.
import appointmentBookingYaml from '../../../../resources/flows/appointment-booking.yaml?raw';
import guessingGameYaml from '../../../../resources/flows/guessing-game.yaml?raw';

export type FlowTemplateId = 'guessing-game' | 'appointment-booking' | 'blank';

export interface FlowTemplate {
  id: FlowTemplateId;
  title: string;
  description: string;
  /** The name a new flow gets unless the designer types another. */
  defaultName: string;
  /** The document for a flow called `name`. */
  yamlFor(name: string): string;
}

export const GUESSING_GAME_YAML: string = guessingGameYaml;
export const APPOINTMENT_BOOKING_YAML: string = appointmentBookingYaml;

/** A document `id` from a flow name: lower-case words joined by dashes, never empty. */
export function documentIdFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'new-flow';
}

/** The blank flow. The id is a slug, so it needs no YAML quoting whatever the name was. */
export function blankFlowYaml(name: string): string {
  return `# ${name.replace(/[\r\n]+/g, ' ')}
# Each state says what the agent does there (agent.prompt), which tools the model may call
# (agent.tools, defined under tools) and which state each tool leads to (transitions).
id: ${documentIdFromName(name)}
version: "1.0.0"
initial_state: start

settings:
  base_system_prompt: |
    You are a friendly voice agent. Everything you say is spoken aloud: answer in one to
    three short sentences of plain words, with no lists, markdown or emoji.

states:
  start:
    ui:
      artifact_type: card
      prompt: "How can I help?"
    agent:
      prompt: Greet the caller and ask how you can help. When they have what they need, call finish.
      tools: [finish]
    tools:
      finish:
        description: The caller has what they needed.
    transitions:
      on_tool_call:
        finish: done

  done:
    ui:
      artifact_type: card
      prompt: "Thanks for calling."
    agent:
      prompt: Thank the caller and say goodbye. If they want help with something else, call start_over.
      tools: [start_over]
    tools:
      start_over:
        description: The caller wants help with something else.
    transitions:
      on_tool_call:
        start_over: start
`;
}

export const FLOW_TEMPLATES: readonly FlowTemplate[] = [
  {
    id: 'guessing-game',
    title: 'Guessing game',
    description: 'Ten yes-or-no questions to find a secret thing: four states, tools that move the game, and two endings.',
    defaultName: 'Guessing game',
    yamlFor: () => GUESSING_GAME_YAML,
  },
  {
    id: 'appointment-booking',
    title: 'Appointment booking',
    description: "A dental practice's booking line: a disclaimer, an http tool that checks free slots, and a hand-off to a person from any state.",
    defaultName: 'Appointment booking',
    yamlFor: () => APPOINTMENT_BOOKING_YAML,
  },
  {
    id: 'blank',
    title: 'Blank',
    description: 'Two states and one tool each: the smallest flow to build your own on.',
    defaultName: 'Untitled flow',
    yamlFor: blankFlowYaml,
  },
];

export function templateById(id: FlowTemplateId): FlowTemplate {
  return FLOW_TEMPLATES.find((t) => t.id === id) ?? FLOW_TEMPLATES[0]!;
}
