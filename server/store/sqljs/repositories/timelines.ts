// The embedded store's (sql.js) timelines repository; its interface and types are in ../../repositories/timelines.ts.
import type { Database } from '../database.ts';
import type { TimelineEntry, TimelinesRepository } from '../../repositories/timelines.ts';

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
