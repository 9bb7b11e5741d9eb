// Each carrier's REST API on loopback: the endpoints CarrierCalls uses (hang-up, transfer,
// outbound calls, keypad tones), with the carrier's authentication and error bodies. It records
// every request, fails (5xx) or hangs on demand, and plays a placed call's progress back to us as
// the carrier would: the signed answer-URL fetch, status callbacks, answering-machine verdicts.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CarrierName } from '../../../server/transports/carriers/carrier.ts';
import { faultFor, listen, pause, readBody, record, sendJson, type CountedFault, type RecordedRequest } from '../fake-http.ts';
import { sendVoiceWebhook, type SentWebhook, type WebhookSigner } from './voice-webhook.ts';

export type FakeCarrierAuth =
  | { carrier: 'twilio'; accountSid: string; authToken: string }
  | { carrier: 'telnyx'; apiKey: string; accountSid: string }
  | { carrier: 'plivo'; authId: string; authToken: string };

/** Who picks up a placed call. */
export type Callee = 'human' | 'machine' | 'fax';

/** The AnsweredBy a detector that waits for the greeting's end reports for each. */
const ANSWERED_BY: Record<Callee, string> = { human: 'human', machine: 'machine_end_beep', fax: 'fax' };

export interface FakeCall {
  callId: string;
  from: string;
  to: string;
  status: 'queued' | 'in-progress' | 'completed';
  answerUrl?: string;
  statusUrl?: string;
  machineDetection?: boolean;
  /** Plivo: where its asynchronous detector posts its verdict (Machine=true|false). */
  machineDetectionUrl?: string;
  /** An inbound call's status callbacks say so; a placed call's say outbound. */
  direction?: 'inbound' | 'outbound';
  /** Plivo names a placed call by its request_uuid first. */
  requestUuid?: string;
  /** Markup that replaced the call's (a transfer), or the URL it was pointed at (Plivo). */
  redirectedTo?: string;
  /** Plivo: what the URL a transfer pointed the call at answered, fetched as Plivo does (signed). */
  transferFetched?: SentWebhook;
  digitsSent: string[];
}

export interface FakeCarrierApi {
  baseUrl: string;
  requests: RecordedRequest[];
  calls: Map<string, FakeCall>;
  /** Requests from now on misbehave (the first `times` of them when set). */
  setFault(fault: CountedFault | undefined): void;
  /** The call the carrier placed to this number last (a warm transfer's person leg). */
  placedCallTo(number: string): FakeCall | undefined;
  /**
   * Runs once the call's markup is replaced (a transfer): the carrier ends the call's media
   * stream then, as the call leaves its <Connect><Stream>.
   */
  whenRedirected(callId: string, listener: (call: FakeCall) => void): void;
  /** A call the carrier is carrying (an inbound call, as its webhook announced it). */
  addLiveCall(callId: string, call?: Partial<FakeCall>): FakeCall;
  /**
   * The carrier fetches the placed call's answer URL once it is answered; returns our markup. A
   * call placed with machine detection (Twilio's and Telnyx's synchronous DetectMessageEnd) is
   * fetched once the detector is done, after the greeting, with its verdict in AnsweredBy:
   * `answeredBy` says who picked up (a person by default). `through` is the network between: it
   * maps the public URL to the address the request is delivered to (a load balancer's choice of
   * node); the signature still covers the public URL.
   */
  answerPlacedCall(callId: string, signer: WebhookSigner, options?: { answeredBy?: Callee; through?: (url: string) => string }): Promise<SentWebhook>;
  /** Posts a signed status callback (or AMD verdict) for a call to its status URL (`through`: as above). */
  sendStatus(callId: string, signer: WebhookSigner, status: 'ringing' | 'answered' | 'completed' | 'busy' | 'no-answer' | 'failed' | { answeredBy: 'human' | 'machine_end_beep' | 'machine_start' }, through?: (url: string) => string): Promise<SentWebhook>;
  close(): Promise<void>;
}

