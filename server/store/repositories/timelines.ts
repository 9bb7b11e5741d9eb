// Session timelines (DESIGN §11): each session's protocol events in order, appended in batches
// by the outcomes layer, read back in pages, purged with the session's other traces.

import type { Database } from '../database.ts';

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

export function createTimelinesRepository(db: Database): TimelinesRepository {
  return {
    append(sessionId, entries, counters) {
      return db.write((tx) => {
        for (const entry of entries) {
          tx.run('INSERT INTO session_events (session_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)', [sessionId, entry.seq, entry.at, entry.type, entry.data]);
        }
        tx.run('UPDATE sessions SET timeline_events = ?, timeline_bytes = ?, timeline_dropped = ? WHERE id = ?', [counters.events, counters.bytes, counters.dropped, sessionId]);
      });
    },

    async page(sessionId, afterSeq, limit) {
      return db.all<TimelineEntry>('SELECT seq, at, type, data FROM session_events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?', [sessionId, afterSeq, limit]);
    },

    purgeBefore(cutoff, limit) {
      return db.write((tx) => {
        const old = tx.all<{ id: string; recording_file: string | null }>(
          `SELECT id, recording_file FROM sessions
           WHERE created_at < ? AND (timeline_events > 0 OR recording_file IS NOT NULL) LIMIT ?`,
          [cutoff, limit],
        );
        for (const { id } of old) {
          tx.run('DELETE FROM session_events WHERE session_id = ?', [id]);
          tx.run('UPDATE sessions SET timeline_events = 0, timeline_bytes = 0, timeline_dropped = 0, recording_file = NULL WHERE id = ?', [id]);
        }
        return old.map((row) => ({ id: row.id, recordingFile: row.recording_file }));
      });
    },
  };
}
