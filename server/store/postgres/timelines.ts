// Session timelines on PostgreSQL: the same promises as the sql.js repository
// (server/store/repositories/timelines.ts). A batch is one INSERT of arrays (unnest), so a
// session's hundreds of events cost one round trip, not one each.
import type { TimelinesRepository } from '../repositories/timelines.ts';
import type { PgDatabase } from './database.ts';

export function createPgTimelinesRepository(db: PgDatabase): TimelinesRepository {
  return {
    append(sessionId, entries, counters) {
      return db.transaction(async (tx) => {
        if (entries.length > 0) {
          await tx.run(
            `INSERT INTO session_events (session_id, seq, at, type, data)
             SELECT $1, seq, at, type, data FROM unnest($2::bigint[], $3::double precision[], $4::text[], $5::text[]) AS e(seq, at, type, data)`,
            [sessionId, entries.map((e) => e.seq), entries.map((e) => e.at), entries.map((e) => e.type), entries.map((e) => e.data)],
          );
        }
        await tx.run('UPDATE sessions SET timeline_events = $1, timeline_bytes = $2, timeline_dropped = $3 WHERE id = $4', [
          counters.events,
          counters.bytes,
          counters.dropped,
          sessionId,
        ]);
      });
    },

    async page(sessionId, afterSeq, limit) {
      return db.rows('SELECT seq, at, type, data FROM session_events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [sessionId, afterSeq, limit]);
    },

    purgeBefore(cutoff, limit) {
      return db.transaction(async (tx) => {
        // SKIP LOCKED: two nodes purging at once share the old sessions out instead of both
        // taking (and both reporting the recording files of) the same ones.
        const old = await tx.rows<{ id: string; recording_file: string | null }>(
          `SELECT id, recording_file FROM sessions
           WHERE created_at < $1 AND (timeline_events > 0 OR recording_file IS NOT NULL)
           ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [cutoff, limit],
        );
        if (old.length === 0) return [];
        const ids = old.map((row) => row.id);
        await tx.run('DELETE FROM session_events WHERE session_id = ANY($1::text[])', [ids]);
        await tx.run('UPDATE sessions SET timeline_events = 0, timeline_bytes = 0, timeline_dropped = 0, recording_file = NULL WHERE id = ANY($1::text[])', [ids]);
        return old.map((row) => ({ id: row.id, recordingFile: row.recording_file }));
      });
    },
  };
}