export async function startFakeCarrierApi(auth: FakeCarrierAuth): Promise<FakeCarrierApi> {
  const requests: RecordedRequest[] = [];
  const calls = new Map<string, FakeCall>();
  let fault: CountedFault | undefined;
  let faulted = 0;
  const redirectListeners = new Map<string, (call: FakeCall) => void>();
  const redirected = (call: FakeCall) => {
    const listener = redirectListeners.get(call.callId);
    redirectListeners.delete(call.callId);
    // After the REST answer has gone, as the carrier acts on the update once it accepted it.
    if (listener) setImmediate(() => listener(call));
  };

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = (await readBody(req)).toString('utf8');
    const body = parseBody(req.headers['content-type'], raw);
    const recorded = record(req, res, body, requests);
    const active = faultFor(fault, ++faulted);
    if (active?.hangMs !== undefined) {
      await pause(active.hangMs, res);
      if (!res.destroyed) res.destroy();
      return;
    }
    if (active?.status) return errorReply(auth.carrier, res, active.status, 'Service unavailable');
    if (!authorized(auth, req.headers.authorization)) return errorReply(auth.carrier, res, 401, 'Authentication failed');
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, string>;
    route(auth, req.method ?? 'GET', recorded.path, fields, calls, res, redirected);
  };

  /** A placed call by the id the placing answered (Plivo's request_uuid) or by its call id. */
  const placed = (id: string) => calls.get(id) ?? [...calls.values()].find((call) => call.callId === id);

  const listening = await listen(handler);
  const baseUrl = `http://127.0.0.1:${listening.port}`;

  return {
    baseUrl,
    requests,
    calls,
    setFault(next) {
      fault = next;
      faulted = 0;
    },
    placedCallTo(number) {
      return [...calls.values()].filter((call) => call.to === number && call.answerUrl).at(-1);
    },
    whenRedirected(callId, listener) {
      redirectListeners.set(callId, listener);
    },
    addLiveCall(callId, call = {}) {
      const live: FakeCall = { callId, from: '+15550100001', to: '+15550100002', status: 'in-progress', direction: 'inbound', digitsSent: [], ...call };
      calls.set(callId, live);
      return live;
    },
    async answerPlacedCall(callId, signer, options = {}) {
      const call = placed(callId);
      if (!call?.answerUrl) throw new Error(`no placed call ${callId}`);
      call.status = 'in-progress';
      const params = progressParams(auth.carrier, call, 'in-progress');
      if (call.machineDetection && auth.carrier !== 'plivo') Object.assign(params, { AnsweredBy: ANSWERED_BY[options.answeredBy ?? 'human'], MachineDetectionDuration: '3120' });
      const through = options.through ?? ((url: string) => url);
      return sendVoiceWebhook(signer, call.answerUrl, params, through(call.answerUrl));
    },
    async sendStatus(callId, signer, status, through = (url) => url) {
      const call = placed(callId);
      if (!call?.statusUrl) throw new Error(`no placed call ${callId}`);
      if (typeof status === 'object') {
        if (auth.carrier === 'plivo') {
          // Plivo's asynchronous detector posts to machine_detection_url, while the call runs.
          const url = call.machineDetectionUrl ?? call.statusUrl;
          const params = { CallUUID: call.callId, RequestUUID: call.requestUuid ?? '', Machine: status.answeredBy === 'human' ? 'false' : 'true', From: call.from, To: call.to, Direction: 'outbound' };
          return sendVoiceWebhook(signer, url, params, through(url));
        }
        const params = { ...progressParams(auth.carrier, call, 'in-progress'), AnsweredBy: status.answeredBy, MachineDetectionDuration: '2310' };
        return sendVoiceWebhook(signer, call.statusUrl, params, through(call.statusUrl));
      }
      const wire = status === 'answered' ? 'in-progress' : status;
      if (wire === 'completed' || wire === 'busy' || wire === 'no-answer' || wire === 'failed') call.status = 'completed';
      return sendVoiceWebhook(signer, call.statusUrl, progressParams(auth.carrier, call, auth.carrier === 'plivo' && wire === 'no-answer' ? 'timeout' : wire), through(call.statusUrl));
    },
    close: listening.close,
  };
}

function parseBody(contentType: string | undefined, raw: string): unknown {
  if (raw.length === 0) return {};
  if (contentType?.startsWith('application/json')) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw;
    }
  }
  if (contentType?.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  return raw;
}

