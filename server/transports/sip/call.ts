// One answered SIP call: its dialog (dialog.ts: a call we answered, or one we placed, outbound.ts),
// its RTP stream and its engine session. Our 200 OK to a caller is retransmitted over UDP from T1,
// doubling up to T2, until its ACK (RFC 3261 §13.3.1.4); with no ACK within 64·T1 the call is
// hung up. In the dialog (the "caller" below is the other side, whoever placed the call):
// - BYE from the caller ends the session (`caller_hung_up`).
// - re-INVITE moves or holds the audio: sendonly or inactive (or c=0.0.0.0) stops what we send,
//   answered recvonly or inactive; sendrecv again resumes it. A re-INVITE while ours is still
//   unacknowledged gets 491.
// - INFO with application/dtmf-relay (or application/dtmf) is a key, as an RFC 4733 event is.
// - NOTIFY of the refer event says how a transfer we asked for went.
// When the session ends first (the flow ended the call, credit ran out, the server stops), we
// send BYE once what was queued of the agent's voice has been sent. A cold transfer is a REFER
// to the caller's side (the PBX or trunk), Refer-To the target: a number at that peer, or a sip:
// URI as the flow gives it; the NOTIFYs' sipfrag decides it: 2xx, the caller is the target's, we
// send BYE and the session ends `transferred`; 3xx-6xx, a refused REFER or no final word within
// a minute, the flow goes on to `on_failed`.
// Over 400 lines: the dialog's requests, the RTP in and out and the bridge of a warm transfer act
// on the same call state, and split they would pass it back and forth.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { TransferAction, VoiceSession, WarmTransferHelp } from '../../engine/session.ts';
import type { Session } from '../../store/store.ts';
import type { AdmittedSession } from '../session-admission.ts';
import { DTMF_DIGITS } from '../carriers/carrier.ts';
import { capabilities, header, headerList, parseCSeq, parseNameAddr, parseUri, responseTo, type Header, type SipRequest, type SipResponse } from './message.ts';
import { LINE_RATE, type MediaTarget, type RtpStream } from './rtp.ts';
import { buildAnswer, callerHolds, parseOffer, type Offer } from './sdp.ts';
import { newBranch, T1_MS, T2_MS, type ServerTransaction, type TransactionLayer } from './transactions.ts';
import type { Dialog } from './dialog.ts';
import type { DialRequest, DialResult } from './outbound.ts';
import type { Peer } from './transport.ts';

/** How long a transfer may take to be accepted and answered at the other side. */
const TRANSFER_TIMEOUT_MS = 60_000;
/** The end of the agent's last words may still be queued when the session ends: sent first, for at most this long. */
const DRAIN_BEFORE_BYE_MS = 1_000;
/** A warm transfer: how long the person's phone rings when the flow gives no `timeout_seconds` (the carriers' 30 s). */
const WARM_RING_TIMEOUT_MS = 30_000;
/** A person who answers before the summary is written waits this long for it, as on the carriers. */
const SUMMARY_WAIT_MS = 5_000;
const SUMMARY_UNWRITTEN = 'A caller is being transferred to you.';
/** How much of the summary is queued ahead of what the person hears (the RTP queue drops past 50 frames). */
const SPEAK_AHEAD_FRAMES = 25;

export interface CallEnvironment {
  app: FastifyInstance;
  log: FastifyBaseLogger;
  layer: TransactionLayer;
  /** Our address for Contact and Via (what the peer reaches). */
  contactHost: string;
  /** Sends a request to an address over the call's transport; false when it could not be sent. */
  sendTo(request: SipRequest, address: string, port: number): boolean;
  /** The call is over: forget its dialog. */
  gone(call: SipCall): void;
  /** Places a call (a warm transfer's leg to the person) through the trunk; absent without a UDP listener. */
  dial?(request: DialRequest): Promise<DialResult>;
  /** Keeps a call we placed, so the requests of its dialog reach it. */
  keep?(call: SipCall): void;
}

export interface CallStart {
  /** The caller's INVITE, for a call we answer; null for a call we placed (already answered and acknowledged). */
  invite: ServerTransaction | null;
  dialog: Dialog;
  offer: Offer;
  rtp: RtpStream;
  admitted: AdmittedSession;
  /** Told once when the call is over (an outbound call records its final call status). */
  over?: (why: string) => void;
}

