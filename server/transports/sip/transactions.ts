// RFC 3261 §17: the transaction layer between the transports and the calls.
//
// Server transactions. An INVITE gets 100 Trying at once (the caller stops retransmitting it),
// and a retransmitted INVITE gets the last response again. A final response of 300 or more is
// retransmitted over UDP from T1, doubling up to T2 (timer G), until the ACK comes, for at most
// 64·T1 (timer H); the ACK is absorbed here, and further ACKs for T4 (timer I). A 2xx ends the
// transaction at once: its retransmission until the ACK is the dialog's (RFC 3261 §13.3.1.4,
// calls.ts). A non-INVITE request's final response is sent again for each retransmission of the
// request during 64·T1 over UDP (timer J), and the request is not handed on again.
//
// Client transactions, for the requests a call sends (BYE, REFER, NOTIFY's answers are server
// side): over UDP the request is retransmitted from T1, doubling up to T2 (timer E), until a
// final response, and given up after 64·T1 (timer F) as a 408.
//
// Matching follows RFC 3261 §17.2.3: the top Via's branch (with the magic cookie), its sent-by
// and the method (an ACK matches its INVITE, a CANCEL is its own transaction); a request without
// the cookie (RFC 2543 peers) is matched by Call-ID, CSeq, From tag and top Via.
import { randomBytes } from 'node:crypto';
import { header, parseCSeq, parseVia, responseTo, tagOf, type SipRequest, type SipResponse } from './message.ts';
import type { Peer } from './transport.ts';

export const T1_MS = 500;
export const T2_MS = 4000;
export const T4_MS = 5000;
const MAGIC_COOKIE = 'z9hG4bK';
/** Transactions kept at once; past it, new requests get 503 (a flood must not grow memory). */
const MAX_TRANSACTIONS = 4096;

export function newBranch(): string {
  return `${MAGIC_COOKIE}${randomBytes(12).toString('hex')}`;
}

export function newTag(): string {
  return randomBytes(8).toString('hex');
}

/** A request's transaction key (RFC 3261 §17.2.3); `method` overrides the request's (ACK and CANCEL find their INVITE). */
export function transactionKey(request: SipRequest, method = request.method): string {
  const via = parseVia(header(request, 'via')!)!;
  const sentBy = `${via.host}:${via.port ?? 5060}`;
  const branch = via.params.branch ?? '';
  if (branch.startsWith(MAGIC_COOKIE)) return `${branch}|${sentBy}|${method}`;
  const cseq = parseCSeq(header(request, 'cseq')!)!;
  return `old|${header(request, 'call-id')}|${cseq.seq}|${tagOf(header(request, 'from'))}|${sentBy}|${method}`;
}

type ServerState = 'proceeding' | 'completed' | 'confirmed' | 'terminated';

export class ServerTransaction {
  state: ServerState = 'proceeding';
  /** Our tag in the To of every final answer (and the dialog's, when an INVITE is answered 2xx). */
  readonly toTag = newTag();
  private last: SipResponse | null = null;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    readonly key: string,
    readonly request: SipRequest,
    readonly peer: Peer,
    private readonly done: (tx: ServerTransaction) => void,
  ) {}

  get isInvite(): boolean {
    return this.request.method === 'INVITE';
  }

  /** Answers the request; a response after the final one is ignored. */
  respond(response: SipResponse): void {
    if (this.state !== 'proceeding') return;
    this.last = response;
    this.peer.send(response);
    if (response.status < 200) return;
    const reliable = this.peer.protocol !== 'udp';
    if (this.isInvite) {
      if (response.status < 300) {
        this.terminate();
        return;
      }
      this.state = 'completed';
      if (!reliable) {
        let interval = T1_MS;
        const retransmit = () => {
          if (this.state !== 'completed') return;
          this.peer.send(this.last!);
          interval = Math.min(interval * 2, T2_MS);
          this.later(retransmit, interval);
        };
        this.later(retransmit, interval);
      }
      // Timer H: no ACK ever came.
      this.later(() => this.terminate(), 64 * T1_MS);
      return;
    }
    this.state = 'completed';
    // Timer J: retransmissions of the request are answered from here until then.
    if (reliable) this.terminate();
    else this.later(() => this.terminate(), 64 * T1_MS);
  }

  /** Answers with a status and nothing else (errors, OPTIONS' plain answers). */
  reply(status: number, options: Parameters<typeof responseTo>[2] = {}): void {
    this.respond(responseTo(this.request, status, { toTag: this.toTag, ...options }));
  }

  /** The same request again: the last response again. */
  retransmitted(): void {
    if (this.last && this.state !== 'confirmed') this.peer.send(this.last);
  }

  /** The ACK of a final response of 300 or more. */
  acknowledged(): void {
    if (this.state !== 'completed') return;
    this.state = 'confirmed';
    this.clearTimers();
    // Timer I: ACK retransmissions are absorbed for T4 over UDP.
    if (this.peer.protocol === 'udp') this.later(() => this.terminate(), T4_MS);
    else this.terminate();
  }

  terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.clearTimers();
    this.done(this);
  }

  private later(work: () => void, ms: number): void {
    const timer = setTimeout(work, ms);
    timer.unref();
    this.timers.push(timer);
  }

  private clearTimers(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers = [];
  }
}

