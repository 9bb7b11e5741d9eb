// Remote ICE candidates the server never probes. A caller's candidates, in its offer's SDP and in
// PATCH /offer, name where the server sends STUN connectivity checks; a candidate naming cloud
// metadata (169.254.169.254), a multicast group, or the server's own loopback would have it send
// packets there for whoever holds a session token. Such candidates are dropped before werift sees
// them, silently, as a browser drops candidates it cannot use: the offer is still answered and the
// PATCH still succeeds (security/outbound-target.ts, iceCandidateRefusal, says which).
import { iceCandidateRefusal } from '../../security/outbound-target.ts';

/**
 * The connection address of a candidate line (`candidate:<foundation> <component> <transport>
 * <priority> <address> <port> typ <type> …`, with or without `a=`); null when it is not one.
 */
export function candidateAddress(candidate: string): string | null {
  const fields = candidate.trim().replace(/^a=/, '').split(/\s+/);
  if (!fields[0]?.startsWith('candidate:') || fields.length < 8) return null;
  return fields[4] ?? null;
}

/** Why the server will not probe this candidate, or null when it may (a line it cannot read is werift's to refuse). */
export function candidateRefusal(candidate: string, loopbackDeployment: boolean): string | null {
  const address = candidateAddress(candidate);
  return address === null ? null : iceCandidateRefusal(address, { loopbackDeployment });
}

/** The SDP without the candidate lines the server will not probe, and how many were dropped. */
export function withoutRefusedCandidates(sdp: string, loopbackDeployment: boolean): { sdp: string; dropped: number } {
  let dropped = 0;
  const kept = sdp.split(/(?<=\n)/).filter((line) => {
    if (!/^a=candidate:/.test(line) || candidateRefusal(line, loopbackDeployment) === null) return true;
    dropped++;
    return false;
  });
  return { sdp: dropped === 0 ? sdp : kept.join(''), dropped };
}
