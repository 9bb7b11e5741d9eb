// The SIP endpoint: its listeners, the transaction layer, and what answers each request.
// Over 400 lines: every request method's answer and the trust checks share the listeners and
// the transaction layer set up here.
//
// A new INVITE is answered by the flow of the `sip` phone number whose user part is the
// Request-URI's user (`sip:1000@…`, or `sip:+15551234567@…`), from the account that bound it,
// and only when the call comes from that account's peers: an address or range listed in its
// `sip_allowed_sources`, or anywhere, once the INVITE answers a digest challenge with the
// account's `sip_username` and `sip_password`. Otherwise: 404 (no such number), 403 (a source
// the account does not list and no credentials to challenge with) or 401 (the challenge), 488
// (SDP without PCMU or PCMA), 480 (the flow cannot run, or the account has no credit for a first
// minute), 486 (the account's live sessions are at their cap) — and never a session. Refusals
// are logged once per source address and kind a minute, so a scanner cannot fill the log.
//
// Out of a dialog, OPTIONS is answered 200 (peers use it as a keep-alive), CANCEL stops an INVITE
// still being answered (487), and everything else we do not take gets 405 or 481.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { isIP } from 'node:net';
import { readFile } from 'node:fs/promises';
import { EngineRefusal } from '../../engine/voice-engine.ts';
import { errorCodeOf } from '../../http/error-handler.ts';
import { carrierCredentials } from '../../security/carrier-credentials.ts';
import type { RegisterTarget } from '../../config.ts';
import type { PhoneNumber } from '../../store/store.ts';
import { admitClaimedSession, type AdmittedSession } from '../session-admission.ts';
import { firstExternalIpv4, sourceAllowed } from './addresses.ts';
import { mediaTarget, SipCall, type CallEnvironment } from './call.ts';
import { callerOf, dialogKey, dialogOfInvite } from './dialog.ts';
import { OutboundCalls } from './outbound.ts';
import { DigestAuth } from './digest.ts';
import { capabilities, header, parseNameAddr, parseUri, responseTo, tagOf, type ParseResult, type SipRequest } from './message.ts';
import { bindRtpSocket, parsePortRange, RtpStream, type RtpPortRange } from './rtp.ts';
import { parseOffer } from './sdp.ts';
import { Registration } from './register.ts';
import { TransactionLayer, type ServerTransaction } from './transactions.ts';
import { connectTcp, listenTcp, type ConnectTls, listenUdp, parseListen, readTlsFiles, type Listening, type Peer } from './transport.ts';

const LOG_EVERY_MS = 60_000;
const MAX_LOG_KEYS = 1000;
/** Calls being answered at once (lookups, admission); past it new INVITEs get 503. */
const MAX_PENDING_INVITES = 64;

export interface SipEndpointOptions {
  listen: readonly string[];
  rtpPorts: string;
  mediaAddress?: string | undefined;
  /** Register to a trunk or registrar (VOXFLOW_SIP_REGISTER), with this password. */
  register?: RegisterTarget | undefined;
  registerPassword?: string | undefined;
  /** Where calls we place go (`host[:port]`); the registrar when unset. */
  outboundProxy?: string | undefined;
  /** A tls: listener's PEM certificate and key (file paths). */
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  /** The CA certificates (PEM file) a TLS registrar's certificate is checked against; the system's when unset. */
  registerCa?: string | undefined;
}

interface Pending {
  cancelled: boolean;
  cancel(): void;
}

export class SipEndpoint {
  private readonly listeners: Listening[] = [];
  private readonly layer: TransactionLayer;
  private readonly calls = new Map<string, SipCall>();
  private readonly pending = new Map<string, Pending>();
  private readonly digest = new DigestAuth();
  private readonly logged = new Map<string, number>();
  private readonly rtpRange: RtpPortRange;
  private readonly contactHost: string;
  private readonly rtpHost: string;
  private closing = false;
  /** Our registration at a trunk, when configured: its calls are trusted and routed by the number dialled. */
  registration: Registration | null = null;
  /** Calls we place (POST /v1/calls from a sip number); null without a UDP listener. */
  outbound: OutboundCalls | null = null;

