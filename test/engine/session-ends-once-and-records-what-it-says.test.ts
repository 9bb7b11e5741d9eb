import { expect, it } from 'vitest';
import { SCENARIO_START, startScriptedSession } from './scripted-session.ts';

// Ending is asked for from many places at once (the client's `end`, the transport closing, a
// server shutdown). The session ends once, records its end before it says so, and what it
// records is what it says — even when the store takes a while to write it.
it('ending twice sends session_ended once, after the end is recorded with the same duration, then stays silent', async () => {
  let recordWritten = false;
  const rig = await startScriptedSession({
    model: [{ text: "Welcome to ten questions! Tell me when you're ready." }],
    // A slow store: a naive record would be stamped 0.7 s later than the event, a whole second apart.
    recordEnd: () => new Promise((resolve) => setTimeout(() => resolve(void (recordWritten = true)), 700)),
  });
  // 1.4 s in, the greeting is still playing when the client hangs up: 1.4 s rounds to 1.
  await rig.run(1_400);

  rig.send({ type: 'end' });
  const serverShutdown = rig.session.end('server_shutdown');
  await rig.run(0);
  expect(rig.ofType('session_ended')).toEqual([]);
  await rig.run(700);
  await serverShutdown;

  expect(recordWritten).toBe(true);
  const ended = rig.ofType('session_ended');
  expect(ended).toEqual([{ type: 'session_ended', reason: 'client_ended', duration_secs: 1, credits_charged_usd_cents: 0 }]);
  expect(rig.ends).toEqual([{ reason: 'client_ended', creditsChargedCents: 0, endedAt: SCENARIO_START / 1000 + 1.4, durationSecs: 1 }]);
  expect(rig.hooks.filter((h) => h.type === 'ended')).toEqual([{ type: 'ended', reason: 'client_ended', durationSecs: 1, creditsChargedCents: 0 }]);
  expect(rig.closed).toEqual([{ code: 1000, reason: 'client_ended' }]);
  expect(rig.session.isEnded).toBe(true);
  // The cut greeting is said as interrupted before the end; nothing at all comes after it.
  expect(rig.kinds().slice(-2)).toEqual(['transcript', 'session_ended']);
  const events = rig.events.length;
  const frames = rig.frames.length;
  rig.send({ type: 'text', text: 'Hello?' });
  rig.session.handleTextFrame('{"type":"ping"}');
  rig.session.pushAudio(new Int16Array(320));
  await rig.run(2_000);
  expect(rig.events.length).toBe(events);
  expect(rig.frames.length).toBe(frames);
  expect(rig.user.samplesPushed()).toBe(0);
});
