import { describe, expect, it } from 'vitest';
import { FlowRuntime, type AcceptedToolCall, type HttpToolRequest } from '../../server/flow/runtime.ts';
import { parseFlow } from '../../server/flow/parse.ts';
import type { FlowDocument } from '../../server/flow/types.ts';

// The extended keys (docs/flows.md#extended-flow-keys) in the pure runtime: each construct on a
// small flow, as the engine would drive it.

const BOOKING = `id: booking
version: "1.0.0"
initial_state: greet
settings:
  base_system_prompt: You book visits at {office}.
  idle: { after_secs: 4, reprompt: "Still there, {caller}?", max_reprompts: 2 }
  global_tools:
    talk_to_human: { target: handoff }
    repeat: {}
tools:
  talk_to_human:
    description: The caller asks for a person.
  repeat:
    description: Say the options again.
  lookup:
    description: Look the caller up.
states:
  greet:
    on_enter:
      set: { office: Main Street, attempts: 0, greeting: "Hi {caller}" }
      say: "{greeting}, welcome to {office}."
    interruptible: false
    endpointing_ms: 900
    agent:
      prompt: Ask for a day.
      tools: [check_day, lookup, leave]
    tools:
      check_day:
        description: Check a day.
        parameters:
          day: { type: string, required: true, description: The weekday., enum: [monday, tuesday] }
          people: { type: integer, enum: [1, 2] }
        http:
          url: https://example.com/slots
          headers: { Authorization: "Bearer {secret.crm}" }
          store: { slot: slot.start, slots: slots }
        speech_cue: Let me check {day}.
      leave:
        description: The caller leaves.
    transitions:
      on_tool_call: { check_day: full, leave: bye }
      on_tool_result: { check_day: [booked, greet] }
  full:
    respond: false
    agent:
      prompt: Nothing free.
      tools: [leave]
    tools:
      leave: { description: Leave. }
      repeat: { description: Local repeat. }
    transitions:
      on_tool_call: { leave: bye }
  booked:
    context: reset
    on_enter:
      say: Booked for {slot}.
    agent:
      prompt: Confirm {slot}.
  bye:
    on_enter:
      say: Goodbye.
      end_session: true
    agent:
      prompt: Nothing.
  handoff:
    on_enter: { say: One moment., end_session: true }
    agent:
      prompt: Nothing.
`;

function booking(): FlowDocument {
  const parsed = parseFlow(BOOKING);
  expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return parsed.document!;
}

function start(context: Record<string, unknown> = { caller: 'Ada' }): FlowRuntime {
  const runtime = new FlowRuntime(booking(), { context });
  runtime.beginUserTurn();
  runtime.beginModelResponse();
  return runtime;
}

function callHttp(runtime: FlowRuntime, args: Record<string, unknown> = { day: 'monday' }): HttpToolRequest {
  const outcome = runtime.applyToolCall('check_day', args);
  expect(outcome.status).toBe('accepted');
  return (outcome as AcceptedToolCall).http!;
}

describe('on entering a state', () => {
  it('sets variables, then says the rendered line, before the model runs', () => {
    const runtime = start();
    expect(runtime.variables).toMatchObject({ office: 'Main Street', attempts: 0, greeting: 'Hi Ada' });
    expect(runtime.initialEntry).toEqual({
      state: 'greet',
      say: 'Hi Ada, welcome to Main Street.',
      endSession: false,
      respond: true,
      resetContext: false,
      interruptible: false,
    });
    expect(runtime.systemPrompt()).toContain('You book visits at Main Street.');
  });

  it.each([
    { tool: 'leave', state: 'bye', say: 'Goodbye.', endSession: true, respond: false, resetContext: false },
    { tool: 'talk_to_human', state: 'handoff', say: 'One moment.', endSession: true, respond: false, resetContext: false },
  ])('entered through $tool: says "$say", ends: $endSession', ({ tool, ...entry }) => {
    const outcome = start().applyToolCall(tool, {});
    expect(outcome).toMatchObject({ status: 'accepted', moved: true, toState: entry.state, entered: { ...entry, interruptible: true } });
  });

  it('respond: false leaves the first word to the caller; context: reset asks the model to forget', () => {
    const runtime = start();
    const request = callHttp(runtime);
    const full = runtime.applyToolResult(request, { ok: true, body: { slots: [] } });
    expect(full.entered).toMatchObject({ state: 'full', respond: false, resetContext: false, say: null });
    const again = start();
    const booked = again.applyToolResult(callHttp(again), { ok: true, body: { next_state: 'booked', slot: { start: '9:00' } } });
    expect(booked.entered).toMatchObject({ state: 'booked', respond: true, resetContext: true, say: 'Booked for 9:00.' });
  });
});

