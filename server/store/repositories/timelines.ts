// Session timelines (docs/api.md): each session's protocol events in order, appended in batches
// by the outcomes layer, read back in pages, purged with the session's other traces.

export interface TimelineEntry {
  seq: number;
  /** Unix seconds. */
  at: number;
  type: string;
  /** The event as JSON text, exactly as the client received it. */
  data: string;
}

export interface TimelineCounters {
  events: number;
  bytes: number;
  dropped: number;
}

export interface TimelinesRepository {
  /** Appends a session's entries and sets its counters, in one durable write. */
  append(sessionId: string, entries: readonly TimelineEntry[], counters: TimelineCounters): Promise<void>;
  /** Entries after `afterSeq`, oldest first, at most `limit`. */
  page(sessionId: string, afterSeq: number, limit: number): Promise<TimelineEntry[]>;
  /**
   * Forgets the timelines of sessions created before `cutoff` (Unix seconds), at most `limit`
   * sessions at a time; returns those sessions with their recording files, so the caller can
   * delete the files.
   */
  purgeBefore(cutoff: number, limit: number): Promise<Array<{ id: string; recordingFile: string | null }>>;
}
