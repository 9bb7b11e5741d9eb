// The embedded store's (sql.js) timelines repository; its interface and types are in ../../repositories/timelines.ts.
import type { Database } from '../database.ts';
import type { TimelineEntry, TimelinesRepository } from '../../repositories/timelines.ts';
import { retallied } from '../traffic-tally.ts';
import { movesIn, transitionsOf, type StoredTransition } from '../../rows/transitions.ts';

export function createTimelinesRepository(db: Database): TimelinesRepository {
  return {
    append(sessionId, entries, counters) {
      return db.write((tx) => {
        for (const entry of entries) {
          tx.run('INSERT INTO session_events (session_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)', [sessionId, entry.seq, entry.at, entry.type, entry.data]);
        }
        // The session's moves through its flow, for its traffic (rows/transitions.ts).
        // An ended session's counts in its flow's traffic follow (a batch may land after the end).
        if (movesIn(entries)) retallied(tx, sessionId, () => {
          const stored = tx.all<StoredTransition>('SELECT seq, from_state, to_state, tool FROM session_transitions WHERE session_id = ? ORDER BY seq', [sessionId]);
          const moves = transitionsOf(stored, entries);
          for (const m of moves) {
            tx.run('INSERT INTO session_transitions (session_id, seq, at, from_state, to_state, tool, first_visit, first_take) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
              sessionId, m.seq, m.at, m.from_state, m.to_state, m.tool, m.first_visit, m.first_take,
            ]);
          }
          if (moves.length > 0) tx.run('UPDATE sessions SET last_state = ? WHERE id = ?', [moves.at(-1)!.to_state, sessionId]);
        });
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