  constructor(
    private readonly app: FastifyInstance,
    private readonly options: SipEndpointOptions,
    private readonly log: FastifyBaseLogger,
  ) {
    const range = parsePortRange(options.rtpPorts);
    if (!range) throw new Error(`VOXFLOW_SIP_RTP_PORTS: "${options.rtpPorts}" is not a range of ports such as 20000-20999 (or 0)`);
    this.rtpRange = range;
    const first = parseListen(options.listen[0] ?? '');
    const host = first?.host ?? '127.0.0.1';
    this.rtpHost = host.includes(':') ? '0.0.0.0' : host;
    if (options.mediaAddress && isIP(options.mediaAddress) !== 4) throw new Error(`VOXFLOW_SIP_MEDIA_ADDRESS: "${options.mediaAddress}" is not an IPv4 address`);
    this.contactHost = options.mediaAddress ?? (host === '0.0.0.0' || host === '::' ? firstExternalIpv4() : host);
    this.layer = new TransactionLayer({
      request: (tx) => this.request(tx),
      ack: (request) => this.ack(request),
      strayResponse: (response) => this.outbound?.strayResponse(response),
    });
  }

  get listening(): Array<{ protocol: 'udp' | 'tcp' | 'tls'; host: string; port: number }> {
    return this.listeners.map((l) => ({ protocol: l.protocol, host: l.host, port: l.port }));
  }

