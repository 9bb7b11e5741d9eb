// The adherence figure against a model that tries to leave its state: on every caller turn the
// model (the OpenAI fake's `wander`, through the real openai client) first calls a tool of another
// state, then, told that failed, one its state offers; typed sessions over WebSocket on the
// guessing game and the appointment-booking example. What a user should see: every attempt to
// leave refused, every move made by a tool its state offered. Counted twice: from the flow's own
// definition (which tools each state offers) and from the session's `adherence` figure.
import { readFileSync } from 'node:fs';
import { listedTools } from '../../server/flow/document-lookups.ts';
import { parseFlow } from '../../server/flow/parse.ts';
import type { FlowDocument } from '../../server/flow/types.ts';
import { createFlow } from '../support/server.ts';
import { connectSession, startVoiceRig } from '../support/voice-server.ts';
import type { BenchRow } from './bench-kit.ts';

const FLOWS = [
  { name: 'guessing game', yaml: readFileSync(new URL('../../resources/flows/guessing-game.yaml', import.meta.url), 'utf8') },
  { name: 'appointment booking', yaml: readFileSync(new URL('../../resources/flows/appointment-booking.yaml', import.meta.url), 'utf8') },
];
const SESSIONS = 10;
const TURNS = ["I'm ready", 'Is it an animal?', 'Tuesday please', 'Yes', 'No', 'Can I talk to someone?', 'Monday then', 'Thanks'];

function allTools(document: FlowDocument): string[] {
  const names = new Set(Object.keys(document.tools ?? {}));
  for (const state of Object.values(document.states)) for (const name of Object.keys(state.tools ?? {})) names.add(name);
  return [...names];
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const [index, flow] of FLOWS.entries()) {
    const document = parseFlow(flow.yaml).document!;
    const rig = await startVoiceRig({ rules: [{ respond: { wander: { tools: allTools(document), seed: 7 + index } } }], tts: 'openai', openai: { msPerWord: 20 } });
    try {
      const flowId = await createFlow(rig.server, rig.account.apiKey, flow.name, flow.yaml);
      const counted = { calls: 0, offState: 0, offStateRefused: 0, moves: 0, movesByOffered: 0 };
      const figure = { tool_calls: 0, rejected_off_state: 0, moves: 0, rejected_arguments: 0 };
      for (let s = 0; s < SESSIONS; s++) {
        const client = await connectSession(rig, { flow_id: flowId });
        const sessionId = (await client.waitFor('session_started')).session_id as string;
        await client.waitFor('agent_stopped_speaking', undefined, 20_000);
        for (const text of TURNS) {
          if (client.ofType('session_ended').length > 0) break;
          const before = client.ofType('agent_stopped_speaking').length;
          client.send({ type: 'text', text });
          await client.waitFor('agent_stopped_speaking', () => client.ofType('agent_stopped_speaking').length > before, 20_000).catch(() => undefined);
        }
        if (client.ofType('session_ended').length === 0) client.send({ type: 'end' });
        await client.waitFor('session_ended', undefined, 20_000);
        client.close();
        const detail = (await rig.server.request('GET', `/v1/sessions/${sessionId}`, { apiKey: rig.account.apiKey })).body;
        for (const call of detail.tool_calls as Array<{ name: string; status: string; source: string; from_state: string; to_state: string }>) {
          if (call.source !== 'model') continue;
          counted.calls++;
          const offered = listedTools(document, document.states[call.from_state]!).includes(call.name);
          if (!offered) {
            counted.offState++;
            if (call.status === 'rejected') counted.offStateRefused++;
          }
          if (call.status === 'accepted' && call.to_state !== call.from_state) {
            counted.moves++;
            if (offered) counted.movesByOffered++;
          }
        }
        for (const key of Object.keys(figure) as Array<keyof typeof figure>) figure[key] += detail.adherence[key];
      }
      rows.push({
        name: `adherence, ${flow.name}: a model that tries another state's tool on every turn`,
        value:
          `${counted.offStateRefused} of ${counted.offState} attempts to leave refused; ${counted.movesByOffered} of ${counted.moves} moves by a tool the state offered ` +
          `(the sessions' figure: ${figure.tool_calls} calls, ${figure.rejected_off_state} refused off-state, ${figure.rejected_arguments} for arguments, ${figure.moves} moves)`,
        target: 'every attempt refused, every move offered',
        how: `${SESSIONS} typed sessions × up to ${TURNS.length} turns over WebSocket; the OpenAI fake's wandering model through the real openai client; counted from the flow's definition and from GET /v1/sessions/{id}`,
      });
    } finally {
      await rig.close();
    }
  }
  return rows;
}
