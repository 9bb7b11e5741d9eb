// An outbound call whose flow sets `voicemail.detect` meets an answering machine: the carrier's
// detector waits out the greeting and fetches our markup with its verdict, and the machine
// records the flow's message, said in the flow's voice down the media stream; then Voxflow hangs
// up through the carrier's API. The session ends `voicemail`, billed once, with the message on
// its transcript, in GET /v1/sessions/{id} and in session.ended. A person who picks up gets the
// flow as on any call; a machine with no message to leave, and a fax, are hung up on at once.
//
// Plivo's detector listens while the call already runs and never says when the greeting ends:
// the flow starts on the answer, Plivo posts its verdict while the machine's greeting plays, and
// Voxflow stops the flow, hears the greeting out on the line (its beep, or a second of silence
// after it) and only then leaves the message.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dbfs } from '../../server/audio/pcm.ts';
import { pickUp, type MachineLine } from '../fakes/carriers/answering-machine.ts';
import { BUSINESS_NUMBER, carriersToTest, usePhoneRig, type PhoneRig } from '../support/phone-rig.ts';
import { synthesizeSpeech } from '../support/speech.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const CALLEE = '+15550107777';
// Short, as the machine's greeting below: each is heard in real time, and a few words are enough
// to tell whether the message was recorded whole, after the greeting.
const MESSAGE = 'Hi {customer_name}, the Riverside clinic here. Please call us back.';
const SAID = 'Hi Ann, the Riverside clinic here. Please call us back.';

const flowYaml = (voicemail: string) => `
id: reminder
version: "1.0.0"
initial_state: hello
settings:
  base_system_prompt: You call patients about their appointments.
  voicemail: ${voicemail}
states:
  hello:
    ui: { artifact_type: card, prompt: "Reminder" }
    on_enter:
      say: Hello, this is the Riverside clinic calling about your appointment.
    respond: false
    agent:
      prompt: Remind the patient of their appointment.
`;

const MS_PER_WORD = 250;
const MACHINE_FLOW = flowYaml(`{ detect: true, message: "${MESSAGE}" }`);
const SILENT_MACHINE_FLOW = flowYaml('{ detect: true }');
/** Longer than the 1.5 s after which Plivo's detector gives its verdict in the fake. */
const GREETING = 'You have reached Ann. Please leave a message after the beep.';
const HELLO = 'Hello, this is the Riverside clinic calling about your appointment.';

/** The line of a Plivo machine: its greeting's speech (then its beep and silence, in the fake). */
let machineLine: MachineLine | undefined;
beforeAll(async () => {
  machineLine = { greeting: await synthesizeSpeech(GREETING) };
});

