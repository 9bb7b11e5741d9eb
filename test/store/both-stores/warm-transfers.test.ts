// Warm transfers in the store, against both stores: the person's leg of a phone call being handed
// on, read and moved by whichever node a carrier's callback reaches. Each move is made once from
// the state it expects, so a callback repeated or replayed, or two nodes acting at once, change
// the transfer once.
import { expect, it } from 'vitest';
import type { NewWarmTransfer, Store } from '../../../server/store/store.ts';
import { describeEachStore } from './both-stores.ts';

async function aTransfer(store: Store, overrides: Partial<NewWarmTransfer> = {}) {
  const account = await store.accounts.create({ email: `ada${Math.random()}@example.com`, passwordHash: 'h' });
  return store.warmTransfers.create({
    sessionId: 'session-1',
    accountId: account.id,
    carrier: 'twilio',
    callerCallId: 'CA-caller',
    target: '+15551234567',
    conference: 'voxflow-session-1',
    answerKeyHash: `key-${Math.random()}`,
    summary: null,
    ...overrides,
  });
}

describeEachStore('warm transfers in the store', (open) => {
  it('keeps a transfer dialling, finds it by the digest of its answer key, and keeps its leg and summary', async () => {
    const clock = { now: 1_700_000_000 };
    const { store } = await open({ now: () => clock.now });
    const made = await aTransfer(store, { answerKeyHash: 'digest-1' });
    expect(made).toMatchObject({ state: 'dialing', summary: null, legCallId: null, reason: null, createdAt: 1_700_000_000, callerCallId: 'CA-caller', conference: 'voxflow-session-1' });
    clock.now += 2;
    await store.warmTransfers.setLegCallId(made.id, 'CA-person');
    await store.warmTransfers.setSummary(made.id, 'Ann wants to move her appointment.');
    // A second summary (a slow model after the fallback was kept) does not replace the first.
    await store.warmTransfers.setSummary(made.id, 'something else');
    const found = await store.warmTransfers.findByAnswerKey('digest-1');
    expect(found).toEqual({ ...made, legCallId: 'CA-person', summary: 'Ann wants to move her appointment.', updatedAt: 1_700_000_002 });
    expect(await store.warmTransfers.get(made.id)).toEqual(found);
    expect(await store.warmTransfers.findByAnswerKey('digest-2')).toBeNull();
    expect(await store.warmTransfers.get('nope')).toBeNull();
  });

  it('moves a transfer once from the state it expects, with its reason, and refuses a move from any other', async () => {
    const { store } = await open();
    const first = await aTransfer(store);
    const answered = await store.warmTransfers.move(first.id, ['dialing'], 'answered');
    expect(answered).toMatchObject({ id: first.id, state: 'answered', reason: null });
    // The same answer callback again, or a no-answer status arriving late: nothing moves.
    expect(await store.warmTransfers.move(first.id, ['dialing'], 'answered')).toBeNull();
    expect(await store.warmTransfers.move(first.id, ['dialing'], 'failed', 'no answer')).toBeNull();
    expect(await store.warmTransfers.move(first.id, ['answered'], 'joined')).toMatchObject({ state: 'joined' });
    expect((await store.warmTransfers.get(first.id))!.state).toBe('joined');

    const second = await aTransfer(store);
    expect(await store.warmTransfers.move(second.id, ['dialing', 'answered'], 'failed', 'the person did not answer')).toMatchObject({ state: 'failed', reason: 'the person did not answer' });
    // Once failed, a summary arriving late is not kept: nobody will hear it.
    await store.warmTransfers.setSummary(second.id, 'late');
    expect((await store.warmTransfers.get(second.id))!.summary).toBeNull();
  });

  it('lets one of two moves made at once win', async () => {
    const { store } = await open();
    const made = await aTransfer(store);
    const [a, b] = await Promise.all([store.warmTransfers.move(made.id, ['dialing'], 'answered'), store.warmTransfers.move(made.id, ['dialing'], 'cancelled', 'the caller hung up')]);
    expect([a, b].filter((moved) => moved !== null)).toHaveLength(1);
  });
});
