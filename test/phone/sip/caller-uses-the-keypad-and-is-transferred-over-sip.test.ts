// A caller on the phone menu over SIP: keys move the flow (1, then an account number ending in #),
// sent as RFC 4733 events from sip-tester's pcaps and one as SIP INFO (application/dtmf-relay),
// and only from the caller's own address; 0 hands the call to the front desk with a REFER to the
// peer that sent the call. sipp, the transferee, accepts it and reports the front desk answered:
// the session ends `transferred`, and Voxflow leaves the call with a BYE. When the front desk is
// busy (NOTIFY with 486), the caller is back at the menu.
import { createSocket } from 'node:dgram';
import { describe, expect, it, vi } from 'vitest';
import { afterThisTest } from '../../support/after-this-test.ts';
import { FRONT_DESK, PHONE_MENU_YAML } from '../../support/phone-menu-flow.ts';
import { listenForRtp, runSipp, telephoneEvent, useSipRig } from '../../support/sip-rig.ts';

type TimelineEvent = { type: string; event: Record<string, unknown> };

describe('a SIP caller on a keypad menu', () => {
  const rig = useSipRig({ llm: 'none', transcripts: [] });
  const api = (path: string) => rig().server.request('GET', path, { apiKey: rig().account.apiKey }).then((r) => r.body);
  let menuBound: Promise<string> | null = null;
  const menu = () => (menuBound ??= rig().bind('1000', PHONE_MENU_YAML));
  const newSession = (known: Set<string>) =>
    vi.waitFor(
      async () => {
        const found = (await api('/v1/sessions')).find((s: { id: string; transport: string }) => s.transport === 'sip' && !known.has(s.id));
        expect(found).toBeDefined();
        return found.id as string;
      },
      { timeout: 20_000, interval: 100 },
    );

  /** sipp places the call of `scenario` to the phone menu; resolves with its run and the session once ended. */
  async function callAndWaitForTheEnd(scenario: string) {
    await menu();
    const before = new Set<string>((await api('/v1/sessions')).map((s: { id: string }) => s.id));
    const ear = await listenForRtp();
    const run = await runSipp({ rig: rig(), scenario, rtpPort: ear.port });
    expect(run.code, run.output).toBe(0);
    const id = await newSession(before);
    const detail = await vi.waitFor(
      async () => {
        const body = await api(`/v1/sessions/${id}`);
        expect(body.status).toBe('ended');
        return body;
      },
      { timeout: 20_000, interval: 100 },
    );
    return { run, detail };
  }

  it('moves on keys, collects the account number, and is transferred by REFER', { timeout: 90_000 }, async () => {
    const { run, detail } = await callAndWaitForTheEnd('keypad-and-transfer.xml');
    expect(detail).toMatchObject({ transport: 'sip', end_reason: 'transferred', transferred_to: FRONT_DESK });
    expect(detail.variables.account_number).toBe('0427');
    const timeline: TimelineEvent[] = (await api(`/v1/sessions/${detail.id}/events?limit=500`)).events;
    expect(timeline.filter((e) => e.type === 'dtmf').map((e) => e.event.digits)).toEqual(['1', '0', '4', '2', '7', '#', '0']);
    const moves = timeline.filter((e) => e.type === 'dtmf').flatMap((e) => (e.event.moves as Array<{ via: string; to_state: string }>).map((m) => `${m.via}→${m.to_state}`));
    expect(moves).toEqual(['key 1→account', 'collect account_number→thanks', 'key 0→human']);
    expect(timeline.filter((e) => e.type === 'transfer').map((e) => e.event.status)).toEqual(['started', 'completed']);
  });

  it('takes keys only from the address the caller\'s SDP named', { timeout: 60_000 }, async () => {
    await menu();
    const before = new Set<string>((await api('/v1/sessions')).map((s: { id: string }) => s.id));
    const ear = await listenForRtp();
    // A call that stays up a while and presses nothing itself (it holds and resumes, then hangs up).
    const call = runSipp({ rig: rig(), scenario: 'hold-and-resume.xml', rtpPort: ear.port });
    const id = await newSession(before);
    const path = async () => (await api(`/v1/sessions/${id}`)).path.map((p: { state: string }) => p.state);
    await vi.waitFor(async () => expect(await path()).toEqual(['menu']), { timeout: 15_000, interval: 100 });
    await vi.waitFor(() => expect(ear.packets.length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
    const ours = ear.packets[0]!.from;
    const stranger = createSocket('udp4');
    await new Promise<void>((resolve) => stranger.bind(0, '127.0.0.2', resolve));
    afterThisTest(() => new Promise<void>((resolve) => stranger.close(() => resolve())));
    const press = (socket: typeof stranger, timestamp: number) => {
      for (let i = 0; i < 3; i++) socket.send(telephoneEvent('1', { sequence: timestamp + i, timestamp, end: i === 2 }), ours.port, ours.address);
    };
    press(stranger, 1000);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(await path()).toEqual(['menu']);
    // The same key from the caller's own address moves the menu.
    press(ear.socket, 2000);
    await vi.waitFor(async () => expect(await path()).toEqual(['menu', 'account']), { timeout: 10_000, interval: 100 });
    const run = await call;
    expect(run.code, run.output).toBe(0);
  });

  it('takes the caller back to the menu when the front desk is busy', { timeout: 90_000 }, async () => {
    const { run, detail } = await callAndWaitForTheEnd('transfer-refused.xml');
    expect(detail).toMatchObject({ end_reason: 'caller_hung_up', transferred_to: null });
    expect(detail.path.map((p: { state: string }) => p.state)).toEqual(['menu', 'human', 'menu']);
    const timeline: TimelineEvent[] = (await api(`/v1/sessions/${detail.id}/events?limit=500`)).events;
    const failed = timeline.filter((e) => e.type === 'transfer');
    expect(failed.map((e) => e.event.status)).toEqual(['started', 'failed']);
    expect(failed[1]!.event.reason).toMatch(/486/);
  });
});
