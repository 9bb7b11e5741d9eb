// Calls Voxflow places over SIP (POST /v1/calls from a `sip` number, docs/sip.md): an INVITE with
// our offer (PCMU, PCMA, RFC 4733) to the outbound proxy, or to the registrar we registered to,
// answering a 401 or 407 once with the registration's user and password. The session was stored
// by the API with a single-use token, as a carrier's placed call is; the answer claims it and the
// flow runs, as on an answered carrier call.
//
// What the far end answers maps onto the call statuses the carriers use: a 1xx is `ringing`; a
// 2xx is `answered` (and `completed` when the call ends); 486, 600 and 603 are `busy`; no final
// answer within RING_TIMEOUT_MS (we CANCEL), 408, 480 and 487 are `no_answer`; anything else, an
// answer without G.711, or no way to send, is `failed`. A call that never connects ends its
// session with that status as the reason, charged nothing.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { lookup } from 'node:dns/promises';
import { randomBytes } from 'node:crypto';
import { errorCodeOf } from '../../http/error-handler.ts';
import type { CallStatus, Session } from '../../store/store.ts';
import { recordCallStatus } from '../phone/index.ts';
import { admitClaimedSession } from '../session-admission.ts';
import { mediaTarget, nothingAdmitted, SipCall, type CallEnvironment } from './call.ts';
import { answerChallenge } from './digest.ts';
import { header, headerList, parseNameAddr, type Header, type SipRequest, type SipResponse } from './message.ts';
import { bindRtpSocket, RtpStream, type RtpPortRange } from './rtp.ts';
import { buildOffer, parseOffer, type Offer } from './sdp.ts';
import type { Dialog } from './dialog.ts';
import { newBranch, newTag, T1_MS, type TransactionLayer } from './transactions.ts';
import type { Listening, Peer } from './transport.ts';

/** How long a placed call may ring before we give up (CANCEL): the carriers' usual 60 s. */
export const RING_TIMEOUT_MS = 60_000;

export interface OutboundEnvironment {
  app: FastifyInstance;
  log: FastifyBaseLogger;
  layer: TransactionLayer;
  contactHost: string;
  listener: Listening;
  rtpHost: string;
  rtpRange: RtpPortRange;
  /** Where our INVITEs go: the outbound proxy, else the registrar; null when neither is set. */
  nextHop: { host: string; port: number } | null;
  /** What we answer a challenge with (the registration's user and password); null: none. */
  credentials: { username: string; password: string } | null;
  /** The environment an answered call runs in, and where its dialog is kept. */
  callEnvironment(): CallEnvironment;
  keep(call: SipCall): void;
}

export interface PlaceSipCall {
  session: Session;
  tokenHash: string;
  from: string;
  to: string;
}

const BUSY = new Set([486, 600, 603]);
const NO_ANSWER = new Set([408, 480, 487]);

export function statusOfFailure(status: number): CallStatus {
  if (BUSY.has(status)) return 'busy';
  if (NO_ANSWER.has(status)) return 'no_answer';
  return 'failed';
}

export class OutboundCalls {
  /** The ACK of each answered call of ours, sent again when its 200 is (our ACK was lost). */
  private readonly acks = new Map<string, { ack: SipRequest; address: string; port: number }>();
  private readonly ringing = new Set<() => void>();

  constructor(private readonly env: OutboundEnvironment) {}

  /** Starts the call; its progress goes to the session's call status. Returns the SIP Call-ID. */
  place(call: PlaceSipCall): string {
    const callId = `${randomBytes(12).toString('hex')}@voxflow`;
    void this.run(call, callId).catch(async (error) => {
      this.env.log.error({ err: error, session: call.session.id }, 'a SIP call could not be placed');
      await recordCallStatus(this.env.app, call.session, 'failed').catch(() => {});
    });
    return callId;
  }

  /** A 2xx that matched no transaction: one of our answered INVITEs, sent again; ACK it again. */
  strayResponse(response: SipResponse): void {
    if (header(response, 'cseq')?.endsWith('INVITE') !== true) return;
    const known = this.acks.get(header(response, 'call-id') ?? '');
    if (known) this.env.listener.sendTo(known.ack, known.address, known.port);
  }

