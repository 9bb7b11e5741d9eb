// Session timelines on PostgreSQL: the same promises as the sql.js repository
// (server/store/repositories/timelines.ts). A batch is one INSERT of arrays (unnest), so a
// session's hundreds of events cost one round trip, not one each.
import type { TimelinesRepository } from '../repositories/timelines.ts';
import type { PgDatabase } from './database.ts';
import { retallied } from './traffic-tally.ts';
import { movesIn, transitionsOf, type StoredTransition } from '../rows/transitions.ts';

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
        // The session's moves through its flow, for its traffic (rows/transitions.ts). One node
        // writes a session's timeline, in order, so the stored path read here is the whole of it.
        // An ended session's counts in its flow's traffic follow (a batch may land after the end).
        if (movesIn(entries)) await retallied(tx, sessionId, async () => {
          const stored = await tx.rows<StoredTransition>('SELECT seq, from_state, to_state, tool FROM session_transitions WHERE session_id = $1 ORDER BY seq', [sessionId]);
          const moves = transitionsOf(stored, entries);
          if (moves.length > 0) {
            await tx.run(
              `INSERT INTO session_transitions (session_id, seq, at, from_state, to_state, tool, first_visit, first_take)
               SELECT $1, seq, at, from_state, to_state, tool, first_visit, first_take
               FROM unnest($2::int[], $3::double precision[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[])
                 AS m(seq, at, from_state, to_state, tool, first_visit, first_take)`,
              [
                sessionId,
                moves.map((m) => m.seq),
                moves.map((m) => m.at),
                moves.map((m) => m.from_state),
                moves.map((m) => m.to_state),
                moves.map((m) => m.tool),
                moves.map((m) => m.first_visit),
                moves.map((m) => m.first_take),
              ],
            );
            await tx.run('UPDATE sessions SET last_state = $1 WHERE id = $2', [moves.at(-1)!.to_state, sessionId]);
          }
        });
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