describe('global tools', () => {
  it('are offered in every state after its own tools, unless the state has its own of that name', () => {
    const runtime = start();
    expect(runtime.listedTools()).toEqual(['check_day', 'lookup', 'leave', 'talk_to_human', 'repeat']);
    runtime.applyToolResult(callHttp(runtime), { ok: true, body: {} });
    expect(runtime.state).toBe('full');
    // full defines its own repeat (not listed): the global one is hidden there.
    expect(runtime.listedTools()).toEqual(['leave', 'talk_to_human']);
  });

  it('move to their target from anywhere, or keep the state when they have none', () => {
    const stay = start().applyToolCall('repeat', {});
    expect(stay).toMatchObject({ status: 'accepted', moved: false, toState: 'greet' });
    expect(stay).not.toHaveProperty('entered');
  });

  it('are rejected like any other tool once the state changed or the rounds are spent', () => {
    const runtime = start();
    runtime.applyToolCall('leave', {});
    expect(runtime.applyToolCall('talk_to_human', {})).toMatchObject({ status: 'rejected', code: 'state_changed' });
    const spent = start();
    for (let i = 0; i < 5; i++) {
      spent.applyToolCall('repeat', {});
      spent.beginModelResponse();
    }
    expect(spent.toolSchemas()).toEqual([]);
    expect(spent.applyToolCall('talk_to_human', {})).toMatchObject({ status: 'rejected', code: 'round_limit' });
    expect(spent.state).toBe('greet');
  });

  it('a state may list a top-level tool without defining it', () => {
    expect(start().applyToolCall('lookup', {})).toMatchObject({ status: 'accepted', moved: false });
  });
});

describe('tool schemas given to the model', () => {
  it('carry each parameter description and enum', () => {
    const check = start().toolSchemas().find((t) => t.function.name === 'check_day')!;
    expect(check.function.parameters.properties).toEqual({
      day: { type: 'string', description: 'The weekday.', enum: ['monday', 'tuesday'] },
      people: { type: 'integer', enum: [1, 2] },
    });
    expect(check.function.parameters.required).toEqual(['day']);
  });

  it.each([
    { args: { day: 'sunday' }, ok: false },
    { args: { day: 'monday', people: 3 }, ok: false },
    { args: { day: 'monday', people: '2' }, ok: true },
  ])('an argument outside its enum is rejected: $args', ({ args, ok }) => {
    const outcome = start().applyToolCall('check_day', args);
    expect(outcome.status).toBe(ok ? 'accepted' : 'rejected');
    if (!ok) expect(outcome).toMatchObject({ code: 'mistyped_argument', reason: expect.stringContaining('must be one of') });
  });
});