  async start(): Promise<void> {
    try {
      for (const text of this.options.listen) {
        const listen = parseListen(text);
        if (!listen) throw new Error(`VOXFLOW_SIP_LISTEN: "${text}" is not udp:<host>:<port>, tcp:<host>:<port> or tls:<host>:<port>`);
        const inbound = (result: ParseResult, peer: Peer) => this.inbound(result, peer);
        if (listen.protocol === 'udp') this.listeners.push(await listenUdp(listen, inbound));
        else if (listen.protocol === 'tcp') this.listeners.push(await listenTcp(listen, inbound));
        else this.listeners.push(await listenTcp(listen, inbound, await readTlsFiles(this.options.tlsCert, this.options.tlsKey)));
      }
    } catch (error) {
      await this.close();
      throw error;
    }
    this.log.info({ sip: this.listening, media_address: this.contactHost }, 'SIP endpoint listening');
    const udp = this.listeners.find((l) => l.protocol === 'udp');
    if (udp) {
      const register = this.options.register;
      const proxy = this.options.outboundProxy ? /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(this.options.outboundProxy) : null;
      this.outbound = new OutboundCalls({
        app: this.app,
        log: this.log,
        layer: this.layer,
        contactHost: this.contactHost,
        listener: udp,
        rtpHost: this.rtpHost,
        rtpRange: this.rtpRange,
        nextHop: proxy ? { host: proxy[1]!.replace(/^\[(.*)\]$/, '$1'), port: proxy[2] ? Number(proxy[2]) : 5060 } : register ? { host: register.host, port: register.port } : null,
        credentials: register && this.options.registerPassword ? { username: register.authUser, password: this.options.registerPassword } : null,
        callEnvironment: () => this.callEnvironment(udp),
        keep: (call) => this.calls.set(dialogKey(call.callId, call.localTag), call),
      });
    }
    if (this.options.register) {
      const { transport } = this.options.register;
      const listener = transport === 'udp' ? udp : this.listeners.find((l) => l.protocol === transport);
      if (!listener) {
        await this.close();
        throw new Error(`VOXFLOW_SIP_REGISTER: registering${transport === 'udp' ? '' : ` over ${transport}`} needs a ${transport}: listener in VOXFLOW_SIP_LISTEN (the trunk sends its calls there)`);
      }
      let tls: ConnectTls | undefined;
      if (transport === 'tls') {
        const caFile = this.options.registerCa;
        let ca: Buffer | null = null;
        if (caFile) {
          try {
            ca = await readFile(caFile);
          } catch (error) {
            await this.close();
            throw new Error(`VOXFLOW_SIP_REGISTER_CA: "${caFile}" cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
          }
          if (!ca.toString('utf8').includes('-----BEGIN CERTIFICATE-----')) {
            await this.close();
            throw new Error(`VOXFLOW_SIP_REGISTER_CA: "${caFile}" holds no PEM certificate`);
          }
        }
        tls = { ca, host: this.options.register.host };
      }
      this.registration = new Registration({
        target: this.options.register,
        password: this.options.registerPassword ?? '',
        contactHost: this.contactHost,
        listener,
        layer: this.layer,
        log: this.log,
        connect: (address, port, closed) => connectTcp(address, port, { address: this.contactHost, port: listener.port }, (result, peer) => this.inbound(result, peer), closed, tls),
      });
      this.registration.start();
    }
  }

  /** Ends every call (BYE), then stops listening. */
  async close(): Promise<void> {
    this.closing = true;
    // The un-REGISTER first: the trunk stops sending new calls while ours end.
    await this.registration?.stop();
    this.outbound?.close();
    for (const pending of this.pending.values()) pending.cancel();
    await Promise.all([...this.calls.values()].map((call) => call.hangUp('server_stopping').catch(() => {})));
    this.layer.close();
    await Promise.all(this.listeners.splice(0).map((l) => l.close()));
  }

  private inbound(result: ParseResult, peer: Peer): void {
    try {
      if (!result.ok) {
        this.logOnce(peer.address, 'malformed', { reason: result.reason }, 'a malformed SIP message was refused');
        if (result.request) peer.send(responseTo(result.request, 400, { reason: `Bad Request (${result.reason})`.slice(0, 120) }));
        return;
      }
      const message = result.message;
      if (message.kind === 'response') this.layer.receiveResponse(message);
      else this.layer.receiveRequest(message, peer);
    } catch (error) {
      // One message must never take the endpoint down; what it was is logged, once a minute.
      this.logOnce(peer.address, 'error', { err: error }, 'a SIP message could not be handled');
    }
  }

  private request(tx: ServerTransaction): void {
    const request = tx.request;
    const maxForwards = header(request, 'max-forwards');
    if (maxForwards !== undefined && Number(maxForwards) === 0 && request.method !== 'OPTIONS') {
      tx.reply(483);
      return;
    }
    const toTag = tagOf(header(request, 'to'));
    if (toTag) {
      const call = this.calls.get(dialogKey(header(request, 'call-id')!, toTag));
      if (call) call.request(tx);
      else tx.reply(481);
      return;
    }
    switch (request.method) {
      case 'INVITE':
        void this.invite(tx);
        return;
      case 'CANCEL': {
        const invite = this.layer.inviteFor(request);
        const pending = invite ? this.pending.get(invite.key) : undefined;
        if (!invite || invite.state !== 'proceeding') {
          tx.reply(481);
          return;
        }
        tx.reply(200);
        if (pending) pending.cancel();
        else invite.reply(487);
        return;
      }
      case 'OPTIONS':
        tx.reply(200, { headers: [...capabilities(), { name: 'accept-language', value: 'en' }] });
        return;
      case 'BYE':
      case 'INFO':
      case 'NOTIFY':
        tx.reply(481);
        return;
      default:
        tx.reply(405, { headers: capabilities() });
    }
  }

  private ack(request: SipRequest): void {
    const toTag = tagOf(header(request, 'to'));
    if (!toTag) return;
    this.calls.get(dialogKey(header(request, 'call-id')!, toTag))?.ack(request);
  }

  /** A new call: who it is for, whether its source may call, and the answer. */
  private async invite(tx: ServerTransaction): Promise<void> {
    const request = tx.request;
    const peer = tx.peer;
    if (this.closing || this.pending.size >= MAX_PENDING_INVITES) {
      tx.reply(503, { headers: [{ name: 'retry-after', value: '5' }] });
      return;
    }
    const pending: Pending = {
      cancelled: false,
      cancel: () => {
        if (pending.cancelled) return;
        pending.cancelled = true;
        tx.reply(487);
      },
    };
    this.pending.set(tx.key, pending);
    let rtp: RtpStream | null = null;
    let admitted: AdmittedSession | null = null;
    const refuse = (status: number, kind: string, fields: Record<string, unknown>, why: string, extra: Parameters<ServerTransaction['reply']>[1] = {}) => {
      this.logOnce(peer.address, kind, fields, why);
      tx.reply(status, extra);
    };
    try {
      const fromTrunk = this.fromRegistrar(peer);
      const user = this.calledUser(request, fromTrunk);
      const { store, engine } = this.app.services;
      const number = user ? await store.phoneNumbers.findByCarrierNumber('sip', user) : null;
      if (!number) return refuse(404, 'unknown_number', { user: user?.slice(0, 64) ?? null }, 'a SIP call to a number no account holds');

      const trust = fromTrunk ? 'ok' : await this.trust(number, request, peer);
      if (trust === 'challenge' || trust === 'stale') {
        return refuse(401, 'challenged', {}, 'a SIP call was challenged for credentials', { headers: [{ name: 'www-authenticate', value: this.digest.challenge(trust === 'stale') }] });
      }
      if (trust !== 'ok') return refuse(403, 'forbidden_source', { number: number.id }, 'a SIP call from a source the account does not list');

      const unsupported = (header(request, 'require') ?? '').split(',').map((v) => v.trim()).filter((v) => v && v !== 'timer');
      if (unsupported.length > 0) return refuse(420, 'bad_extension', {}, 'a SIP call required an extension we lack', { headers: [{ name: 'unsupported', value: unsupported.join(', ') }] });
      const type = (header(request, 'content-type') ?? '').toLowerCase().split(';')[0]!.trim();
      if (type !== 'application/sdp' || request.body.length === 0) {
        return refuse(488, 'no_offer', {}, 'a SIP call without an SDP offer', { headers: [{ name: 'warning', value: '399 voxflow "an INVITE must carry its SDP offer"' }] });
      }
      const parsed = parseOffer(request.body.toString('utf8'));
      if (!parsed.ok) return refuse(parsed.status, 'bad_offer', { reason: parsed.reason }, 'a SIP call with an SDP offer we cannot answer', { headers: [{ name: 'warning', value: `399 voxflow "${parsed.reason}"` }] });

      const callId = header(request, 'call-id')!;
      if (await store.sessions.findByCarrierCallId('sip', callId)) return refuse(482, 'loop', {}, 'a second INVITE of a call already answered');
      try {
        await engine.prepareFlow(number.accountId, number.flowId);
      } catch (error) {
        if (!(error instanceof EngineRefusal)) throw error;
        return refuse(480, 'flow_not_running', { code: error.code }, 'a SIP number whose flow cannot run took a call', { headers: [{ name: 'warning', value: '399 voxflow "this number is not taking calls now"' }] });
      }
      if (!(await engine.firstMinuteCovered(number.accountId)).ok) {
        await store.phoneNumbers.recordCall(number.id, Date.now() / 1000, 'failed');
        return refuse(480, 'no_credit', {}, 'a SIP call to an account without credit', { headers: [{ name: 'warning', value: '399 voxflow "this line cannot take calls now"' }] });
      }
      if (pending.cancelled) return;

      const socket = await bindRtpSocket(this.rtpHost, this.rtpRange).catch(() => null);
      if (!socket) return refuse(503, 'no_rtp_port', {}, 'no free RTP port for a SIP call');
      let call: SipCall | null = null;
      rtp = new RtpStream(socket, mediaTarget(parsed.offer), {
        audio: (pcm) => call?.audio(pcm),
        digit: (key) => call?.digit(key),
        problem: (reason) => this.log.warn({ sip_call: callId.slice(0, 32), reason }, 'SIP call audio'),
      });
      if (pending.cancelled) return;

      let record;
      try {
        const experiment = await engine.experimentArm(number.accountId, number.flowId, callerOf(request));
        record = await store.sessions.createConnected({
          accountId: number.accountId,
          flowId: number.flowId,
          experiment,
          transport: 'sip',
          mode: 'flow',
          context: {},
          metadata: { phone_number_id: number.id },
          phone: { direction: 'inbound', from: callerOf(request), to: user!, carrierCallId: callId, callStatus: 'answered' },
        });
      } catch (error) {
        if (errorCodeOf(error) === 'too_many_sessions') return refuse(486, 'at_cap', {}, 'a SIP call to an account at its limit of live calls');
        throw error;
      }
      try {
        admitted = await admitClaimedSession(this.app, record);
      } catch (error) {
        const code = errorCodeOf(error);
        return refuse(code === 'too_many_sessions' ? 486 : code === 'insufficient_credits' ? 480 : 503, 'refused', { code }, 'a SIP call refused at admission');
      }
      if (pending.cancelled) {
        await admitted.refuse('caller_hung_up');
        admitted = null;
        return;
      }
      const localTag = tx.toTag;
      call = new SipCall(
        this.callEnvironment(this.listeners.find((l) => l.protocol === peer.protocol && l.port === peer.local.port)),
        { invite: tx, dialog: dialogOfInvite(tx, localTag), offer: parsed.offer, rtp, admitted },
      );
      this.calls.set(dialogKey(callId, localTag), call);
      rtp = null; // the call owns it now
      admitted = null;
      call.answer(record.id);
      await store.phoneNumbers.recordCall(number.id, Date.now() / 1000, 'answered');
    } catch (error) {
      this.log.error({ err: error }, 'a SIP call could not be answered');
      tx.reply(500);
    } finally {
      this.pending.delete(tx.key);
      rtp?.close();
      if (admitted) await admitted.refuse(pending.cancelled ? 'caller_hung_up' : 'refused').catch(() => {});
    }
  }

  /** What a call needs of the endpoint: its transaction layer, and a listener to send its requests from. */
  private callEnvironment(listener: Listening | undefined): CallEnvironment {
    return {
      app: this.app,
      log: this.log,
      layer: this.layer,
      contactHost: this.contactHost,
      sendTo: (message, address, port) => listener?.sendTo(message, address, port) ?? false,
      gone: (gone) => {
        if (this.calls.get(dialogKey(gone.callId, gone.localTag)) === gone) this.calls.delete(dialogKey(gone.callId, gone.localTag));
      },
      dial: (request) => (this.outbound ? this.outbound.dial(request) : Promise.resolve({ ok: false, status: 'failed', reason: 'no udp: listener to place the call from' })),
      keep: (call) => this.calls.set(dialogKey(call.callId, call.localTag), call),
    };
  }

  /** Whether a message comes from the registrar we registered to (the trunk we chose to trust). */
  private fromRegistrar(peer: Peer): boolean {
    const address = this.registration?.address;
    return Boolean(address) && peer.address.replace(/^::ffff:/, '') === address;
  }

  /**
   * The number called: the Request-URI's user, except when the trunk sent the call to our
   * registration's Contact (its user is ours, not the number dialled): then the To header's user,
   * where trunks keep the number the caller dialled.
   */
  private calledUser(request: SipRequest, fromTrunk: boolean): string | null {
    const user = parseUri(request.uri)?.user ?? null;
    if (!fromTrunk || user !== this.registration?.user) return user;
    const to = parseNameAddr(header(request, 'to') ?? '');
    return (to ? parseUri(to.uri)?.user : null) ?? user;
  }

  /** Whether the INVITE comes from the account's peers: a listed source, or digest credentials. */
  private async trust(number: PhoneNumber, request: SipRequest, peer: Peer): Promise<'ok' | 'challenge' | 'stale' | 'forbidden'> {
    let fields: Record<string, string>;
    try {
      fields = await carrierCredentials(this.app.services.store.providers, this.app.services.secrets, number.accountId, 'sip');
    } catch {
      return 'forbidden'; // sealed under another server key: unusable until set again
    }
    if (fields.allowed_sources && sourceAllowed(fields.allowed_sources, peer.address)) return 'ok';
    if (!fields.username || !fields.password) return 'forbidden';
    const verdict = this.digest.verify(header(request, 'authorization') ?? header(request, 'proxy-authorization'), request.method, { username: fields.username, password: fields.password });
    return verdict === 'ok' ? 'ok' : verdict === 'stale' ? 'stale' : 'challenge';
  }

  private logOnce(source: string, kind: string, fields: Record<string, unknown>, message: string): void {
    const key = `${source}|${kind}`;
    const now = Date.now();
    const last = this.logged.get(key);
    if (last !== undefined && now - last < LOG_EVERY_MS) return;
    if (this.logged.size >= MAX_LOG_KEYS) {
      for (const [k, at] of this.logged) if (now - at >= LOG_EVERY_MS) this.logged.delete(k);
      if (this.logged.size >= MAX_LOG_KEYS) return;
    }
    this.logged.set(key, now);
    this.log.warn({ ...fields, source }, message);
  }
}
