// What an offer and its ICE candidates may weigh before any of it reaches werift. werift's SDP
// and ICE work runs on the thread that paces every session's audio, and grows with what it is
// given: an offer of 500 `m=` lines stalled that thread for 1.2 s, and 60 PATCHes of 50
// candidates for 2 s. A voice call needs one audio section and a data channel (a
// client may add video it will not use), a few KiB of SDP and a few dozen candidates; counting
// lines of text is cheap, and whatever is beyond these bounds is refused before werift sees it.
import { AppError } from '../../errors.ts';

/** Media sections (`m=` lines) an offer may have. */
export const MAX_MEDIA_SECTIONS = 4;
/**
 * Bytes an offer may have; browsers' offers for audio, video and data are 3 to 10 KiB. werift's
 * parse of what passes still runs on the audio thread: an offer just under 32 KiB packed with
 * rtpmap lines cost it 50–109 ms (measured on a loaded 2-core machine), so the bound is 16 KiB.
 */
export const MAX_SDP_BYTES = 16 * 1024;
/** Remote ICE candidates one peer connection takes, in its offers and PATCHes together. */
export const MAX_CANDIDATES_PER_PEER = 64;
/** Candidate PATCHes one peer connection may send in PATCH_WINDOW_MS. */
export const MAX_PATCHES_PER_WINDOW = 20;
export const PATCH_WINDOW_MS = 10_000;

function countLines(sdp: string, prefix: RegExp): number {
  return sdp.match(prefix)?.length ?? 0;
}

/** Refuses an offer over the bounds (400 sdp_too_complex); returns how many candidates it carries. */
export function checkOfferBounds(sdp: string): { candidates: number } {
  const sections = countLines(sdp, /^m=/gm);
  if (sections > MAX_MEDIA_SECTIONS) {
    throw new AppError('sdp_too_complex', `The SDP offer has ${sections} media sections (m= lines); a voice call takes at most ${MAX_MEDIA_SECTIONS}.`);
  }
  const candidates = countLines(sdp, /^a=candidate:/gm);
  if (candidates > MAX_CANDIDATES_PER_PEER) {
    throw new AppError('sdp_too_complex', `The SDP offer has ${candidates} ICE candidates; a peer connection takes at most ${MAX_CANDIDATES_PER_PEER}.`);
  }
  const bytes = Buffer.byteLength(sdp, 'utf8');
  if (bytes > MAX_SDP_BYTES) {
    throw new AppError('sdp_too_complex', `The SDP offer is ${bytes} bytes; an offer may have at most ${MAX_SDP_BYTES}.`);
  }
  return { candidates };
}

/** Refuses candidates past the peer's total (400 sdp_too_complex). */
export function checkCandidateBounds(alreadyTaken: number, more: number): void {
  if (alreadyTaken + more > MAX_CANDIDATES_PER_PEER) {
    throw new AppError(
      'sdp_too_complex',
      `A peer connection takes at most ${MAX_CANDIDATES_PER_PEER} ICE candidates; this one has ${alreadyTaken} and these ${more} would pass that. None of them were added.`,
    );
  }
}