// Every suite below runs at the same time as the others, each on a rig of its own (server, account,
// carrier): the calls are mostly real-time waits. A suite's own calls run one after another.
describe.concurrent.each(carriersToTest(['twilio', 'telnyx', 'plivo'] as const, 'telnyx'))('an outbound %s call with answering-machine detection', (carrier) => {
  // A hosted voice (the OpenAI fake's, a tone burst per word), so the message costs a minute of
  // speech; recognition and the model are never used on a machine, and cost nothing.
  const rig = usePhoneRig(carrier, { llm: 'none', tts: 'openai', openai: { msPerWord: MS_PER_WORD }, transcripts: [], flowYaml: MACHINE_FLOW, config: { webhooks: { allowPrivate: true } } });
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const subscribed = await rig().server.request('POST', '/v1/webhooks', { jwt: rig().account.jwt, body: { url: receiver.url, events: ['session.ended'] } });
    expect(subscribed.status).toBe(201);
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const place = (r: PhoneRig, flowId = r.flowId) =>
    r.server.request('POST', '/v1/calls', { apiKey: r.account.apiKey, body: { flow_id: flowId, from: BUSINESS_NUMBER, to: CALLEE, variables: { customer_name: 'Ann' } } });
  const detail = async (id: string) => (await rig().server.request('GET', `/v1/sessions/${id}`, { apiKey: rig().account.apiKey })).body;
  const balance = async () => (await rig().server.request('GET', '/v1/credits/balance', { apiKey: rig().account.apiKey })).body;

  it.sequential('leaves the message on the machine in the flow\'s voice, hangs up, and ends the session as voicemail, charged once', { timeout: 90_000 }, async () => {
    const before = await balance();
    const placed = await place(rig());
    expect(placed.status).toBe(201);
    const callId = placed.body.carrier_call_id as string;
    // The carrier was asked to detect a machine (Twilio and Telnyx: and to wait for the greeting's
    // end before fetching our markup; Plivo: to post its verdict while the call runs).
    expect(rig().api.calls.get(callId)).toMatchObject({ machineDetection: true });

    const { stream, greetingOver } = await pickUp(rig().api, carrier, rig().signer, callId, 'machine', machineLine);
    expect(stream).not.toBeNull();
    // The message is said and then the call is hung up at the carrier: Voxflow closes the stream.
    await vi.waitFor(() => expect(stream!.closed).not.toBeNull(), { timeout: 30_000, interval: 100 });
    await vi.waitFor(() => expect(rig().api.calls.get(callId)!.status).toBe('completed'), { timeout: 15_000, interval: 100 });
    // Hung up once, through the carrier's REST API.
    const hangUps = rig().api.requests.filter((r) => (carrier === 'plivo' ? r.method === 'DELETE' : (r.body as Record<string, unknown> | null)?.Status === 'completed'));
    expect(hangUps).toHaveLength(1);

    // The message went to the voice whole, placeholders rendered, and what the machine recorded
    // (on Plivo: from the end of its beep) is that speech, as long as the message takes to say:
    // not silence, not cut short, so none of it went down the line while the greeting played.
    const spoken = rig().openai.requests.filter((r) => r.path.endsWith('/audio/speech')).map((r) => (r.body as { input: string }).input);
    // On Plivo the flow began on the answer: its first line was being said when the verdict came.
    expect(spoken).toEqual(carrier === 'plivo' ? [HELLO, SAID] : [SAID]);
    const heardDuringTheGreeting = greetingOver ? await greetingOver : 0;
    const recorded = stream!.receivedAudio().subarray(heardDuringTheGreeting);
    const expectedSeconds = (SAID.split(/\s+/).length * MS_PER_WORD) / 1000;
    expect(recorded.length / 8000).toBeGreaterThan(expectedSeconds * 0.9);
    expect(recorded.length / 8000).toBeLessThan(expectedSeconds + 1);
    expect(dbfs(recorded)).toBeGreaterThan(-40);
    expect(stream!.protocolErrors).toEqual([]);

    const ended = await vi.waitFor(
      async () => {
        const body = await detail(placed.body.session_id);
        expect(body.status).toBe('ended');
        return body;
      },
      { timeout: 15_000, interval: 100 },
    );
    const placedCallId = carrier === 'plivo' ? rig().api.calls.get(callId)!.callId : callId;
    expect(ended).toMatchObject({ end_reason: 'voicemail', direction: 'outbound', to: CALLEE, carrier_call_id: placedCallId });
    // The message, placeholders rendered, is what the agent said last, once; before it, only what
    // was heard of the flow's first line on Plivo, cut when the verdict came.
    const lines = ended.transcript.map((t: { role: string; text: string }) => `${t.role}: ${t.text}`);
    if (carrier === 'plivo') {
      expect(lines.at(-1)).toBe(`agent: ${SAID}`);
      expect(lines.slice(0, -1).every((line: string) => line.startsWith('agent: ') && HELLO.startsWith(line.slice('agent: '.length)))).toBe(true);
    } else {
      expect(lines).toEqual([`agent: ${SAID}`]);
    }
    // Charged once. Twilio and Telnyx: a minute of the voice only, less than a minute with
    // recognition and the model (on Plivo the flow listened until the verdict came).
    const after = await balance();
    const charged = ended.credits_charged_usd_cents as number;
    expect(charged).toBeGreaterThan(0);
    if (carrier !== 'plivo') expect(charged).toBeLessThan(after.effective_rate_per_minute_usd_cents as number);
    expect(before.balance_usd_cents - after.balance_usd_cents).toBe(charged);

    const hook = await receiver.waitFor((r) => r.json?.type === 'session.ended' && r.json.data.session_id === placed.body.session_id, 20_000, 'session.ended');
    expect(hook.json.data).toMatchObject({ end_reason: 'voicemail', credits_charged_usd_cents: charged });
    expect(hook.json.data.transcript.map((t: { text: string }) => t.text).at(-1)).toBe(SAID);
  });

  it.sequential('runs the flow as on any call when a person picks up', { timeout: 60_000 }, async () => {
    const placed = await place(rig());
    expect(placed.status).toBe(201);
    const callId = placed.body.carrier_call_id as string;
    const { stream } = await pickUp(rig().api, carrier, rig().signer, callId, 'human');
    expect(stream).not.toBeNull();
    await vi.waitFor(async () => expect((await detail(placed.body.session_id)).transcript.map((t: { text: string }) => t.text)).toContain(HELLO), {
      timeout: 30_000,
      interval: 200,
    });
    // The whole first line reaches the person (on Plivo, the detector's verdict came meanwhile).
    const helloSeconds = (HELLO.split(/\s+/).length * MS_PER_WORD) / 1000;
    await vi.waitFor(() => expect(stream!.receivedAudio().length / 8000).toBeGreaterThan(helloSeconds * 0.9), { timeout: 30_000, interval: 100 });
    expect((await detail(placed.body.session_id)).transcript.map((t: { text: string }) => t.text)).toEqual([HELLO]);
    // The person is still on the line: nothing hung up on them.
    expect(stream!.closed).toBeNull();
    expect(rig().api.calls.get(callId)!.status).toBe('in-progress');
    await stream!.hangUp();
    await vi.waitFor(async () => expect(await detail(placed.body.session_id)).toMatchObject({ status: 'ended', end_reason: 'caller_hung_up' }), { timeout: 15_000 });
  });

  // Plivo's verdict comes while the call runs, and says only Machine=true or false: no fax.
  if (carrier !== 'plivo') it.sequential('hangs up on a fax at once, opening no stream and charging nothing', async () => {
    const before = (await balance()).balance_usd_cents;
    const placed = await place(rig());
    const { answered, stream } = await pickUp(rig().api, carrier, rig().signer, placed.body.carrier_call_id, 'fax');
    expect(stream).toBeNull();
    expect(answered.body).toMatch(/<Response><Hangup\/><\/Response>/);
    expect(await detail(placed.body.session_id)).toMatchObject({ status: 'ended', end_reason: 'fax', credits_charged_usd_cents: 0 });
    expect((await balance()).balance_usd_cents).toBe(before);
  });
});