describe('an http tool', () => {
  it('is accepted without moving, and describes the request the engine sends', () => {
    const runtime = start();
    const outcome = runtime.applyToolCall('check_day', { day: 'tuesday' });
    expect(outcome).toMatchObject({ status: 'accepted', moved: false, toState: 'greet', speechCue: 'Let me check tuesday.' });
    expect((outcome as AcceptedToolCall).http).toMatchObject({
      tool: 'check_day',
      url: 'https://example.com/slots',
      method: 'POST',
      headers: { Authorization: 'Bearer {secret.crm}' },
      timeoutMs: 5000,
      arguments: { day: 'tuesday' },
      variables: expect.objectContaining({ day: 'tuesday', office: 'Main Street' }),
    });
    expect(runtime.state).toBe('greet');
  });

  it.each([
    { name: 'a listed next_state', body: { next_state: 'booked' }, to: 'booked', note: false },
    { name: 'itself as next_state', body: { next_state: 'greet' }, to: 'greet', note: false },
    { name: 'no next_state: the call transition', body: { available: false }, to: 'full', note: false },
    { name: 'a state the document does not list for it', body: { next_state: 'handoff' }, to: 'full', note: true },
    { name: 'a state that does not exist', body: { next_state: 'anywhere' }, to: 'full', note: true },
  ])('moves by its result: $name', ({ body, to, note }) => {
    const runtime = start();
    const outcome = runtime.applyToolResult(callHttp(runtime), { ok: true, body });
    expect(outcome).toMatchObject({ toState: to, moved: to !== 'greet', result: { ok: true, state: to, result: body } });
    expect('note' in outcome.result).toBe(note);
    expect(runtime.state).toBe(to);
  });

  it('stores the named fields of its result as variables', () => {
    const runtime = start();
    const outcome = runtime.applyToolResult(callHttp(runtime), { ok: true, body: { next_state: 'booked', slot: { start: '10:30' }, slots: ['10:30', '11:00'] } });
    expect(outcome.stored).toEqual({ slot: '10:30', slots: '["10:30","11:00"]' });
    expect(runtime.variables).toMatchObject({ slot: '10:30' });
    expect(runtime.systemPrompt()).toContain('Confirm 10:30.');
  });

  it('on failure keeps the state, stores nothing and gives the model the error', () => {
    const runtime = start();
    const outcome = runtime.applyToolResult(callHttp(runtime), { ok: false, error: 'the service did not answer within 5000 ms' });
    expect(outcome).toEqual({
      name: 'check_day',
      fromState: 'greet',
      toState: 'greet',
      moved: false,
      entered: null,
      stored: {},
      result: { ok: false, state: 'greet', error: 'the service did not answer within 5000 ms' },
    });
  });

  it('an answer that comes after the session moved on changes no state', () => {
    const runtime = start();
    const request = callHttp(runtime);
    runtime.beginModelResponse();
    runtime.applyToolCall('talk_to_human', {});
    const late = runtime.applyToolResult(request, { ok: true, body: { next_state: 'booked', slot: { start: '9:00' } } });
    expect(late).toMatchObject({ moved: false, toState: 'handoff', result: { note: expect.stringContaining('moved on') } });
    expect(runtime.state).toBe('handoff');
  });

  it('a move by its result rejects the rest of the response\'s calls', () => {
    const runtime = start();
    runtime.applyToolResult(callHttp(runtime), { ok: true, body: { next_state: 'booked' } });
    expect(runtime.applyToolCall('repeat', {})).toMatchObject({ status: 'rejected', code: 'state_changed' });
  });
});

describe('the flow\'s model settings', () => {
  it('are given with each model request when the flow sets them, and nothing otherwise', () => {
    const doc = booking();
    expect(new FlowRuntime(doc).modelOptions()).toEqual({});
    const tuned = { ...doc, settings: { ...doc.settings, llm: { model: 'gpt-4o-mini', temperature: 0.2 } } };
    expect(new FlowRuntime(tuned).modelOptions()).toEqual({ model: 'gpt-4o-mini', temperature: 0.2 });
  });
});

describe('per-state and idle settings', () => {
  it('say whether the state can be interrupted, its endpointing, and the idle reprompt rendered', () => {
    const runtime = start();
    expect(runtime.stateOptions()).toEqual({ interruptible: false, endpointingMs: 900 });
    expect(runtime.idle()).toEqual({ afterMs: 4000, reprompt: 'Still there, Ada?', maxReprompts: 2 });
    runtime.applyToolCall('leave', {});
    expect(runtime.stateOptions()).toEqual({ interruptible: true, endpointingMs: null });
  });
});
