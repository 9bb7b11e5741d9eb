// Session timelines (docs/api.md#what-a-call-leaves-behind): every protocol event a session sends
// its client is kept in the store, so the business can read what the call produced after it ended.
//
// Off the audio path: record() only serializes the event (a few hundred bytes) into the
// session's buffer; a timer writes the buffers every FLUSH_MS, one session per durable write,
// yielding between sessions so a flush never holds the event loop for long. A crash loses at
// most the events of the last FLUSH_MS (plus the fsync in flight), never what was written
// before. A session's end flushes it at once.
//
// Kept: final transcripts (interim ones are drafts of the same words), state changes, tool
// calls, speech and interruption marks, per-turn metrics, errors, credit warnings and the end.
// Capped per session (events and bytes); past the cap, events are counted as dropped and the
// session's end is still kept, so a capped timeline says so and still says how it ended.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { ServerEvent } from '../protocol/events.ts';
import type { Store, TimelineCounters, TimelineEntry } from '../store/store.ts';

export const TIMELINE_CAP = { events: 5_000, bytes: 2 * 1024 * 1024 } as const;
export const FLUSH_MS = 1_000;

interface LiveTimeline {
  counters: TimelineCounters;
  nextSeq: number;
  buffered: TimelineEntry[];
  /** The write in flight for this session, so flushes of one session stay in order. */
  writing: Promise<void>;
}

export interface TimelineLog {
  error(object: Record<string, unknown>, message: string): void;
}

export class TimelineRecorder {
  private readonly live = new Map<string, LiveTimeline>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  /** Writes not yet durable, ended sessions' included: close() waits for them before the store closes. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly log: TimelineLog,
    private readonly flushMs: number = FLUSH_MS,
  ) {}

  /** Whether an event belongs in the timeline. */
  static keeps(event: ServerEvent): boolean {
    if (event.type === 'pong') return false;
    if (event.type === 'transcript' && !event.final) return false;
    return true;
  }

  /** Takes one event a session sent its client. Cheap and synchronous: no I/O here. */
  record(sessionId: string, event: ServerEvent, at: number = Date.now() / 1000): void {
    if (!TimelineRecorder.keeps(event)) return;
    let timeline = this.live.get(sessionId);
    if (!timeline) {
      timeline = { counters: { events: 0, bytes: 0, dropped: 0 }, nextSeq: 1, buffered: [], writing: Promise.resolve() };
      this.live.set(sessionId, timeline);
    }
    const data = JSON.stringify(event);
    const { counters } = timeline;
    const overCap = counters.events >= TIMELINE_CAP.events || counters.bytes + data.length > TIMELINE_CAP.bytes;
    // The end is kept even over the cap (one small event), so every timeline says how it ended.
    if (overCap && event.type !== 'session_ended') {
      counters.dropped++;
      return;
    }
    counters.events++;
    counters.bytes += data.length;
    timeline.buffered.push({ seq: timeline.nextSeq++, at, type: event.type, data });
    this.schedule();
  }

  /**
   * Writes what the session sent so far, and keeps recording: the session's end is stored after
   * this resolves, so whoever reads a session as ended finds every event before its end.
   */
  async flush(sessionId: string): Promise<void> {
    const timeline = this.live.get(sessionId);
    if (timeline) await this.write(sessionId, timeline);
  }

  /** The session ended: its remaining events are written now; resolves once they are durable. */
  async end(sessionId: string): Promise<void> {
    const timeline = this.live.get(sessionId);
    if (!timeline) return;
    this.live.delete(sessionId);
    await this.write(sessionId, timeline);
  }

  /** Writes everything buffered (server shutdown); resolves once durable. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
    await Promise.all([...this.live.entries()].map(([id, timeline]) => this.write(id, timeline)));
    await Promise.all([...this.pending]);
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flushing = this.flushAll().finally(() => (this.flushing = null));
    }, this.flushMs);
    this.timer.unref();
  }

  private async flushAll(): Promise<void> {
    for (const [id, timeline] of [...this.live]) {
      if (timeline.buffered.length === 0) continue;
      void this.write(id, timeline);
      await yieldToLoop();
    }
  }

  private write(sessionId: string, timeline: LiveTimeline): Promise<void> {
    const entries = timeline.buffered.splice(0);
    const counters = { ...timeline.counters };
    const previous = timeline.writing;
    timeline.writing = previous.then(async () => {
      if (entries.length === 0 && counters.dropped === 0) return;
      try {
        await this.store.timelines.append(sessionId, entries, counters);
      } catch (error) {
        // A store that refuses writes (full disk) loses these events, never the session.
        this.log.error({ err: error, session: sessionId, events: entries.length }, 'could not store part of a session timeline');
      }
    });
    const written = timeline.writing;
    this.pending.add(written);
    void written.finally(() => this.pending.delete(written));
    return written;
  }
}
