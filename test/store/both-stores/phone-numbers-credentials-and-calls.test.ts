// Phone calls in the store, against both stores (test/store/both-stores.ts): numbers bound to
// flows and unique over the whole server, carrier credentials kept as the API hands them over
// (sealed or plain), do-not-call lists, and a call's progress on its session.
import { describe, expect, it } from 'vitest';
import { WebhookOutbox } from '../../../server/outcomes/webhooks/outbox.ts';
import { CarrierCallTakenError, PhoneNumberTakenError } from '../../../server/store/errors.ts';
import type { NewSession, Store } from '../../../server/store/store.ts';
import { describeEachStore, type OpenTestStore } from './both-stores.ts';

async function storeWithClock(open: OpenTestStore) {
  const clock = { now: 1_700_000_000 };
  const opened = await open({ now: () => clock.now });
  return { ...opened, clock };
}

async function twoAccounts(store: Store) {
  const ada = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'h1' });
  const bo = await store.accounts.create({ email: 'bo@example.com', passwordHash: 'h2' });
  return { ada, bo };
}

let tokens = 0;
function phoneSession(accountId: string, phone: NewSession['phone'], transport: NewSession['transport'] = 'twilio', expiresAt = 1_700_000_600): NewSession {
  const tokenHash = `hash-${++tokens}`;
  return { accountId, flowId: 'flow-1', tokenHash, tokenPrefix: tokenHash, transport, mode: 'flow', context: {}, metadata: {}, expiresAt, phone };
}