interface ClientTransaction {
  /** `madeHere`: an answer we made (a timeout, closing), not the far end's: nothing to acknowledge. */
  resolve(response: SipResponse, madeHere?: boolean): void;
  /** A 1xx (INVITE transactions only care). */
  provisional?(response: SipResponse): void;
  timers: NodeJS.Timeout[];
}

export interface TransactionUser {
  /** A new request (not a retransmission, not an ACK of a non-2xx). */
  request(tx: ServerTransaction): void;
  /** An ACK that matched no transaction: the ACK of a 2xx, the dialog's. */
  ack(request: SipRequest, peer: Peer): void;
  /** A response that matched no transaction: a 2xx to an INVITE of ours sent again (our ACK was lost). */
  strayResponse?(response: SipResponse): void;
}

/** The ACK of a final answer of 300 or more to our INVITE: the INVITE's branch, Request-URI and routes, the answer's To. */
function ackFor(invite: SipRequest, response: SipResponse): SipRequest {
  const cseq = parseCSeq(header(invite, 'cseq')!)!;
  const headers = [
    { name: 'via', value: header(invite, 'via')! },
    { name: 'max-forwards', value: '70' },
    { name: 'from', value: header(invite, 'from')! },
    { name: 'to', value: header(response, 'to')! },
    { name: 'call-id', value: header(invite, 'call-id')! },
    { name: 'cseq', value: `${cseq.seq} ACK` },
    ...invite.headers.filter((h) => h.name === 'route'),
  ];
  return { kind: 'request', method: 'ACK', uri: invite.uri, headers, body: Buffer.alloc(0) };
}

export class TransactionLayer {
  private readonly server = new Map<string, ServerTransaction>();
  private readonly client = new Map<string, ClientTransaction>();

  constructor(private readonly user: TransactionUser) {}

  get size(): number {
    return this.server.size + this.client.size;
  }

  /** The INVITE transaction a CANCEL is for, if it is still going. */
  inviteFor(cancel: SipRequest): ServerTransaction | undefined {
    return this.server.get(transactionKey(cancel, 'INVITE'));
  }

  receiveRequest(request: SipRequest, peer: Peer): void {
    if (request.method === 'ACK') {
      const invite = this.server.get(transactionKey(request, 'INVITE'));
      if (invite && invite.state !== 'terminated' && invite.state !== 'proceeding') {
        invite.acknowledged();
        return;
      }
      this.user.ack(request, peer);
      return;
    }
    const key = transactionKey(request);
    const existing = this.server.get(key);
    if (existing) {
      existing.retransmitted();
      return;
    }
    const tx = new ServerTransaction(key, request, peer, (done) => {
      if (this.server.get(done.key) === done) this.server.delete(done.key);
    });
    if (this.server.size >= MAX_TRANSACTIONS) {
      tx.reply(503, { headers: [{ name: 'retry-after', value: '5' }] });
      return;
    }
    this.server.set(key, tx);
    // The caller stops retransmitting its INVITE once it hears from us (RFC 3261 §17.2.1).
    if (request.method === 'INVITE') tx.respond(responseTo(request, 100));
    this.user.request(tx);
  }