function authorized(auth: FakeCarrierAuth, header: string | undefined): boolean {
  if (auth.carrier === 'telnyx') return header === `Bearer ${auth.apiKey}`;
  const [user, password] = auth.carrier === 'twilio' ? [auth.accountSid, auth.authToken] : [auth.authId, auth.authToken];
  return header === `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** Each carrier's error body. */
function errorReply(carrier: CarrierName, res: ServerResponse, status: number, message: string): void {
  if (carrier === 'twilio') return sendJson(res, status, { code: status === 404 ? 20404 : status === 401 ? 20003 : 20500, message, more_info: 'https://www.twilio.com/docs/errors', status });
  if (carrier === 'telnyx') return sendJson(res, status, { errors: [{ code: String(status === 401 ? 10009 : status === 404 ? 10005 : 10007), title: message, detail: message }] });
  return sendJson(res, status, { api_id: randomUUID(), error: message });
}

function route(auth: FakeCarrierAuth, method: string, path: string, fields: Record<string, string>, calls: Map<string, FakeCall>, res: ServerResponse, redirected: (call: FakeCall) => void): void {
  const liveCall = (id: string) => {
    const wanted = decodeURIComponent(id);
    // A placed Plivo call is kept by its request_uuid; once answered, its CallUUID names it.
    const call = calls.get(wanted) ?? [...calls.values()].find((c) => c.callId === wanted);
    return call && call.status !== 'completed' ? call : undefined;
  };
  if (auth.carrier === 'twilio') {
    const prefix = `/2010-04-01/Accounts/${auth.accountSid}/Calls`;
    if (method === 'POST' && path === `${prefix}.json`) {
      if (!fields.To || !fields.From || !(fields.Url || fields.Twiml)) return errorReply('twilio', res, 400, 'To, From and Url or Twiml are required');
      const call: FakeCall = { callId: `CA${randomUUID().replace(/-/g, '')}`, from: fields.From, to: fields.To, status: 'queued', answerUrl: fields.Url, statusUrl: fields.StatusCallback, machineDetection: fields.MachineDetection !== undefined, digitsSent: [] };
      calls.set(call.callId, call);
      return sendJson(res, 201, { sid: call.callId, status: 'queued', from: call.from, to: call.to, account_sid: auth.accountSid });
    }
    const update = new RegExp(`^${prefix}/([^/]+)\\.json$`).exec(path);
    if (method === 'POST' && update) {
      const call = liveCall(update[1]!);
      if (!call) return errorReply('twilio', res, 404, 'The requested resource was not found');
      if (fields.Status === 'completed') call.status = 'completed';
      else if (fields.Twiml) {
        call.redirectedTo = fields.Twiml;
        redirected(call);
      } else return errorReply('twilio', res, 400, 'Status or Twiml is required');
      return sendJson(res, 200, { sid: call.callId, status: call.status });
    }
  } else if (auth.carrier === 'telnyx') {
    const prefix = `/v2/texml/Accounts/${auth.accountSid}/Calls`;
    if (method === 'POST' && path === prefix) {
      if (!fields.ApplicationSid || !fields.To || !fields.From) return errorReply('telnyx', res, 422, 'ApplicationSid, To and From are required');
      const call: FakeCall = { callId: `v3:${randomUUID()}`, from: fields.From, to: fields.To, status: 'queued', answerUrl: fields.Url, statusUrl: fields.StatusCallback, machineDetection: fields.MachineDetection !== undefined, digitsSent: [] };
      calls.set(call.callId, call);
      return sendJson(res, 200, { from: call.from, to: call.to, status: 'queued', call_sid: call.callId });
    }
    const update = new RegExp(`^${prefix}/([^/]+)$`).exec(path);
    if (method === 'POST' && update) {
      const call = liveCall(update[1]!);
      if (!call) return errorReply('telnyx', res, 404, 'Resource not found');
      if (fields.Status === 'completed') call.status = 'completed';
      else if (fields.Texml) {
        call.redirectedTo = fields.Texml;
        redirected(call);
      } else return errorReply('telnyx', res, 422, 'Status, Url or Texml is required');
      return sendJson(res, 200, { account_sid: auth.accountSid, sid: call.callId, status: call.status });
    }
    const dtmf = /^\/v2\/calls\/([^/]+)\/actions\/send_dtmf$/.exec(path);
    if (method === 'POST' && dtmf) {
      const call = liveCall(dtmf[1]!);
      if (!call) return errorReply('telnyx', res, 422, 'Call has already ended');
      call.digitsSent.push(fields.digits ?? '');
      return sendJson(res, 200, { data: { result: 'ok' } });
    }
  } else {
    const prefix = `/v1/Account/${auth.authId}/Call/`;
    if (method === 'POST' && path === prefix) {
      if (!fields.from || !fields.to || !fields.answer_url) return errorReply('plivo', res, 400, 'from, to and answer_url are required');
      const requestUuid = randomUUID();
      const call: FakeCall = { callId: randomUUID(), requestUuid, from: fields.from, to: fields.to, status: 'queued', answerUrl: fields.answer_url, statusUrl: fields.hangup_url, machineDetection: fields.machine_detection !== undefined, ...(fields.machine_detection_url ? { machineDetectionUrl: fields.machine_detection_url } : {}), digitsSent: [] };
      calls.set(requestUuid, call);
      return sendJson(res, 201, { api_id: randomUUID(), message: 'call fired', request_uuid: requestUuid });
    }
    const dtmf = new RegExp(`^${prefix}([^/]+)/DTMF/$`).exec(path);
    if (method === 'POST' && dtmf) {
      const call = liveCall(dtmf[1]!);
      if (!call) return errorReply('plivo', res, 404, 'not found');
      call.digitsSent.push(fields.digits ?? '');
      return sendJson(res, 202, { api_id: randomUUID(), message: 'digits sent' });
    }
    // A call not answered yet is cancelled by its request_uuid (the id the placing answered).
    const request = new RegExp(`^/v1/Account/${auth.authId}/Request/([^/]+)/$`).exec(path);
    if (method === 'DELETE' && request) {
      const call = calls.get(decodeURIComponent(request[1]!));
      if (!call?.requestUuid || call.status !== 'queued') return errorReply('plivo', res, 404, 'not found');
      call.status = 'completed';
      res.writeHead(204).end();
      return;
    }
    const one = new RegExp(`^${prefix}([^/]+)/$`).exec(path);
    if (one) {
      // A live call is named by its CallUUID only: its request_uuid names the request, not the call.
      const wanted = decodeURIComponent(one[1]!);
      const call = [...calls.values()].find((c) => c.callId === wanted && c.status !== 'completed');
      if (!call) return errorReply('plivo', res, 404, 'not found');
      if (method === 'DELETE') {
        call.status = 'completed';
        res.writeHead(204).end();
        return;
      }
      if (method === 'POST' && fields.aleg_url) {
        call.redirectedTo = fields.aleg_url;
        redirected(call);
        sendJson(res, 202, { api_id: randomUUID(), message: 'call transferred' });
        // Then Plivo fetches the new XML from that URL, signed as every request it sends (here
        // only from a server on this machine: a test's made-up address is not fetched).
        if (!/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(fields.aleg_url)) return;
        const params = { CallUUID: call.callId, CallStatus: 'in-progress', Direction: 'inbound', Event: 'Transfer', From: call.from, To: call.to };
        sendVoiceWebhook({ carrier: 'plivo', authToken: auth.authToken }, fields.aleg_url, params).then(
          (fetched) => (call.transferFetched = fetched),
          (error: unknown) => (call.transferFetched = { status: 0, contentType: '', body: String(error) }),
        );
        return;
      }
    }
  }
  errorReply(auth.carrier, res, 404, `no ${method} ${path}`);
}

/** A placed call's progress as the carrier posts it. */
function progressParams(carrier: CarrierName, call: FakeCall, status: string): Record<string, string> {
  const inbound = call.direction === 'inbound';
  if (carrier === 'plivo') return { CallUUID: call.callId, RequestUUID: call.requestUuid ?? '', CallStatus: status, Direction: inbound ? 'inbound' : 'outbound', From: call.from, To: call.to };
  return { CallSid: call.callId, CallStatus: status, Direction: inbound ? 'inbound' : carrier === 'twilio' ? 'outbound-api' : 'outbound', From: call.from, To: call.to, AccountSid: 'AC00000000000000000000000000000000' };
}