describe.concurrent('an outbound Twilio call to a machine, from a flow with no voicemail message', () => {
  const rig = usePhoneRig('twilio', { llm: 'none', transcripts: [], flowYaml: SILENT_MACHINE_FLOW });

  it('hangs up without a word and ends the session as voicemail, charging nothing', async () => {
    const placed = await rig().server.request('POST', '/v1/calls', { apiKey: rig().account.apiKey, body: { flow_id: rig().flowId, from: BUSINESS_NUMBER, to: CALLEE } });
    expect(placed.status).toBe(201);
    const { answered, stream } = await pickUp(rig().api, 'twilio', rig().signer, placed.body.carrier_call_id, 'machine');
    expect(stream).toBeNull();
    expect(answered.body).toMatch(/<Response><Hangup\/><\/Response>/);
    const ended = (await rig().server.request('GET', `/v1/sessions/${placed.body.session_id}`, { apiKey: rig().account.apiKey })).body;
    expect(ended).toMatchObject({ status: 'ended', end_reason: 'voicemail', credits_charged_usd_cents: 0, transcript: [] });
  });
});

// Plivo's own protocol (its verdict comes after the stream has started): on PostgreSQL, the calls above end as voicemail already.
describe.concurrent.each(carriersToTest(['plivo'] as const, null))('an outbound %s call to a machine, from a flow with no voicemail message', (carrier) => {
  const rig = usePhoneRig(carrier, { llm: 'none', transcripts: [], flowYaml: SILENT_MACHINE_FLOW });

  it('hangs up once the verdict comes and ends the session as voicemail, saying nothing more', { timeout: 60_000 }, async () => {
    const placed = await rig().server.request('POST', '/v1/calls', { apiKey: rig().account.apiKey, body: { flow_id: rig().flowId, from: BUSINESS_NUMBER, to: CALLEE } });
    expect(placed.status).toBe(201);
    const callId = placed.body.carrier_call_id as string;
    const { stream } = await pickUp(rig().api, carrier, rig().signer, callId, 'machine', machineLine);
    expect(stream).not.toBeNull();
    await vi.waitFor(() => expect(stream!.closed).not.toBeNull(), { timeout: 30_000, interval: 100 });
    await vi.waitFor(() => expect(rig().api.calls.get(callId)!.status).toBe('completed'), { timeout: 15_000, interval: 100 });
    const ended = (await rig().server.request('GET', `/v1/sessions/${placed.body.session_id}`, { apiKey: rig().account.apiKey })).body;
    expect(ended).toMatchObject({ status: 'ended', end_reason: 'voicemail' });
    // Nothing but what was heard of the flow's first line before the verdict.
    expect(ended.transcript.every((t: { role: string; text: string }) => t.role === 'agent' && HELLO.startsWith(t.text))).toBe(true);
  });
});
