// A flow's traffic as the store answers it from its pre-counted days (rows/traffic-tally.ts) equals
// a direct count of the sessions made, on both stores, over a random mix: calls over 40 days (so
// ranges cross the 16-day blocks' edges),
// on two versions and the draft, some in an experiment, their moves in timeline batches that land
// before or after the end, ends retried, analyses done after the end, some calls still connected;
// asked with ranges on and off day boundaries and every other filter the rows keep.
import { expect, it } from 'vitest';
import type { Store, TrafficFilter } from '../../../server/store/store.ts';
import { describeEachStore } from './both-stores.ts';

const DAY = 86_400;
const STATES = ['greet', 'ask', 'book', 'help', 'bye'];
const TOOLS = ['go', 'book', 'help'];
const REASONS = ['caller_hung_up', 'flow_ended', 'transferred'];

/** A small seeded generator, so a failure names the seed that made it. */
function generator(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]! };
}

type Step = { to: string; tool: string | null };
interface Made {
  id: string;
  createdAt: number;
  version: number | 'draft';
  experiment: { id: string; arm: number } | null;
  path: Step[];
  end: string | null;
  success: 'true' | 'false' | 'unknown' | null;
}

/** The traffic counted straight from the sessions made. */
function directCount(sessions: Made[], filter: TrafficFilter) {
  const counted = sessions.filter(
    (s) =>
      (filter.from === undefined || s.createdAt >= filter.from) &&
      (filter.to === undefined || s.createdAt < filter.to) &&
      (filter.version === undefined ? s.version !== 'draft' : s.version === filter.version) &&
      (filter.success === undefined || s.success === filter.success) &&
      (filter.experiment === undefined || s.experiment?.id === filter.experiment) &&
      (filter.arm === undefined || s.experiment?.arm === filter.arm),
  );
  const states = new Map<string, Set<string>>();
  const moves = new Map<string, { from: string | null; to: string; tool: string | null; calls: Set<string>; times: number }>();
  const ends = new Map<string, { state: string | null; reason: string; calls: number }>();
  const success = { true: 0, false: 0, unknown: 0, none: 0 };
  for (const s of counted) {
    let from: string | null = null;
    for (const step of s.path) {
      (states.get(step.to) ?? states.set(step.to, new Set()).get(step.to)!).add(s.id);
      const key = JSON.stringify([from, step.to, step.tool]);
      const move = moves.get(key) ?? moves.set(key, { from, to: step.to, tool: step.tool, calls: new Set(), times: 0 }).get(key)!;
      move.calls.add(s.id);
      move.times++;
      from = step.to;
    }
    if (s.end !== null) {
      const key = JSON.stringify([from, s.end]);
      (ends.get(key) ?? ends.set(key, { state: from, reason: s.end, calls: 0 }).get(key)!).calls++;
    }
    success[s.success ?? 'none']++;
  }
  return {
    calls: counted.length,
    states: sorted([...states].map(([state, ids]) => ({ state, calls: ids.size }))),
    transitions: sorted([...moves.values()].map((m) => ({ from: m.from, to: m.to, tool: m.tool, calls: m.calls.size, times: m.times }))),
    ends: sorted([...ends.values()]),
    success,
  };
}