export function mediaTarget(offer: Offer): MediaTarget {
  const holds = callerHolds(offer);
  return {
    address: offer.address,
    port: offer.port,
    law: offer.law,
    payloadType: offer.payloadType,
    telephoneEvent: offer.telephoneEvent,
    sending: !holds,
    receiving: offer.direction !== 'inactive' && offer.address !== '0.0.0.0',
  };
}

export class SipCall {
  readonly callId: string;
  readonly localTag: string;
  private readonly peer: Peer;
  private readonly remoteFrom: string;
  private readonly localUri: string;
  private readonly remoteTarget: string;
  private readonly routeSet: string[];
  private localCseq = Math.floor(Math.random() * 10_000) + 1;
  private remoteCseq: number;
  private readonly sdpSession = String(Math.floor(Math.random() * 1e9));
  private sdpVersion = 1;
  private offer: Offer;
  /** An INVITE of ours (the answer, or a re-INVITE's) still waiting for the caller's ACK. */
  private awaitingAck: { cseq: number; timers: NodeJS.Timeout[] } | null = null;
  private session: VoiceSession | null = null;
  private callerGone = false;
  private byeSent = false;
  private ended = false;
  private transfer: { settle(result: { ok: true } | { ok: false; reason: string }): void } | null = null;
  /** A warm transfer under way: aborted when the caller hangs up or the call ends. */
  private warm: AbortController | null = null;
  /** After a warm transfer: the other leg, whose audio ours is relayed to and from. */
  private bridged: SipCall | null = null;
  private markFinished!: () => void;
  /** The call is over on our side: BYE sent (or not needed), the audio closed. */
  private readonly finished = new Promise<void>((resolve) => (this.markFinished = resolve));

  constructor(
    private readonly env: CallEnvironment,
    private readonly start: CallStart,
  ) {
    const { dialog } = start;
    this.callId = dialog.callId;
    this.localTag = dialog.localTag;
    this.peer = dialog.peer;
    this.remoteFrom = dialog.remote;
    this.localUri = dialog.localUri;
    this.remoteTarget = dialog.remoteTarget;
    this.routeSet = dialog.routeSet;
    this.remoteCseq = dialog.remoteCseq;
    this.offer = start.offer;
  }

  get rtp(): RtpStream {
    return this.start.rtp;
  }

  /** Answers the INVITE with our SDP (a call we answer) and starts the audio and the session. */
  answer(sessionId: string): void {
    const { invite, rtp, admitted } = this.start;
    if (invite) {
      const cseq = parseCSeq(header(invite.request, 'cseq')!)!.seq;
      const response = this.okWithSdp(invite.request);
      invite.respond(response);
      this.retransmitUntilAck(response, cseq);
    }
    rtp.start();
    const log = this.env.log.child({ session: sessionId, sip_call: this.callId.slice(0, 32) });
    this.session = admitted.start({
      sendEvent: (event) => {
        if (event.type === 'interrupted') rtp.clear();
      },
      sendAudio: (frame) => rtp.agentAudio(frame),
      lineAudio: { sampleRate: LINE_RATE, record: (tap) => rtp.record(tap) },
      // The session ended (the flow, credit, a transfer done, the server stopping): BYE the caller.
      // Bridged to the person of a warm transfer, the session is over but the call goes on.
      close: () => {
        if (!this.bridged) void this.finish('the session ended');
      },
      transfer: (action, help) => {
        if (action.mode !== 'warm') return this.refer(action);
        if (!help) return Promise.resolve({ ok: false as const, reason: "a warm transfer needs the engine's summary" });
        return this.warmTransfer(action, help);
      },
    });
    log.info({ law: this.offer.law, peer: `${this.peer.address}:${this.peer.port}` }, 'SIP call answered');
  }