  receiveResponse(response: SipResponse): void {
    const via = parseVia(header(response, 'via') ?? '');
    const cseq = parseCSeq(header(response, 'cseq') ?? '');
    if (!via || !cseq) return;
    const tx = this.client.get(`${via.params.branch}|${cseq.method}`);
    if (!tx) {
      if (response.status >= 200) this.user.strayResponse?.(response);
      return;
    }
    if (response.status < 200) {
      tx.provisional?.(response);
      return;
    }
    tx.resolve(response);
  }

  /**
   * Sends an INVITE we originate (RFC 3261 17.1.1) and resolves with its final response. Over UDP
   * it is sent again from T1, doubling, until any answer; with none within 64·T1 a 408 is made
   * here. Once a 1xx came it waits for the final answer as long as the caller lets it ring (the
   * caller CANCELs). A final answer of 300 or more is acknowledged here (the ACK reuses the
   * INVITE's branch); a 2xx is the dialog's to acknowledge.
   */
  sendInvite(request: SipRequest, send: (message: SipRequest) => boolean, reliable: boolean, provisional: (response: SipResponse) => void): Promise<SipResponse> {
    const via = parseVia(header(request, 'via')!)!;
    const key = `${via.params.branch}|INVITE`;
    return new Promise((resolve) => {
      let heard = false;
      const tx: ClientTransaction = {
        timers: [],
        provisional: (response) => {
          if (!heard) {
            heard = true;
            for (const timer of tx.timers) clearTimeout(timer);
            tx.timers = [];
          }
          provisional(response);
        },
        resolve: (response, madeHere = false) => {
          for (const timer of tx.timers) clearTimeout(timer);
          this.client.delete(key);
          if (response.status >= 300 && !madeHere) send(ackFor(request, response));
          resolve(response);
        },
      };
      this.client.set(key, tx);
      const later = (work: () => void, ms: number) => {
        const timer = setTimeout(work, ms);
        timer.unref();
        tx.timers.push(timer);
      };
      if (!send(request)) {
        this.client.delete(key);
        resolve(responseTo(request, 503, { reason: 'Transport Unavailable' }));
        return;
      }
      if (!reliable) {
        let interval = T1_MS;
        const retransmit = () => {
          if (!this.client.has(key) || heard) return;
          send(request);
          interval *= 2;
          later(retransmit, interval);
        };
        later(retransmit, interval);
      }
      later(() => {
        this.client.delete(key);
        resolve(responseTo(request, 408, { reason: 'Request Timeout' }));
      }, 64 * T1_MS);
    });
  }

  /**
   * Sends a request we originate and resolves with its final response; a 408 made here when none
   * came within 64·T1. `request` must carry its top Via with a fresh branch (newBranch).
   */
  sendRequest(request: SipRequest, send: () => boolean, reliable: boolean): Promise<SipResponse> {
    const via = parseVia(header(request, 'via')!)!;
    const key = `${via.params.branch}|${request.method}`;
    return new Promise((resolve) => {
      const tx: ClientTransaction = {
        timers: [],
        resolve: (response) => {
          for (const timer of tx.timers) clearTimeout(timer);
          this.client.delete(key);
          resolve(response);
        },
      };
      this.client.set(key, tx);
      const later = (work: () => void, ms: number) => {
        const timer = setTimeout(work, ms);
        timer.unref();
        tx.timers.push(timer);
      };
      if (!send()) {
        tx.resolve(responseTo(request, 503, { reason: 'Transport Unavailable' }));
        return;
      }
      if (!reliable) {
        let interval = T1_MS;
        const retransmit = () => {
          if (!this.client.has(key)) return;
          send();
          interval = Math.min(interval * 2, T2_MS);
          later(retransmit, interval);
        };
        later(retransmit, interval);
      }
      later(() => tx.resolve(responseTo(request, 408, { reason: 'Request Timeout' })), 64 * T1_MS);
    });
  }

  /** Gives up on an INVITE of ours that was CANCELled and never got its final answer: a 408 made here. */
  abandonInvite(invite: SipRequest): void {
    const via = parseVia(header(invite, 'via')!)!;
    this.client.get(`${via.params.branch}|INVITE`)?.resolve(responseTo(invite, 408, { reason: 'Request Timeout' }), true);
  }

  close(): void {
    for (const tx of [...this.server.values()]) tx.terminate();
    for (const tx of [...this.client.values()]) tx.resolve({ kind: 'response', status: 503, reason: 'Closing', headers: [], body: Buffer.alloc(0) }, true);
  }
}
