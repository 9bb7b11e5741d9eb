import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFlow } from '../../server/flow/parse.ts';
import { startAvailabilityService, type AvailabilityService } from '../support/availability-service.ts';
import { createFlow } from '../support/server.ts';
import { useVoiceRig } from '../support/voice-server.ts';

// The variants of the extended flow keys the booking example does not use, heard over WebSocket
// with the provider fakes: an http tool sent with PUT and a header naming an account secret, a
// nested field of its answer kept as a variable (store: order.id), and a global tool with no
// target, which keeps the caller where they are in any state.
const SIGNING_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

const flowYaml = (url: string) => `id: orders
version: "1.0.0"
initial_state: start
settings:
  base_system_prompt: You take food orders.
  global_tools:
    repeat_menu: {}
tools:
  repeat_menu:
    description: The caller wants to hear the menu again.
    speech_cue: "Today we have pizza and pasta."
states:
  start:
    agent:
      prompt: Take the order; call place_order with the dish.
      tools: [place_order]
    tools:
      place_order:
        description: Place the order.
        parameters:
          day: { type: string, required: true, description: "The dish, in lower case." }
        http:
          url: ${url}
          method: PUT
          headers: { X-Shop: "shop-{secret.shop_id}" }
          store: { order_id: order.id }
    transitions:
      on_tool_result: { place_order: [done] }
  done:
    ui: { artifact_type: card, prompt: "Order {order_id}" }
    agent:
      prompt: Confirm order {order_id}.
`;

describe('an http tool sent with PUT, and a global tool with no target', () => {
  let service: AvailabilityService;
  let flowId: string;
  const rig = useVoiceRig({
    tts: 'openai',
    openai: { msPerWord: 20 },
    config: { webhooks: { allowPrivate: true } },
    rules: [
      { when: { lastRole: 'none', toolsOffered: ['place_order', 'repeat_menu'] }, respond: { text: 'What would you like?' } },
      { when: { lastRole: 'user', lastUserText: /menu/i }, respond: { toolCalls: [{ name: 'repeat_menu', arguments: {} }] } },
      // The availability service answers by `day`: the dish goes in that argument.
      { when: { lastRole: 'user', lastUserText: /pizza/i, toolsOffered: ['place_order'] }, respond: { toolCalls: [{ name: 'place_order', arguments: { day: 'pizza' } }] } },
      { when: { lastRole: 'tool', systemIncludes: 'Confirm order' }, respond: { text: 'Your order A-17 is placed.' } },
      { when: { lastRole: 'tool' }, respond: { text: 'Anything else?' } },
    ],
  });

  beforeAll(async () => {
    service = await startAvailabilityService({ pizza: { status: 200, json: { order: { id: 'A-17' }, next_state: 'done' } } });
    const yaml = flowYaml(service.url);
    // `done` is a last state (a dead end, warned of), as an order line's is.
    expect(parseFlow(yaml).diagnostics.map((d) => d.code)).toEqual(['dead_end_state']);
    flowId = await createFlow(rig.server, rig.account.apiKey, 'Orders', yaml);
    for (const [name, value] of [['tool_signing_secret', SIGNING_SECRET], ['shop_id', '42']]) {
      expect((await rig.server.request('PUT', `/v1/secrets/${name}`, { jwt: rig.account.jwt, body: { value } })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await service?.close();
  });

  it('keeps the caller in place for the global tool, then PUTs the order and keeps its nested id', { timeout: 45_000 }, async () => {
    const client = await rig.connect({ flow_id: flowId });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'What would you like?', 15_000);
    await client.waitFor('agent_stopped_speaking', undefined, 15_000);

    client.send({ type: 'text', text: 'Can you read the menu again?' });
    const menu = await client.waitFor('tool_call', (e) => e.name === 'repeat_menu', 15_000);
    expect(menu).toMatchObject({ status: 'accepted', from_state: 'start', to_state: 'start' });
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Today we have pizza and pasta.', 15_000);
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Anything else?', 15_000);
    await client.waitFor('agent_stopped_speaking', (e) => client.events.indexOf(e) > client.events.indexOf(menu), 15_000);

    client.send({ type: 'text', text: 'A pizza please.' });
    const answered = await client.waitFor('tool_result', (e) => e.name === 'place_order', 15_000);
    expect(answered).toMatchObject({ ok: true, http_status: 200, method: 'PUT', from_state: 'start', to_state: 'done' });
    const done = await client.waitFor('flow_state', (e) => e.state === 'done', 15_000);
    expect(done.variables).toMatchObject({ day: 'pizza', order_id: 'A-17' });
    expect(done.prompt).toBe('Order A-17');
    await client.waitFor('transcript', (e) => e.role === 'agent' && e.text === 'Your order A-17 is placed.', 15_000);

    const [request] = service.received;
    expect(request!.method).toBe('PUT');
    expect(request!.headers['x-shop']).toBe('shop-42');
    expect(request!.json).toMatchObject({ tool: 'place_order', arguments: { day: 'pizza' } });
    client.close();
  });
});