  /** A request within this dialog (To carries our tag). */
  request(tx: ServerTransaction): void {
    const request = tx.request;
    const cseq = parseCSeq(header(request, 'cseq')!)!.seq;
    if (request.method !== 'CANCEL') {
      if (cseq < this.remoteCseq || (cseq === this.remoteCseq && request.method !== 'INVITE')) {
        tx.reply(500, { reason: 'CSeq Out Of Order' });
        return;
      }
      this.remoteCseq = cseq;
    }
    switch (request.method) {
      case 'BYE':
        tx.reply(200);
        this.callerGone = true;
        if (this.transfer) this.transfer.settle({ ok: false, reason: 'the caller hung up during the transfer' });
        this.warm?.abort();
        void this.finish('caller_hung_up');
        return;
      case 'INVITE':
        this.reinvite(tx, cseq);
        return;
      case 'INFO':
        this.info(tx);
        return;
      case 'NOTIFY':
        this.notify(tx);
        return;
      case 'OPTIONS':
        tx.reply(200, { headers: capabilities() });
        return;
      case 'CANCEL':
        // The INVITE was answered already: nothing to cancel (RFC 3261 §9.2).
        tx.reply(200);
        return;
      default:
        tx.reply(501, { headers: capabilities() });
    }
  }

  /** The ACK of one of our 2xx answers. */
  ack(request: SipRequest): void {
    const cseq = parseCSeq(header(request, 'cseq')!)!.seq;
    if (!this.awaitingAck || this.awaitingAck.cseq !== cseq) return;
    for (const timer of this.awaitingAck.timers) clearTimeout(timer);
    this.awaitingAck = null;
  }

  /** The server is stopping or the endpoint closes: the session ends, the caller hears BYE. */
  async hangUp(reason: string): Promise<void> {
    if (this.session && !this.session.isEnded) await this.session.end(reason);
    else await this.finish(reason);
    await this.finished;
  }

  private reinvite(tx: ServerTransaction, cseq: number): void {
    if (this.awaitingAck) {
      tx.reply(491);
      return;
    }
    const body = tx.request.body.toString('utf8');
    if (body.length > 0) {
      const parsed = parseOffer(body);
      if (!parsed.ok) {
        tx.reply(parsed.status, { headers: [{ name: 'warning', value: `399 voxflow "${parsed.reason}"` }] });
        return;
      }
      this.offer = parsed.offer;
      this.rtp.retarget(mediaTarget(parsed.offer));
      this.env.log.info({ sip_call: this.callId.slice(0, 32), direction: parsed.offer.direction, holds: callerHolds(parsed.offer) }, 'SIP call re-INVITE');
    }
    this.sdpVersion++;
    const response = this.okWithSdp(tx.request);
    tx.respond(response);
    this.retransmitUntilAck(response, cseq);
  }

  private info(tx: ServerTransaction): void {
    const type = (header(tx.request, 'content-type') ?? '').toLowerCase().split(';')[0]!.trim();
    const body = tx.request.body.toString('utf8');
    let key: string | undefined;
    if (type === 'application/dtmf-relay') key = /^\s*signal\s*=\s*(\S)/im.exec(body)?.[1];
    else if (type === 'application/dtmf') key = body.trim().slice(0, 1);
    else if (body.length === 0) {
      tx.reply(200); // an empty INFO is a keep-alive some peers send
      return;
    } else {
      tx.reply(415, { headers: [{ name: 'accept', value: 'application/dtmf-relay, application/dtmf' }] });
      return;
    }
    const digit = key?.toUpperCase();
    if (!digit || !DTMF_DIGITS.test(digit)) {
      tx.reply(400, { reason: 'Bad DTMF' });
      return;
    }
    tx.reply(200);
    this.digit(digit);
  }

  /** A key the caller pressed (RFC 4733 or INFO). */
  digit(key: string): void {
    if (this.bridged) return; // between two people, keys are theirs (their phones play them in-band)
    this.session?.pushDigits(key);
  }

  /** Caller audio at 16 kHz: to the session, or, bridged, to the other leg. */
  audio(pcm: Int16Array): void {
    if (this.bridged) this.bridged.rtp.agentAudio(pcm);
    else this.session?.pushAudio(pcm);
  }

  /** A leg we placed with no session of its own (a warm transfer's person): its audio clock starts. */
  startLeg(): void {
    this.rtp.start();
  }