  /** The server stops: calls still ringing are cancelled. */
  close(): void {
    for (const cancel of [...this.ringing]) cancel();
  }

  private async run(call: PlaceSipCall, callId: string): Promise<void> {
    const { env } = this;
    const { app } = env;
    const fail = (status: CallStatus, why: string) => {
      env.log.info({ session: call.session.id, status, why }, 'SIP call not connected');
      return recordCallStatus(app, call.session, status);
    };
    let sipCall: SipCall | null = null;
    const dialled = await this.dial({
      callId,
      from: call.from,
      to: call.to,
      ringTimeoutMs: RING_TIMEOUT_MS,
      ringing: () => void recordCallStatus(app, call.session, 'ringing').catch(() => {}),
      audio: (pcm) => sipCall?.audio(pcm),
      digit: (key) => sipCall?.digit(key),
    });
    if (!dialled.ok) return fail(dialled.status, dialled.reason);
    let rtp: RtpStream | null = dialled.rtp;
    const { dialog, answer } = dialled;
    try {
      const record = await app.services.store.sessions.claim(call.tokenHash, Date.now() / 1000).catch((error: unknown) => {
        if (errorCodeOf(error) !== 'too_many_sessions') throw error;
        return null;
      });
      if (!record) {
        // Answered but unusable: hung up at once (BYE), the call failed, nothing charged.
        const hangUp = new SipCall(env.callEnvironment(), { invite: null, dialog, offer: answer, rtp, admitted: nothingAdmitted(call.session) });
        rtp = null;
        await hangUp.hangUp('failed');
        return fail('failed', 'the account is at its limit of live calls');
      }
      const admitted = await admitClaimedSession(app, record).catch(async (error: unknown) => {
        env.log.warn({ err: error, session: record.id }, 'a placed SIP call was refused at admission');
        return null;
      });
      if (!admitted) {
        const hangUp = new SipCall(env.callEnvironment(), { invite: null, dialog, offer: answer, rtp, admitted: nothingAdmitted(record) });
        rtp = null;
        await hangUp.hangUp('refused');
        return fail('failed', 'refused at admission');
      }
      sipCall = new SipCall(env.callEnvironment(), {
        invite: null,
        dialog,
        offer: answer,
        rtp,
        admitted,
        over: () => void recordCallStatus(app, record, 'completed').catch(() => {}),
      });
      rtp = null; // the call owns it now
      env.keep(sipCall);
      sipCall.answer(record.id);
      await recordCallStatus(app, record, 'answered');
      env.log.info({ session: record.id, sip_call: callId.slice(0, 32) }, 'SIP call placed and answered');
    } finally {
      rtp?.close();
    }
  }

