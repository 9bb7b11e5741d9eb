// Voxflow registering itself to a SIP trunk or registrar (VOXFLOW_SIP_REGISTER, docs/sip.md), so
// the trunk sends the calls for its numbers to our Contact rather than to a fixed address.
//
// REGISTER goes over our UDP listener (its port is the Contact's, where the trunk's INVITEs then
// arrive), or with `;transport=tcp` over a TCP connection we open to the registrar and keep (its
// Contact is our TCP listener, `;transport=tcp`: the trunk sends its calls there, or back on the
// connection; a connection that drops is opened again and the registration renewed), answering a 401 or 407 challenge with digest (MD5, qop=auth) under the configured user
// and the password from the environment. It is renewed at half of what the registrar granted,
// refused or unanswered it is tried again after 5 s,
// doubling up to 5 minutes, and each failure is logged with the registrar's status, never the
// password. On shutdown the binding is removed (Expires: 0), waiting at most a few seconds for the
// registrar's word. The registrar's host is resolved once a try (an A record, no SRV), and its
// address is where the trunk's calls are trusted from.
import type { FastifyBaseLogger } from 'fastify';
import { lookup } from 'node:dns/promises';
import { randomBytes } from 'node:crypto';
import type { RegisterTarget } from '../../config.ts';
import { answerChallenge } from './digest.ts';
import { header, parseNameAddr, type Header, type SipRequest, type SipResponse } from './message.ts';
import { newBranch, newTag, type TransactionLayer } from './transactions.ts';
import type { Connection, Listening } from './transport.ts';

const MAX_RETRY_MS = 5 * 60_000;
/** How long shutdown waits for the registrar to take the un-REGISTER. */
const UNREGISTER_WAIT_MS = 3_000;

export interface RegistrationOptions {
  target: RegisterTarget;
  password: string;
  /** The address the registrar reaches us at (Contact and Via). */
  contactHost: string;
  /** The listener our Contact names: UDP (and sent from), or TCP for `;transport=tcp`. */
  listener: Listening;
  layer: TransactionLayer;
  log: FastifyBaseLogger;
  /** For `;transport=tcp` or `tls`: opens a connection to the registrar; `closed` is told when it drops. */
  connect?(address: string, port: number, closed: () => void): Promise<Connection>;
}

export type RegistrationState = 'registering' | 'registered' | 'failing' | 'stopped';

export class Registration {
  state: RegistrationState = 'registering';
  /** The registrar's resolved IPv4 address: the trunk's calls come from there. */
  address: string | null = null;
  /** Why the last attempt failed (never the password); null once registered. */
  lastError: string | null = null;
  private readonly callId = `${randomBytes(12).toString('hex')}@voxflow`;
  private readonly fromTag = newTag();
  private cseq = 1;
  private timer: NodeJS.Timeout | null = null;
  private retryMs: number;
  private expires: number;
  private readonly settled: Array<() => void> = [];
  private connection: Connection | null = null;

  constructor(private readonly options: RegistrationOptions) {
    this.expires = options.target.expires;
    this.retryMs = options.target.retry * 1000;
  }

  get user(): string {
    return this.options.target.user;
  }

  /** Sends the first REGISTER; what follows (refreshes, retries) runs on its own. */
  start(): void {
    this.schedule(0);
  }

  /** Resolves once the first REGISTER has been answered either way (tests and start-up logs wait on it). */
  firstAnswer(): Promise<void> {
    if (this.state !== 'registering') return Promise.resolve();
    return new Promise((resolve) => this.settled.push(resolve));
  }

