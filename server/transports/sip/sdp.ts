// The SDP offer/answer of a call (RFC 3264, RFC 4566): one audio stream of G.711 (PCMU or PCMA,
// whichever the offer lists first) at 8 kHz in 20 ms packets, and RFC 4733 telephone-event for
// keypad digits when offered. Directions are answered as RFC 3264 §6.1 says: an offer of
// sendonly (the caller put us on hold) is answered recvonly, inactive is answered inactive.
import type { G711Law } from '../../audio/g711.ts';

export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';

export interface Offer {
  /** Where the caller receives RTP; 0.0.0.0 (RFC 2543 hold) means nowhere. */
  address: string;
  port: number;
  law: G711Law;
  payloadType: number;
  telephoneEvent: number | null;
  direction: Direction;
}

export type OfferResult = { ok: true; offer: Offer } | { ok: false; status: 400 | 488; reason: string };

const MAX_SDP_LINES = 200;

/** Reads an offer; 488 when it has no audio in G.711, 400 when it is not SDP at all. */
export function parseOffer(text: string): OfferResult {
  const lines = text.split(/\r?\n/).filter((l) => l.length > 0);
  if (lines.length === 0 || lines.length > MAX_SDP_LINES || !lines[0]!.startsWith('v=0')) return { ok: false, status: 400, reason: 'the body is not an SDP session description' };
  let sessionAddress: string | null = null;
  let sessionDirection: Direction = 'sendrecv';
  let audio: { port: number; formats: number[]; address: string | null; direction: Direction | null; rtpmap: Map<number, string> } | null = null;
  let inAudio = false;
  let seenMedia = false;
  for (const line of lines) {
    if (!/^[a-z]=/.test(line)) return { ok: false, status: 400, reason: `a malformed SDP line: ${line.slice(0, 40)}` };
    const kind = line[0];
    const value = line.slice(2).trim();
    if (kind === 'm') {
      seenMedia = true;
      const m = /^(\S+) (\d{1,5})(?:\/\d+)? (\S+)((?: \S+)*)$/.exec(value);
      if (!m) return { ok: false, status: 400, reason: 'a malformed m= line' };
      inAudio = false;
      // The first audio stream over plain RTP is ours; others (video, a second audio) are declined.
      if (m[1] === 'audio' && !audio && (m[3] === 'RTP/AVP' || m[3] === 'RTP/AVPF')) {
        const formats = m[4]!.trim().split(' ').filter(Boolean).map(Number).filter((n) => Number.isInteger(n) && n >= 0 && n < 128);
        audio = { port: Number(m[2]), formats, address: null, direction: null, rtpmap: new Map() };
        inAudio = true;
      }
    } else if (kind === 'c') {
      const c = /^IN IP4 ([0-9.]+)(?:\/\d+)?$/.exec(value);
      if (!c) continue; // IPv6 or another network: ours is IPv4 (checked below when it is the only one)
      if (!seenMedia) sessionAddress = c[1]!;
      else if (inAudio && audio) audio.address = c[1]!;
    } else if (kind === 'a') {
      const direction = /^(sendrecv|sendonly|recvonly|inactive)$/.exec(value)?.[1] as Direction | undefined;
      if (direction) {
        if (!seenMedia) sessionDirection = direction;
        else if (inAudio && audio) audio.direction = direction;
        continue;
      }
      const rtpmap = /^rtpmap:(\d{1,3}) ([^/\s]+)\/(\d+)/.exec(value);
      if (rtpmap && inAudio && audio) audio.rtpmap.set(Number(rtpmap[1]), `${rtpmap[2]!.toLowerCase()}/${rtpmap[3]}`);
    }
  }
  if (!audio || audio.port === 0) return { ok: false, status: 488, reason: 'the offer has no audio stream over RTP' };
  const address = audio.address ?? sessionAddress;
  if (!address || !isIpv4(address)) return { ok: false, status: 488, reason: 'the offer has no IPv4 address for its audio' };
  const codecOf = (pt: number): string | undefined => audio.rtpmap.get(pt) ?? (pt === 0 ? 'pcmu/8000' : pt === 8 ? 'pcma/8000' : undefined);
  let chosen: { pt: number; law: G711Law } | null = null;
  for (const pt of audio.formats) {
    const codec = codecOf(pt);
    if (codec === 'pcmu/8000') chosen = { pt, law: 'mulaw' };
    else if (codec === 'pcma/8000') chosen = { pt, law: 'alaw' };
    if (chosen) break;
  }
  if (!chosen) return { ok: false, status: 488, reason: 'the offer has neither PCMU nor PCMA (G.711) at 8 kHz' };
  const telephoneEvent = audio.formats.find((pt) => codecOf(pt) === 'telephone-event/8000') ?? null;
  return { ok: true, offer: { address, port: audio.port, law: chosen.law, payloadType: chosen.pt, telephoneEvent, direction: audio.direction ?? sessionDirection } };
}

function isIpv4(address: string): boolean {
  const parts = address.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

/** Whether the caller holds the call: it will not receive what we send. */
export function callerHolds(offer: Offer): boolean {
  return offer.direction === 'sendonly' || offer.direction === 'inactive' || offer.address === '0.0.0.0';
}

/** Our side's direction for the offer's (RFC 3264 §6.1). */
export function answerDirection(offer: Offer): Direction {
  if (offer.address === '0.0.0.0') return 'inactive';
  return offer.direction === 'sendonly' ? 'recvonly' : offer.direction === 'recvonly' ? 'sendonly' : offer.direction;
}

export interface AnswerParameters {
  sessionId: string;
  version: number;
  address: string;
  port: number;
  offer: Offer;
}

export function buildAnswer({ sessionId, version, address, port, offer }: AnswerParameters): string {
  const name = offer.law === 'mulaw' ? 'PCMU' : 'PCMA';
  const formats = [offer.payloadType, ...(offer.telephoneEvent !== null ? [offer.telephoneEvent] : [])];
  const lines = [
    'v=0',
    `o=voxflow ${sessionId} ${version} IN IP4 ${address}`,
    's=voxflow',
    `c=IN IP4 ${address}`,
    't=0 0',
    `m=audio ${port} RTP/AVP ${formats.join(' ')}`,
    `a=rtpmap:${offer.payloadType} ${name}/8000`,
    ...(offer.telephoneEvent !== null ? [`a=rtpmap:${offer.telephoneEvent} telephone-event/8000`, `a=fmtp:${offer.telephoneEvent} 0-16`] : []),
    'a=ptime:20',
    `a=${answerDirection(offer)}`,
  ];
  return `${lines.join('\r\n')}\r\n`;
}

/** Our offer for a call we place: PCMU, then PCMA, and RFC 4733 keys, 20 ms packets. */
export function buildOffer({ sessionId, version, address, port }: { sessionId: string; version: number; address: string; port: number }): string {
  const lines = [
    'v=0',
    `o=voxflow ${sessionId} ${version} IN IP4 ${address}`,
    's=voxflow',
    `c=IN IP4 ${address}`,
    't=0 0',
    `m=audio ${port} RTP/AVP 0 8 101`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:8 PCMA/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-16',
    'a=ptime:20',
    'a=sendrecv',
  ];
  return `${lines.join('\r\n')}\r\n`;
}