  /**
   * Places one INVITE through the next hop (the outbound proxy or registrar; `via` overrides it)
   * and waits for its final answer, CANCELling it after `ringTimeoutMs` or when `signal` aborts.
   * Answered with G.711: the dialog (ACKed) and its RTP stream, whose owner must close it. An
   * answer we cannot use is hung up (BYE) and is a failure.
   */
  async dial(request: DialRequest): Promise<DialResult> {
    const { env } = this;
    const { callId } = request;
    const hop = env.nextHop ?? request.fallbackHop ?? null;
    if (!hop) return { ok: false, status: 'failed', reason: 'no outbound proxy or registrar is set' };
    let address: string;
    try {
      address = (await lookup(hop.host, { family: 4 })).address;
    } catch {
      return { ok: false, status: 'failed', reason: `the outbound proxy ${hop.host} could not be resolved` };
    }
    const port = hop.port;
    const socket = await bindRtpSocket(env.rtpHost, env.rtpRange).catch(() => null);
    if (!socket) return { ok: false, status: 'failed', reason: 'no free RTP port' };
    let rtp: RtpStream | null = new RtpStream(
      socket,
      { address: '0.0.0.0', port: 9, law: 'mulaw', payloadType: 0, telephoneEvent: null, sending: false, receiving: false },
      {
        audio: (pcm) => request.audio(pcm),
        digit: (key) => request.digit(key),
        problem: (reason) => env.log.warn({ sip_call: callId.slice(0, 32), reason }, 'SIP call audio'),
      },
    );
    try {
      const host = hop.host.includes(':') ? `[${hop.host}]` : hop.host;
      const domain = `${host}${port === 5060 ? '' : `:${port}`}`;
      const localUri = `sip:${userPart(request.from)}@${domain}`;
      const remoteUri = /^sips?:/i.test(request.to) ? request.to : `sip:${userPart(request.to)}@${domain}`;
      const localTag = newTag();
      const contactHost = env.contactHost.includes(':') ? `[${env.contactHost}]` : env.contactHost;
      const sdp = buildOffer({ sessionId: String(Math.floor(Math.random() * 1e9)), version: 1, address: env.contactHost, port: rtp.port });
      const send = (message: SipRequest) => env.listener.sendTo(message, address, port);
      let cseq = 1;
      let authorization: Header | null = null;
      let response: SipResponse | null = null;
      let invite: SipRequest | null = null;
      let rang = false;
      let cancelled: 'timeout' | 'aborted' | null = null;
      for (let round = 0; round < 2; round++) {
        invite = {
          kind: 'request',
          method: 'INVITE',
          uri: remoteUri,
          headers: [
            { name: 'via', value: `SIP/2.0/UDP ${contactHost}:${env.listener.port};branch=${newBranch()};rport` },
            { name: 'max-forwards', value: '70' },
            { name: 'from', value: `<${localUri}>;tag=${localTag}` },
            { name: 'to', value: `<${remoteUri}>` },
            { name: 'call-id', value: callId },
            { name: 'cseq', value: `${cseq} INVITE` },
            { name: 'contact', value: `<sip:voxflow@${contactHost}:${env.listener.port}>` },
            { name: 'allow', value: 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, NOTIFY' },
            { name: 'user-agent', value: 'voxflow' },
            ...(authorization ? [authorization] : []),
            { name: 'content-type', value: 'application/sdp' },
          ],
          body: Buffer.from(sdp),
        };
        const sent = invite;
        const cancel = (why: 'timeout' | 'aborted') => {
          if (cancelled) return;
          cancelled = why;
          void env.layer.sendRequest(cancelOf(sent), () => send(cancelOf(sent)), false);
          // A far end that never answers the INVITE after our CANCEL is not waited for forever.
          setTimeout(() => env.layer.abandonInvite(sent), 64 * T1_MS).unref();
        };
        const ringTimer = setTimeout(() => cancel('timeout'), request.ringTimeoutMs);
        ringTimer.unref();
        const stop = () => cancel('aborted');
        this.ringing.add(stop);
        request.signal?.addEventListener('abort', stop, { once: true });
        if (request.signal?.aborted) stop();
        try {
          response = await env.layer.sendInvite(sent, send, false, (provisional) => {
            if (!rang && provisional.status >= 180) {
              rang = true;
              request.ringing?.();
            }
          });
        } finally {
          clearTimeout(ringTimer);
          this.ringing.delete(stop);
          request.signal?.removeEventListener('abort', stop);
        }
        if ((response.status === 401 || response.status === 407) && !authorization && env.credentials && !cancelled) {
          const challenge = header(response, response.status === 401 ? 'www-authenticate' : 'proxy-authenticate') ?? '';
          const value = answerChallenge(challenge, { method: 'INVITE', uri: remoteUri }, env.credentials);
          if (!value) break;
          authorization = { name: response.status === 401 ? 'authorization' : 'proxy-authorization', value };
          cseq++;
          continue;
        }
        break;
      }
      if (!response || !invite) return { ok: false, status: 'failed', reason: 'no INVITE was sent' };
      if (response.status >= 300 || response.status < 200) {
        const status = cancelled && response.status === 487 ? 'no_answer' : statusOfFailure(response.status);
        const reason = cancelled === 'timeout' ? `no answer within ${Math.round(request.ringTimeoutMs / 1000)} s` : cancelled === 'aborted' ? 'cancelled' : `the far end answered ${response.status} ${response.reason}`;
        return { ok: false, status, reason };
      }

      // Answered: the ACK first (the far end retransmits its 200 until it has it).
      const to = header(response, 'to')!;
      const contact = parseNameAddr(header(response, 'contact') ?? '');
      const routeSet = headerList(response, 'record-route').reverse();
      const remoteTarget = contact?.uri ?? remoteUri;
      const ack: SipRequest = {
        kind: 'request',
        method: 'ACK',
        uri: remoteTarget,
        headers: [
          { name: 'via', value: `SIP/2.0/UDP ${contactHost}:${env.listener.port};branch=${newBranch()};rport` },
          { name: 'max-forwards', value: '70' },
          { name: 'from', value: header(invite, 'from')! },
          { name: 'to', value: to },
          { name: 'call-id', value: callId },
          { name: 'cseq', value: `${cseq} ACK` },
          ...routeSet.map((route) => ({ name: 'route', value: route })),
        ],
        body: Buffer.alloc(0),
      };
      const peer: Peer = { protocol: 'udp', address, port, local: { address: env.contactHost, port: env.listener.port }, send: (message) => env.listener.sendTo(message, address, port) };
      const ackHop = firstHop(routeSet, remoteTarget) ?? { address, port };
      env.listener.sendTo(ack, ackHop.address, ackHop.port);
      this.acks.set(callId, { ack, ...ackHop });
      const forget = setTimeout(() => this.acks.delete(callId), 64 * T1_MS);
      forget.unref();

      const dialog: Dialog = { callId, localTag, localUri, remote: to, remoteTarget, routeSet, remoteCseq: 0, peer };
      const answer = parseOffer(response.body.toString('utf8'));
      if (!answer.ok) {
        const hangUp = new SipCall(env.callEnvironment(), { invite: null, dialog, offer: { address: '0.0.0.0', port: 9, law: 'mulaw', payloadType: 0, telephoneEvent: null, direction: 'inactive' }, rtp, admitted: nothingAdmitted(null) });
        rtp = null;
        await hangUp.hangUp('failed');
        return { ok: false, status: 'failed', reason: `the far end's answer cannot be used: ${answer.reason}` };
      }
      rtp.retarget(mediaTarget(answer.offer));
      const answered = { ok: true as const, dialog, answer: answer.offer, rtp, environment: env.callEnvironment() };
      rtp = null; // the caller of dial owns it now
      return answered;
    } finally {
      rtp?.close();
    }
  }
}

export interface DialRequest {
  callId: string;
  from: string;
  to: string;
  ringTimeoutMs: number;
  /** Where the INVITE goes when there is no outbound proxy or registrar. */
  fallbackHop?: { host: string; port: number };
  signal?: AbortSignal;
  ringing?(): void;
  /** The far end's audio (16 kHz) and keys, once answered. */
  audio(pcm: Int16Array): void;
  digit(key: string): void;
}

export type DialResult = { ok: true; dialog: Dialog; answer: Offer; rtp: RtpStream; environment: CallEnvironment } | { ok: false; status: CallStatus; reason: string };

/** A number or extension as a SIP user part (what a dial string may hold). */
function userPart(number: string): string {
  return number.replace(/[^0-9A-Za-z+*#._-]/g, '');
}

/** The CANCEL of an INVITE of ours: its branch, Request-URI, From, To, Call-ID and routes. */
function cancelOf(invite: SipRequest): SipRequest {
  const seq = header(invite, 'cseq')!.split(' ')[0];
  return {
    kind: 'request',
    method: 'CANCEL',
    uri: invite.uri,
    headers: [
      { name: 'via', value: header(invite, 'via')! },
      { name: 'max-forwards', value: '70' },
      { name: 'from', value: header(invite, 'from')! },
      { name: 'to', value: header(invite, 'to')! },
      { name: 'call-id', value: header(invite, 'call-id')! },
      { name: 'cseq', value: `${seq} CANCEL` },
      ...invite.headers.filter((h) => h.name === 'route'),
    ],
    body: Buffer.alloc(0),
  };
}

function firstHop(routeSet: string[], remoteTarget: string): { address: string; port: number } | null {
  const uri = routeSet[0] ? parseNameAddr(routeSet[0])?.uri : remoteTarget;
  const match = uri ? /^sips?:(?:[^@]+@)?([0-9.]+)(?::(\d+))?/.exec(uri) : null;
  return match ? { address: match[1]!, port: match[2] ? Number(match[2]) : 5060 } : null;
}