describeEachStore('phone calls in the store', (open) => {
  describe('phone numbers', () => {
    it('binds a number to a flow, lists the account’s numbers newest first, and finds one by carrier and number', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const first = await store.phoneNumbers.create({ accountId: ada.id, carrier: 'twilio', number: '+15551230001', flowId: 'f1', label: 'Front desk' });
      clock.now += 1;
      const second = await store.phoneNumbers.create({ accountId: ada.id, carrier: 'telnyx', number: '+442071230002', flowId: 'f2', label: '' });

      expect(first).toEqual({
        id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        accountId: ada.id,
        carrier: 'twilio',
        number: '+15551230001',
        flowId: 'f1',
        label: 'Front desk',
        createdAt: 1_700_000_000,
        lastCallAt: null,
        lastCallStatus: null,
      });
      expect(await store.phoneNumbers.list(ada.id)).toEqual([second, first]);
      expect(await store.phoneNumbers.list(bo.id)).toEqual([]);
      expect(await store.phoneNumbers.get(ada.id, first.id)).toEqual(first);
      expect(await store.phoneNumbers.get(bo.id, first.id)).toBeNull();
      expect(await store.phoneNumbers.findByCarrierNumber('twilio', '+15551230001')).toEqual(first);
      // The webhook of another carrier for the same digits is not this binding.
      expect(await store.phoneNumbers.findByCarrierNumber('telnyx', '+15551230001')).toBeNull();
      expect(await store.phoneNumbers.findByCarrierNumber('twilio', '+15550000000')).toBeNull();
    });

    it('refuses a real number any account holds already, on any carrier, but lets SIP user parts be SIP’s own', async () => {
      const { store, rows } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      await store.phoneNumbers.create({ accountId: ada.id, carrier: 'twilio', number: '+15551230001', flowId: 'f1', label: '' });

      await expect(store.phoneNumbers.create({ accountId: bo.id, carrier: 'twilio', number: '+15551230001', flowId: 'f2', label: '' })).rejects.toBeInstanceOf(PhoneNumberTakenError);
      await expect(store.phoneNumbers.create({ accountId: bo.id, carrier: 'plivo', number: '+15551230001', flowId: 'f2', label: '' })).rejects.toBeInstanceOf(PhoneNumberTakenError);
      await expect(store.phoneNumbers.create({ accountId: ada.id, carrier: 'telnyx', number: '+15551230001', flowId: 'f1', label: '' })).rejects.toBeInstanceOf(PhoneNumberTakenError);
      const sip = await store.phoneNumbers.create({ accountId: bo.id, carrier: 'sip', number: '+15551230001', flowId: 'f2', label: 'trunk' });
      await expect(store.phoneNumbers.create({ accountId: ada.id, carrier: 'sip', number: '+15551230001', flowId: 'f1', label: '' })).rejects.toBeInstanceOf(PhoneNumberTakenError);

      expect(await store.phoneNumbers.findByCarrierNumber('sip', '+15551230001')).toEqual(sip);
      expect((await rows<{ n: number }>('SELECT COUNT(*) AS n FROM phone_numbers')).map((r) => Number(r.n))).toEqual([2]);
    });

    it('lets two accounts race for one number and gives it to exactly one', async () => {
      const { store } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const results = await Promise.allSettled([ada, bo, ada, bo].map((account) => store.phoneNumbers.create({ accountId: account.id, carrier: 'twilio', number: '+15559990000', flowId: 'f', label: '' })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(PhoneNumberTakenError);
    });

    it('deletes only the account’s own number, which frees it for anyone, and records each number’s last call', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const number = await store.phoneNumbers.create({ accountId: ada.id, carrier: 'twilio', number: '+15551230001', flowId: 'f1', label: '' });

      await store.phoneNumbers.recordCall(number.id, clock.now + 5, 'answered');
      expect(await store.phoneNumbers.get(ada.id, number.id)).toMatchObject({ lastCallAt: clock.now + 5, lastCallStatus: 'answered' });

      expect(await store.phoneNumbers.delete(bo.id, number.id)).toBe(false);
      expect(await store.phoneNumbers.delete(ada.id, number.id)).toBe(true);
      expect(await store.phoneNumbers.delete(ada.id, number.id)).toBe(false);
      expect(await store.phoneNumbers.findByCarrierNumber('twilio', '+15551230001')).toBeNull();
      const rebound = await store.phoneNumbers.create({ accountId: bo.id, carrier: 'telnyx', number: '+15551230001', flowId: 'f9', label: '' });
      expect(await store.phoneNumbers.findByCarrierNumber('telnyx', '+15551230001')).toEqual(rebound);
    });
  });

  describe('carrier credentials', () => {
    it('keeps each field as given (sealed or plain), per account and carrier, replaces and clears one field at a time', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const saved = await store.providers.updateCarrierCredentials(ada.id, [
        { carrier: 'twilio', field: 'account_sid', value: { plain: 'AC0123' } },
        { carrier: 'twilio', field: 'auth_token', value: { sealed: 'v1:sealed-token' } },
        { carrier: 'telnyx', field: 'api_key', value: { sealed: 'v1:sealed-key' } },
      ]);
      expect(saved).toEqual([
        { carrier: 'telnyx', field: 'api_key', valueEnc: 'v1:sealed-key', valuePlain: null, updatedAt: clock.now },
        { carrier: 'twilio', field: 'account_sid', valueEnc: null, valuePlain: 'AC0123', updatedAt: clock.now },
        { carrier: 'twilio', field: 'auth_token', valueEnc: 'v1:sealed-token', valuePlain: null, updatedAt: clock.now },
      ]);
      expect(await store.providers.carrierCredentials(ada.id, 'twilio')).toEqual(saved.slice(1));
      expect(await store.providers.carrierCredentials(bo.id)).toEqual([]);

      clock.now += 10;
      const after = await store.providers.updateCarrierCredentials(ada.id, [
        { carrier: 'twilio', field: 'auth_token', value: { sealed: 'v1:new-token' } },
        { carrier: 'telnyx', field: 'api_key', value: null },
      ]);
      expect(after).toEqual([
        { carrier: 'twilio', field: 'account_sid', valueEnc: null, valuePlain: 'AC0123', updatedAt: clock.now - 10 },
        { carrier: 'twilio', field: 'auth_token', valueEnc: 'v1:new-token', valuePlain: null, updatedAt: clock.now },
      ]);
      // Provider settings are a separate thing: untouched.
      expect((await store.providers.get(ada.id)).updatedAt).toBeNull();
    });
  });

  describe('do-not-call lists', () => {
    it('adds a number once, lists by number, answers whether a number is on the list, and removes it', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      expect(await store.doNotCall.add(ada.id, '+15551230002')).toEqual({ created: true, entry: { number: '+15551230002', createdAt: clock.now } });
      clock.now += 1;
      await store.doNotCall.add(ada.id, '+15551230001');
      expect(await store.doNotCall.add(ada.id, '+15551230002')).toEqual({ created: false, entry: { number: '+15551230002', createdAt: clock.now - 1 } });

      expect((await store.doNotCall.list(ada.id)).map((e) => e.number)).toEqual(['+15551230001', '+15551230002']);
      expect(await store.doNotCall.isDoNotCall(ada.id, '+15551230002')).toBe(true);
      expect(await store.doNotCall.isDoNotCall(bo.id, '+15551230002')).toBe(false);
      expect(await store.doNotCall.remove(bo.id, '+15551230002')).toBe(false);
      expect(await store.doNotCall.remove(ada.id, '+15551230002')).toBe(true);
      expect(await store.doNotCall.isDoNotCall(ada.id, '+15551230002')).toBe(false);
      expect(await store.doNotCall.remove(ada.id, '+15551230002')).toBe(false);
    });
  });

  describe('a call’s session', () => {
    it('keeps the call’s direction, numbers and carrier id, and finds the session by the carrier’s call id', async () => {
      const { store } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const call = await store.sessions.create(phoneSession(ada.id, { direction: 'inbound', from: '+15557654321', to: '+15551230001', carrierCallId: 'CA1', callStatus: 'ringing' }));
      const browser = await store.sessions.create({ ...phoneSession(ada.id, undefined, 'websocket') });

      expect(call).toMatchObject({ transport: 'twilio', direction: 'inbound', fromNumber: '+15557654321', toNumber: '+15551230001', carrierCallId: 'CA1', callStatus: 'ringing', transferredTo: null });
      expect(await store.sessions.findById(call.id)).toEqual(call);
      expect(await store.sessions.findById(browser.id)).toMatchObject({ direction: null, fromNumber: null, toNumber: null, carrierCallId: null, callStatus: null, transferredTo: null });
      expect(await store.sessions.findByCarrierCallId('twilio', 'CA1')).toEqual(call);
      expect(await store.sessions.findByCarrierCallId('telnyx', 'CA1')).toBeNull();
    });

    it('refuses a second session for a call id its carrier already gave, as a retried webhook would ask', async () => {
      const { store, rows } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const phone = { direction: 'inbound' as const, from: '+15557654321', to: '+15551230001', carrierCallId: 'CA-dup' };
      await store.sessions.create(phoneSession(ada.id, phone));
      await expect(store.sessions.create(phoneSession(ada.id, phone))).rejects.toBeInstanceOf(CarrierCallTakenError);
      // Another carrier's call may carry the same id.
      await store.sessions.create(phoneSession(ada.id, phone, 'telnyx'));
      expect((await rows<{ n: number }>("SELECT COUNT(*) AS n FROM sessions WHERE carrier_call_id = 'CA-dup'")).map((r) => Number(r.n))).toEqual([2]);
    });

    it('moves the call status forward only: late or repeated statuses change nothing, a final one stays', async () => {
      const { store } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const call = await store.sessions.create(phoneSession(ada.id, { direction: 'outbound', from: '+15551230001', to: '+15557654321', callStatus: 'queued' }));

      const moved = async (status: Parameters<typeof store.sessions.setCallStatus>[1]) => {
        const result = await store.sessions.setCallStatus(call.id, status);
        return [result?.session.callStatus, result?.moved];
      };
      expect(await moved('answered')).toEqual(['answered', true]);
      expect(await moved('answered')).toEqual(['answered', false]);
      expect(await moved('ringing')).toEqual(['answered', false]);
      expect(await moved('completed')).toEqual(['completed', true]);
      expect(await moved('failed')).toEqual(['completed', false]);
      expect(await moved('queued')).toEqual(['completed', false]);
      expect(await store.sessions.setCallStatus('no-such-session', 'ringing')).toBeNull();
      // The same status delivered twice at once (to two nodes): one delivery moves it.
      const again = await store.sessions.create(phoneSession(ada.id, { direction: 'outbound', from: '+15551230001', to: '+15557654322', callStatus: 'queued' }));
      const both = await Promise.all([store.sessions.setCallStatus(again.id, 'ringing'), store.sessions.setCallStatus(again.id, 'ringing')]);
      expect(both.map((r) => r?.moved).sort()).toEqual([false, true]);
    });

    it('takes an outbound call’s carrier id once placed, never one another call of the carrier holds, and keeps the transfer target', async () => {
      const { store } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const outbound = await store.sessions.create(phoneSession(ada.id, { direction: 'outbound', from: '+15551230001', to: '+15557654321', callStatus: 'queued' }, 'telnyx'));
      const other = await store.sessions.create(phoneSession(ada.id, { direction: 'inbound', from: '+15557654321', to: '+15551230001', carrierCallId: 'v3:held' }, 'telnyx'));

      expect((await store.sessions.setCarrierCallId(outbound.id, 'v3:placed'))?.carrierCallId).toBe('v3:placed');
      expect((await store.sessions.findByCarrierCallId('telnyx', 'v3:placed'))?.id).toBe(outbound.id);
      await expect(store.sessions.setCarrierCallId(outbound.id, 'v3:held')).rejects.toBeInstanceOf(CarrierCallTakenError);
      expect((await store.sessions.findByCarrierCallId('telnyx', 'v3:held'))?.id).toBe(other.id);

      expect((await store.sessions.setTransferredTo(other.id, 'sip:desk@example.com'))?.transferredTo).toBe('sip:desk@example.com');
      expect((await store.sessions.findById(other.id))?.transferredTo).toBe('sip:desk@example.com');
    });

    it('keeps the first answering-machine verdict a carrier sends apart from the answer; a later one changes nothing', async () => {
      const { store } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      const call = await store.sessions.create(phoneSession(ada.id, { direction: 'outbound', from: '+15551230001', to: '+15557654321', callStatus: 'queued' }, 'plivo'));
      expect(call.answeredBy).toBeNull();
      // The same verdict delivered twice at once (to two nodes): one delivery sets it.
      const both = await Promise.all([store.sessions.setAnsweredBy(call.id, 'machine'), store.sessions.setAnsweredBy(call.id, 'machine')]);
      expect(both.map((session) => session?.answeredBy ?? null).sort()).toEqual(['machine', null]);
      expect(await store.sessions.setAnsweredBy(call.id, 'human')).toBeNull();
      expect((await store.sessions.findById(call.id))?.answeredBy).toBe('machine');
      expect(await store.sessions.setAnsweredBy('no-such-session', 'machine')).toBeNull();
    });

    it('counts an account’s live outbound calls and those placed in the last minute, for its limits', async () => {
      const { store, clock } = await storeWithClock(open);
      const { ada, bo } = await twoAccounts(store);
      const t0 = clock.now;
      const outbound = (to: string) => phoneSession(ada.id, { direction: 'outbound', from: '+15551230001', to, callStatus: 'queued' }, 'twilio', t0 + 600);
      const old = await store.sessions.create(outbound('+15550000001'));
      clock.now = t0 + 61;
      const ringing = await store.sessions.create(outbound('+15550000002'));
      const busy = await store.sessions.create(outbound('+15550000003'));
      const ended = await store.sessions.create(outbound('+15550000004'));
      await store.sessions.create(phoneSession(ada.id, { direction: 'inbound', from: '+15550000005', to: '+15551230001' }));
      await store.sessions.create(phoneSession(bo.id, { direction: 'outbound', from: '+15551230009', to: '+15550000006' }));
      await store.sessions.setCallStatus(ringing.id, 'ringing');
      await store.sessions.setCallStatus(busy.id, 'busy');
      await store.sessions.end(ended.id, { endedAt: clock.now, reason: 'hangup', creditsChargedCents: 0 });

      // Live: the old one (still queued) and the ringing one; placed within the minute: the three after t0 + 1.
      expect(await store.sessions.countOutbound(ada.id, clock.now)).toEqual({ live: 2, lastMinute: 3 });
      // A token that nobody claimed before it expired is no live call.
      expect(await store.sessions.countOutbound(ada.id, t0 + 601)).toEqual({ live: 0, lastMinute: 0 });
      expect(old.direction).toBe('outbound');
    });
  });

  describe('call.status webhooks', () => {
    it('puts call.status in the outbox durably for the endpoints subscribed to it, with the call in full', async () => {
      const { store } = await storeWithClock(open);
      const { ada } = await twoAccounts(store);
      await store.webhooks.create({ id: 'wh-calls', accountId: ada.id, url: 'https://example.com/calls', events: ['call.status'], secretEnc: 'sealed' });
      await store.webhooks.create({ id: 'wh-ends', accountId: ada.id, url: 'https://example.com/ends', events: ['session.ended'], secretEnc: 'sealed' });
      const call = await store.sessions.create({
        ...phoneSession(ada.id, { direction: 'outbound', from: '+15551230001', to: '+15557654321', carrierCallId: 'CA9', callStatus: 'ringing' }),
        metadata: { ticket: 42 },
      });
      let written = 0;
      const outbox = new WebhookOutbox(store, { error: () => undefined }, () => written++, () => 'https://voxflow.example.com');

      await outbox.callStatus(call, 'ringing', 1_700_000_010);
      await outbox.close();

      const due = await store.webhooks.due(1_800_000_000, 10);
      expect(due.map((d) => [d.webhookId, d.eventType, d.sessionId])).toEqual([['wh-calls', 'call.status', call.id]]);
      expect(JSON.parse(due[0]!.payload)).toEqual({
        type: 'call.status',
        timestamp: new Date(1_700_000_010_000).toISOString(),
        data: {
          session_id: call.id,
          flow_id: 'flow-1',
          transport: 'twilio',
          direction: 'outbound',
          from: '+15551230001',
          to: '+15557654321',
          carrier_call_id: 'CA9',
          call_status: 'ringing',
          transferred_to: null,
          status: 'ringing',
          metadata: { ticket: 42 },
        },
      });
      expect(written).toBe(1);
    });
  });
});
