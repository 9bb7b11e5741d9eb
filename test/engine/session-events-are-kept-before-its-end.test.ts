// A session is stored as ended only once every event it sent before its end is written (the
// engine asks the timeline to flush first): a backend that sees a session ended and reads its
// events finds the whole call, without waiting for the recorder's next timed write.
import { describe, expect, it } from 'vitest';
import { TimelineRecorder } from '../../server/outcomes/timeline.ts';
import { openStore } from '../../server/store/sqljs/store.ts';
import { closeAfterTest, tempDataDir } from '../store/helpers.ts';

describe("a session's timeline", () => {
  it('is written up to now on flush, keeps recording in order after it, and the end writes the rest', async () => {
    const store = closeAfterTest(await openStore({ dataDir: await tempDataDir() }));
    const account = await store.accounts.create({ email: 'ada@example.com', passwordHash: 'scrypt$x', signupCreditCents: 200 });
    const session = await store.sessions.create({
      accountId: account.id,
      flowId: null,
      tokenHash: 'token-hash-1',
      tokenPrefix: 'abcdefghijkl',
      transport: 'websocket',
      mode: 'flow',
      context: {},
      metadata: {},
      expiresAt: store.db.now() + 600,
    });
    const errors: unknown[] = [];
    // A timed write an hour away: only flush and end write here.
    const timelines = new TimelineRecorder(store, { error: (object) => errors.push(object) }, 3_600_000);
    const types = async () => (await store.timelines.page(session.id, 0, 100)).map((entry) => [entry.seq, entry.type]);

    timelines.record(session.id, { type: 'transfer', to: '+15551234567', mode: 'warm', status: 'started' });
    timelines.record(session.id, { type: 'transfer', to: '+15551234567', mode: 'warm', status: 'completed' });
    expect(await types()).toEqual([]);
    await timelines.flush(session.id);
    expect(await types()).toEqual([
      [1, 'transfer'],
      [2, 'transfer'],
    ]);

    timelines.record(session.id, { type: 'session_ended', reason: 'transferred', duration_secs: 3, credits_charged_usd_cents: 1 });
    await timelines.end(session.id);
    expect(await types()).toEqual([
      [1, 'transfer'],
      [2, 'transfer'],
      [3, 'session_ended'],
    ]);
    // A flush after the end finds nothing left to write.
    await timelines.flush(session.id);
    expect((await types()).length).toBe(3);
    expect(errors).toEqual([]);
  });
});