const sorted = <T>(rows: T[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** The timeline events of some steps of a path, as the recorder leaves them. */
function events(steps: Step[], from: string | null) {
  const out: Array<Record<string, unknown>> = [];
  let state = from;
  for (const step of steps) {
    if (step.tool) out.push({ type: 'tool_call', name: step.tool, arguments: {}, status: 'accepted', reason: null, from_state: state, to_state: step.to, source: 'model' });
    out.push({ type: 'flow_state', state: step.to, prompt: '', artifact_type: 'text', variables: {}, tools: [] });
    state = step.to;
  }
  return out;
}

describeEachStore('a flow\'s traffic from its pre-counted days', (open) => {
  it('equals a direct count of the sessions over a random mix of calls and filters', { timeout: 240_000 }, async () => {
    const seed = Date.now() % 1_000_000;
    const random = generator(seed);
    // 40 days from a day boundary mid-block, plus a few hours: ranges fall on and off boundaries.
    const start = 20_405 * DAY + 3 * 3600;
    let clock = start;
    const { store, rows } = await open({ now: () => clock });
    const account = await store.accounts.create({ email: `traffic${Math.random()}@example.com`, passwordHash: 'h' });
    const flow = await store.flows.create({ accountId: account.id, name: 'f', yamlContent: 'id: f' });
    const made: Made[] = [];

    for (let n = 0; n < 70; n++) {
      clock = start + random.int(40 * DAY);
      const version = random.pick([1, 1, 2, 'draft'] as const);
      const experiment = version !== 'draft' && random.next() < 0.4 ? { id: random.pick(['exp_a', 'exp_b']), arm: version } : null;
      const session = await store.sessions.createConnected({
        accountId: account.id,
        flowId: flow.id,
        transport: 'websocket',
        mode: 'flow',
        context: {},
        metadata: {},
        flowVersion: version === 'draft' ? null : version,
        flowDraft: version === 'draft',
        experiment,
      });
      const path: Step[] = [];
      for (let k = 0, length = random.int(6); k < length; k++) {
        const last = path.at(-1)?.to ?? null;
        const to = random.pick(STATES.filter((s) => s !== last));
        path.push({ to, tool: k === 0 || random.next() < 0.3 ? null : random.pick(TOOLS) });
      }
      const cut = random.int(path.length + 1);
      let seq = 0;
      const batch = async (steps: Step[], from: string | null) => {
        const entries = events(steps, from).map((event) => ({ seq: ++seq, at: clock, type: String(event.type), data: JSON.stringify(event) }));
        if (entries.length > 0) await store.timelines.append(session.id, entries, { events: seq, bytes: seq * 10, dropped: 0 });
      };
      const end = random.next() < 0.15 ? null : random.pick(REASONS);
      const success = end !== null && random.next() < 0.6 ? random.pick(['true', 'false', 'unknown'] as const) : null;
      // Whatever the order the writes land in: the second batch before or after the end and the
      // analysis, the end sometimes written twice (a retry).
      const later: Array<() => Promise<unknown>> = [() => batch(path.slice(cut), path[cut - 1]?.to ?? null)];
      const ending: Array<() => Promise<unknown>> = [];
      if (end !== null) {
        ending.push(() => store.sessions.end(session.id, { endedAt: clock + 60, reason: end, creditsChargedCents: 0, durationSecs: 60 }));
        if (random.next() < 0.3) ending.push(() => store.sessions.end(session.id, { endedAt: clock + 61, reason: 'error', creditsChargedCents: 0, durationSecs: 61 }));
        ending.push(() => store.analyses.open(session.id, account.id, success === null ? 'none' : 'pending'));
        if (success !== null) ending.push(() => store.analyses.complete(session.id, { outcome: null }, success, []));
      }
      await batch(path.slice(0, cut), null);
      const at = random.int(ending.length + 1);
      for (const write of [...ending.slice(0, at), ...later, ...ending.slice(at)]) await write();
      made.push({ id: session.id, createdAt: session.createdAt, version, experiment, path, end, success });
    }

    const day = (n: number) => start - 3 * 3600 + n * DAY;
    const filters: TrafficFilter[] = [{}, { version: 'draft' }, { version: 2 }, { from: day(1), to: day(3) }, { from: day(1) + 7200, to: day(38) - 60 }, { to: day(20) + 1 }, { from: day(11) }, { from: day(2), to: day(30) }];
    for (let n = 0; n < 30; n++) {
      const filter: TrafficFilter = {};
      const edge = () => (random.next() < 0.4 ? day(random.int(42) - 1) : start - 6 * 3600 + random.int(41 * DAY));
      if (random.next() < 0.7) filter.from = edge();
      if (random.next() < 0.7) filter.to = edge();
      if (filter.from !== undefined && filter.to !== undefined && filter.to <= filter.from) [filter.from, filter.to] = [filter.to, filter.from + 1];
      if (random.next() < 0.4) filter.version = random.pick([1, 2, 'draft'] as const);
      if (random.next() < 0.3) filter.success = random.pick(['true', 'false', 'unknown'] as const);
      if (random.next() < 0.3) {
        filter.experiment = random.pick(['exp_a', 'exp_b']);
        if (random.next() < 0.5) filter.arm = random.pick([1, 2]);
      }
      filters.push(filter);
    }
    for (const filter of filters) {
      const traffic = await store.analytics.flowTraffic({ accountId: account.id, flowId: flow.id }, filter);
      const answered = { calls: traffic.calls, states: sorted(traffic.states), transitions: sorted(traffic.transitions), ends: sorted(traffic.ends), success: traffic.success };
      expect(answered, `seed ${seed}, filter ${JSON.stringify(filter)}`).toEqual(directCount(made, filter));
    }
    // No session was taken out more often than it was counted in.
    expect(await rows('SELECT kind FROM flow_traffic_days WHERE calls < 0 OR times < 0 OR reached < 0')).toEqual([]);
  });
});
