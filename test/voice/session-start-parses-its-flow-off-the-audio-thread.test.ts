// A session's flow is parsed by the flow-job workers at admission, not on the
// thread that paces audio; sessions of the same stored version share that one parse.
import { describe, expect, it, vi } from 'vitest';
import { createFlow } from '../support/server.ts';
import { connectVoice, wsUrl } from '../support/voice-client.ts';
import { useVoiceRig } from '../support/voice-server.ts';

describe('starting a flow session', () => {
  const rig = useVoiceRig({ tts: 'openai', rules: [{ when: { lastRole: 'none' }, respond: { text: 'Hello!' } }] });

  it('parses the flow in the workers once per stored version, and runs it', { timeout: 30_000 }, async () => {
    const flowId = await createFlow(rig.server, rig.account.apiKey, 'Parsed once');
    const { flowJobs } = rig.server.app.services;
    const parse = vi.spyOn(flowJobs, 'parseDocument');
    try {
      const url = wsUrl(rig.server.url, `/ws?mode=flow&program_id=${flowId}`);
      const [first, second] = await Promise.all([connectVoice(url, { 'x-service-key': rig.account.apiKey }), connectVoice(url, { 'x-service-key': rig.account.apiKey })]);
      for (const client of [first, second]) {
        rig.track(client);
        expect(await client.waitFor('flow_state')).toMatchObject({ state: 'setup' });
      }
      const accountId = (await rig.server.app.services.store.accounts.findByEmail(rig.account.email))!.id;
      expect(parse.mock.calls.map(([account]) => account)).toEqual([`engine:${accountId}`]);
      const third = rig.track(await connectVoice(url, { 'x-service-key': rig.account.apiKey }));
      await third.waitFor('flow_state');
      expect(parse).toHaveBeenCalledTimes(1);
    } finally {
      parse.mockRestore();
    }
  });
});