  /** Stops refreshing and removes our binding at the registrar (Expires: 0). */
  async stop(): Promise<void> {
    const wasRegistered = this.state === 'registered';
    this.state = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // A REGISTER still in flight is not waited for (a registrar that is down would hold shutdown
    // for 64·T1): its answer finds us stopped and changes nothing.
    if (!wasRegistered || !this.address) return;
    const removed = this.register(0);
    const waited = await Promise.race([removed.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), UNREGISTER_WAIT_MS).unref())]);
    if (!waited) this.options.log.warn({ registrar: this.registrar() }, 'SIP registration: the registrar did not answer our un-REGISTER in time');
    this.connection?.close();
    this.connection = null;
  }

  private registrar(): string {
    const { target } = this.options;
    return `${target.host}:${target.port}${target.transport === 'udp' ? '' : `;transport=${target.transport}`}`;
  }

  private schedule(ms: number): void {
    if (this.state === 'stopped') return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.attempt();
    }, ms);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    const { log } = this.options;
    let outcome: { ok: true; granted: number } | { ok: false; why: string; status?: number };
    try {
      outcome = await this.register(this.expires);
    } catch (error) {
      outcome = { ok: false, why: error instanceof Error ? error.message : String(error) };
    }
    if (this.state === 'stopped') return;
    if (outcome.ok) {
      const wasRegistered = this.state === 'registered';
      this.state = 'registered';
      this.lastError = null;
      this.retryMs = this.options.target.retry * 1000;
      const refreshIn = Math.max(1, outcome.granted / 2) * 1000;
      if (!wasRegistered) log.info({ registrar: this.registrar(), user: this.user, expires: outcome.granted }, 'SIP registration: registered');
      this.schedule(refreshIn);
    } else {
      this.state = 'failing';
      this.lastError = outcome.status ? `${outcome.why} (${outcome.status})` : outcome.why;
      log.warn({ registrar: this.registrar(), user: this.user, status: outcome.status, reason: outcome.why, retry_in_s: this.retryMs / 1000 }, 'SIP registration failed; trying again');
      this.schedule(this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    }
    for (const resolve of this.settled.splice(0)) resolve();
  }

  /** One REGISTER (answering at most one challenge): what the registrar granted, or why not. */
  private async register(expires: number): Promise<{ ok: true; granted: number } | { ok: false; why: string; status?: number }> {
    const { target } = this.options;
    if (!this.address || expires > 0) {
      try {
        this.address = (await lookup(target.host, { family: 4 })).address;
      } catch {
        return { ok: false, why: `the registrar's host ${target.host} could not be resolved` };
      }
    }
    let authorization: Header | null = null;
    let lastNonce: string | null = null;
    for (let round = 0; round < 3; round++) {
      const request = this.request(expires, authorization);
      const response = await this.send(request);
      if (response.status >= 200 && response.status < 300) return { ok: true, granted: expires === 0 ? 0 : this.granted(response, expires) };
      if (response.status === 423 && expires > 0) {
        const min = Number(header(response, 'min-expires'));
        if (!Number.isFinite(min) || min <= expires || min > 86_400) return { ok: false, status: 423, why: 'the registrar wants a longer registration than it says' };
        this.expires = expires = min;
        continue;
      }
      if (response.status === 401 || response.status === 407) {
        const challenge = header(response, response.status === 401 ? 'www-authenticate' : 'proxy-authenticate') ?? '';
        const nonce = /nonce="([^"]*)"/i.exec(challenge)?.[1] ?? null;
        const stale = /stale\s*=\s*"?true/i.test(challenge);
        if (authorization && nonce === lastNonce && !stale) return { ok: false, status: response.status, why: 'the registrar refused our credentials (check the user, auth_user and VOXFLOW_SIP_REGISTER_PASSWORD)' };
        if (!this.options.password) return { ok: false, status: response.status, why: 'the registrar asks for a password: set VOXFLOW_SIP_REGISTER_PASSWORD' };
        const value = answerChallenge(challenge, { method: 'REGISTER', uri: request.uri }, { username: target.authUser, password: this.options.password });
        if (!value) return { ok: false, status: response.status, why: 'the registrar asked for an authentication we do not speak (only digest MD5, qop=auth)' };
        lastNonce = nonce;
        authorization = { name: response.status === 401 ? 'authorization' : 'proxy-authorization', value };
        continue;
      }
      return { ok: false, status: response.status, why: response.status === 408 ? 'no answer from the registrar' : `the registrar answered ${response.status} ${response.reason}`.slice(0, 120) };
    }
    return { ok: false, why: 'the registrar kept challenging us' };
  }

  private request(expires: number, authorization: Header | null): SipRequest {
    const { target, contactHost, listener } = this.options;
    const hostPart = (host: string) => (host.includes(':') ? `[${host}]` : host);
    const domain = `${hostPart(target.host)}${target.port === 5060 ? '' : `:${target.port}`}`;
    const aor = `sip:${target.user}@${domain}`;
    const headers: Header[] = [
      { name: 'via', value: `SIP/2.0/${target.transport.toUpperCase()} ${hostPart(contactHost)}:${listener.port};branch=${newBranch()};rport` },
      { name: 'max-forwards', value: '70' },
      { name: 'from', value: `<${aor}>;tag=${this.fromTag}` },
      { name: 'to', value: `<${aor}>` },
      { name: 'call-id', value: this.callId },
      { name: 'cseq', value: `${this.cseq++} REGISTER` },
      { name: 'contact', value: this.contact() },
      { name: 'expires', value: String(expires) },
      { name: 'user-agent', value: 'voxflow' },
      ...(authorization ? [authorization] : []),
    ];
    return { kind: 'request', method: 'REGISTER', uri: `sip:${domain}`, headers, body: Buffer.alloc(0) };
  }

  private contact(): string {
    const { target, contactHost, listener } = this.options;
    const host = contactHost.includes(':') ? `[${contactHost}]` : contactHost;
    return `<sip:${target.user}@${host}:${listener.port}${target.transport === 'udp' ? '' : `;transport=${target.transport}`}>`;
  }

  private async send(request: SipRequest): Promise<SipResponse> {
    const address = this.address!;
    const { target, layer, listener, connect } = this.options;
    if (target.transport === 'udp' || !connect) return layer.sendRequest(request, () => listener.sendTo(request, address, target.port), false);
    if (!this.connection?.open) {
      this.connection?.close();
      this.connection = null;
      const connection = await connect(address, target.port, () => {
        if (this.connection !== connection) return;
        this.connection = null;
        // The registrar's way back to us is gone with it: registered again over a new one, soon.
        if (this.state === 'registered') {
          this.options.log.warn({ registrar: this.registrar(), user: this.user }, 'SIP registration: the connection to the registrar closed; registering again');
          this.schedule(1_000);
        }
      });
      if (this.state === 'stopped' && request.headers.some((h) => h.name === 'expires' && h.value !== '0')) {
        connection.close();
        throw new Error('stopped');
      }
      this.connection = connection;
    }
    const connection = this.connection;
    return layer.sendRequest(request, () => connection.peer.send(request), true);
  }

  /** The lifetime the registrar gave our Contact: its expires parameter, else Expires, else what we asked. */
  private granted(response: SipResponse, asked: number): number {
    const ours = this.contact();
    for (const h of response.headers.filter((x) => x.name === 'contact')) {
      for (const value of h.value.split(/,(?![^<]*>)/)) {
        const contact = parseNameAddr(value);
        if (contact && `<${contact.uri}>` === ours && contact.params.expires && /^\d+$/.test(contact.params.expires)) return Math.max(1, Number(contact.params.expires));
      }
    }
    const expires = header(response, 'expires');
    return expires && /^\d+$/.test(expires) ? Math.max(1, Number(expires)) : asked;
  }
}