  /**
   * A warm transfer over SIP: a second call to the person through the trunk (or, with none, the
   * peer the call came from), from the business's number. The caller hears the engine's hold
   * line, then silence while the phone rings (as on a carrier's stream). Answered: the person
   * hears the summary in the session's voice, then the two legs are bridged here, each one's RTP
   * relayed to the other, and the session ends `transferred`. Busy, no answer within the ring
   * timeout, a failure, or the person hanging up before the bridge: the caller goes back to the
   * flow with the reason.
   */
  private async warmTransfer(action: TransferAction, help: WarmTransferHelp): Promise<{ ok: true } | { ok: false; reason: string }> {
    const { dial, keep } = this.env;
    if (!dial || !keep) return { ok: false, reason: 'a warm transfer over SIP needs a udp: listener to place the call from' };
    if (this.callerGone || this.ended) return { ok: false, reason: 'the call is over' };
    const record = this.start.admitted.record;
    const business = record.direction === 'outbound' ? record.fromNumber : record.toNumber;
    if (!business) return { ok: false, reason: 'the call has no business number to ring the person from' };
    const warm = new AbortController();
    this.warm = warm;
    const { signal } = warm;
    const log = this.env.log.child({ session: record.id, sip_call: this.callId.slice(0, 32) });
    // Written while the phone rings, as the carriers do.
    const summary = help.summary().catch(() => '');
    let leg: SipCall | null = null;
    let personGone = false;
    let wakePerson: (() => void) | null = null;
    try {
      const ringTimeoutMs = action.timeoutSeconds ? action.timeoutSeconds * 1000 : WARM_RING_TIMEOUT_MS;
      const dialled = await dial({
        callId: `${randomBytes(12).toString('hex')}@voxflow`,
        from: business,
        to: action.to,
        ringTimeoutMs,
        fallbackHop: { host: this.peer.address, port: this.peer.port },
        signal,
        audio: (pcm) => leg?.audio(pcm),
        digit: () => {},
      });
      if (!dialled.ok) {
        if (signal.aborted) return { ok: false, reason: 'the caller hung up while the person was called' };
        const reason =
          dialled.status === 'busy'
            ? `${action.to} was busy`
            : dialled.status === 'no_answer'
              ? `${action.to} did not answer${dialled.reason.startsWith('no answer within') ? ` within ${Math.round(ringTimeoutMs / 1000)} s` : ` (${dialled.reason})`}`
              : `the call to ${action.to} failed: ${dialled.reason}`;
        log.info({ status: dialled.status, why: dialled.reason }, 'SIP warm transfer: the person was not reached');
        return { ok: false, reason };
      }
      const person = new SipCall(dialled.environment, {
        invite: null,
        dialog: dialled.dialog,
        offer: dialled.answer,
        rtp: dialled.rtp,
        admitted: nothingAdmitted(null),
        over: () => {
          personGone = true;
          wakePerson?.();
        },
      });
      leg = person;
      keep(person);
      person.startLeg();
      if (signal.aborted) {
        await person.hangUp('the caller hung up');
        return { ok: false, reason: 'the caller hung up while the person was called' };
      }
      const gone = new Promise<void>((resolve) => {
        wakePerson = resolve;
        if (personGone) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      const text = await Promise.race([summary, sleep(SUMMARY_WAIT_MS).then(() => SUMMARY_UNWRITTEN), gone.then(() => '')]);
      if (text && !personGone && !signal.aborted) await this.tellPerson(person, text, help, signal, gone, log);
      if (signal.aborted) {
        await person.hangUp('the caller hung up');
        return { ok: false, reason: 'the caller hung up while the person was called' };
      }
      if (personGone) return { ok: false, reason: `${action.to} hung up before the caller was joined` };
      // Joined: what was left of the agent's words is dropped; from now on each hears the other.
      this.rtp.clear();
      this.bridged = person;
      person.bridged = this;
      await this.env.app.services.store.sessions.setTransferredTo(record.id, action.to);
      log.info({ to: action.to }, 'SIP warm transfer: the caller and the person are bridged');
      return { ok: true };
    } catch (error) {
      if (leg && !this.bridged) await leg.hangUp('failed').catch(() => {});
      throw error;
    } finally {
      if (this.warm === warm) this.warm = null;
    }
  }

  /** Says the summary to the person, paced to their line; stops when either side leaves. */
  private async tellPerson(person: SipCall, text: string, help: WarmTransferHelp, signal: AbortSignal, gone: Promise<void>, log: FastifyBaseLogger): Promise<void> {
    let over = false;
    void gone.then(() => (over = true));
    try {
      for await (const chunk of help.speak(text, signal)) {
        if (over) return;
        person.rtp.agentAudio(chunk);
        while (!over && person.rtp.queued > SPEAK_AHEAD_FRAMES) await sleep(20);
      }
      while (!over && person.rtp.queued > 0) await sleep(20);
    } catch (error) {
      // The caller is not kept from the person because the voice failed: they are joined anyway.
      if (!signal.aborted) log.warn({ err: error }, 'SIP warm transfer: the summary could not be said');
    }
  }

  private notify(tx: ServerTransaction): void {
    const event = (header(tx.request, 'event') ?? '').toLowerCase().split(';')[0]!.trim();
    if (event !== 'refer') {
      tx.reply(489, { reason: 'Bad Event' });
      return;
    }
    tx.reply(200);
    const status = /^SIP\/2\.0 (\d{3})/.exec(tx.request.body.toString('utf8').trim());
    const terminated = /^terminated/i.test(header(tx.request, 'subscription-state') ?? '');
    if (!this.transfer) return;
    if (status && Number(status[1]) >= 200 && Number(status[1]) < 300) this.transfer.settle({ ok: true });
    else if (status && Number(status[1]) >= 300) this.transfer.settle({ ok: false, reason: `the transfer target answered ${status[1]}` });
    else if (terminated) this.transfer.settle({ ok: false, reason: 'the transfer ended without an answer' });
  }

  /** A cold transfer: REFER the caller's side to the target. */
  private async refer(action: TransferAction): Promise<{ ok: true } | { ok: false; reason: string }> {
    if (this.callerGone || this.ended) return { ok: false, reason: 'the call is over' };
    const referTo = this.referTarget(action.to);
    const outcome = new Promise<{ ok: true } | { ok: false; reason: string }>((resolve) => {
      const timer = setTimeout(() => settle({ ok: false, reason: `no answer to the transfer to ${action.to} within ${TRANSFER_TIMEOUT_MS / 1000} s` }), TRANSFER_TIMEOUT_MS);
      timer.unref();
      const settle = (result: { ok: true } | { ok: false; reason: string }) => {
        clearTimeout(timer);
        if (this.transfer === holder) this.transfer = null;
        resolve(result);
      };
      const holder = { settle };
      this.transfer = holder;
    });
    const response = await this.sendInDialog('REFER', [
      { name: 'refer-to', value: `<${referTo}>` },
      { name: 'referred-by', value: `<${this.localUri}>` },
    ]);
    if (response.status >= 300) {
      this.transfer?.settle({ ok: false, reason: `the caller's side refused the transfer: ${response.status} ${response.reason}` });
    }
    const result = await outcome;
    if (result.ok) await this.env.app.services.store.sessions.setTransferredTo(this.start.admitted.record.id, action.to);
    return result;
  }

  /** A number goes to the peer that sent the call (its PBX or trunk routes it); a sip: URI as given. */
  private referTarget(to: string): string {
    if (/^sips?:/i.test(to)) return to;
    const host = this.peer.address.includes(':') ? `[${this.peer.address}]` : this.peer.address;
    const port = this.peer.port === 5060 ? '' : `:${this.peer.port}`;
    return `sip:${to.replace(/[^0-9A-Za-z+*#]/g, '')}@${host}${port};user=phone`;
  }

  private async finish(why: string): Promise<void> {
    if (this.ended) return;
    this.env.log.debug({ sip_call: this.callId.slice(0, 32), why }, 'SIP call over');
    this.ended = true;
    if (this.session && !this.session.isEnded && this.callerGone) void this.session.end('caller_hung_up');
    if (!this.callerGone && !this.byeSent) {
      // What the agent said last is still queued: it goes out before the line is dropped.
      await this.drain();
      this.byeSent = true;
      void this.sendInDialog('BYE', []);
    }
    if (this.awaitingAck) for (const timer of this.awaitingAck.timers) clearTimeout(timer);
    this.awaitingAck = null;
    this.transfer?.settle({ ok: false, reason: 'the call ended' });
    this.warm?.abort();
    const other = this.bridged;
    if (other) {
      // Either side of a bridged call hanging up ends the other's.
      this.bridged = null;
      other.bridged = null;
      void other.hangUp('the other side hung up').catch(() => {});
    }
    this.rtp.close();
    this.env.gone(this);
    this.start.over?.(why);
    this.markFinished();
  }

  private async drain(): Promise<void> {
    const until = Date.now() + DRAIN_BEFORE_BYE_MS;
    while (this.rtp.queued > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  private okWithSdp(request: SipRequest): SipResponse {
    const sdp = buildAnswer({ sessionId: this.sdpSession, version: this.sdpVersion, address: this.env.contactHost, port: this.rtp.port, offer: this.offer });
    return responseTo(request, 200, {
      toTag: this.localTag,
      headers: [
        ...headerList(request, 'record-route').length ? [{ name: 'record-route', value: headerList(request, 'record-route').join(', ') }] : [],
        { name: 'contact', value: this.contact() },
        ...capabilities(),
        { name: 'content-type', value: 'application/sdp' },
      ],
      body: Buffer.from(sdp),
    });
  }

  private contact(): string {
    const host = this.env.contactHost.includes(':') ? `[${this.env.contactHost}]` : this.env.contactHost;
    return `<sip:voxflow@${host}:${this.peer.local.port}${this.peer.protocol === 'udp' ? '' : `;transport=${this.peer.protocol}`}>`;
  }

  private retransmitUntilAck(response: SipResponse, cseq: number): void {
    if (this.awaitingAck) for (const timer of this.awaitingAck.timers) clearTimeout(timer);
    const waiting = { cseq, timers: [] as NodeJS.Timeout[] };
    this.awaitingAck = waiting;
    const later = (work: () => void, ms: number) => {
      const timer = setTimeout(work, ms);
      timer.unref();
      waiting.timers.push(timer);
    };
    if (this.peer.protocol === 'udp') {
      let interval = T1_MS;
      const again = () => {
        if (this.awaitingAck !== waiting) return;
        this.peer.send(response);
        interval = Math.min(interval * 2, T2_MS);
        later(again, interval);
      };
      later(again, interval);
    }
    later(() => {
      if (this.awaitingAck !== waiting) return;
      this.awaitingAck = null;
      this.env.log.warn({ sip_call: this.callId.slice(0, 32) }, 'SIP call: no ACK for our answer; hanging up');
      void this.hangUp('no_ack');
    }, 64 * T1_MS);
  }

  /** Sends a request in this dialog and resolves with its final response. */
  private sendInDialog(method: string, extra: Header[]): Promise<SipResponse> {
    const host = this.env.contactHost.includes(':') ? `[${this.env.contactHost}]` : this.env.contactHost;
    const transport = this.peer.protocol.toUpperCase();
    const routes = this.routeSet;
    const headers: Header[] = [
      { name: 'via', value: `SIP/2.0/${transport} ${host}:${this.peer.local.port};branch=${newBranch()};rport` },
      { name: 'max-forwards', value: '70' },
      { name: 'from', value: `<${this.localUri}>;tag=${this.localTag}` },
      { name: 'to', value: this.remoteFrom },
      { name: 'call-id', value: this.callId },
      { name: 'cseq', value: `${++this.localCseq} ${method}` },
      ...routes.map((route) => ({ name: 'route', value: route })),
      { name: 'contact', value: this.contact() },
      ...extra,
    ];
    const request: SipRequest = { kind: 'request', method, uri: this.remoteTarget, headers, body: Buffer.alloc(0) };
    const next = this.nextHop();
    // Over a connection (TCP, TLS), on the connection the call came on; over UDP, to the next hop.
    const send = () => (this.peer.protocol !== 'udp' ? this.peer.send(request) : this.env.sendTo(request, next.address, next.port));
    return this.env.layer.sendRequest(request, send, this.peer.protocol !== 'udp');
  }

  /**
   * Where our requests go over UDP: the first route when the peer record-routed, else the
   * remote target when it names an address, else where the INVITE came from.
   */
  private nextHop(): { address: string; port: number } {
    const first = this.routeSet[0] ? parseNameAddr(this.routeSet[0])?.uri : this.remoteTarget;
    const uri = first ? parseUri(first) : null;
    const host = uri?.host.replace(/^\[(.*)\]$/, '$1');
    if (uri && host && /^[0-9.]+$|:/.test(host)) return { address: host, port: uri.port ?? 5060 };
    return { address: this.peer.address, port: this.peer.port };
  }
}

/** For a call answered but not to be run (or a leg with no session of its own): nothing to start, nothing to give back. */
export function nothingAdmitted(record: Session | null): AdmittedSession {
  return {
    record: record as Session,
    allowSimulator: false,
    start: () => {
      throw new Error('not admitted');
    },
    refuse: async () => {},
  } as AdmittedSession;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
