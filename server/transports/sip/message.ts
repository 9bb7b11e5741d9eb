// One strict SIP message parser (RFC 3261 §7, §20, §25) for everything the endpoint reads, over UDP
// and TCP alike, and the serialiser for what it sends. It never throws: a message it cannot use
// comes back as a refusal that says why and whether the sender can be told (a request whose Via,
// From, To, Call-ID and CSeq could be read gets a 400; anything else is dropped).
//
// Why written here rather than taken from npm (judged from the registry's metadata):
// - `sip` (0.0.6, kirm/sip.js): a whole stack in one file, unmaintained for years; its parser is
//   lenient (regular expressions over the raw text) and throws on input it does not expect, and
//   it has neither size nor header-count limits: a datagram from anyone on the internet must not
//   be able to throw on the thread that paces audio.
// - `drachtio-srf` (5.x): a client of the drachtio C++ SIP server, which would have to be built,
//   deployed and run beside Voxflow; the parsing and transactions happen there, not in Node.
// - `sip.js` (0.21) and `jssip` (3.13): user agents for browsers, SIP over WebSocket (RFC 7118)
//   only; neither listens on UDP or TCP nor acts as a UAS for a PBX's trunk.
// What a UAS for a PBX or a trunk needs of the grammar is small (start line, headers with their
// compact forms, Via, name-addr, CSeq, Content-Length) and is all here, with the limits a public
// port needs. Should a fuller stack ever be wanted, drachtio (as a separate SIP server) would be
// the one to use.

/** A message larger than this is refused (an INVITE with SDP is 1-2 KB). */
export const MAX_MESSAGE_BYTES = 16 * 1024;
/** Header fields a message may carry, folded lines counting once. */
export const MAX_HEADERS = 64;
/** A body this large is refused even when the message's size allows it. */
const MAX_BODY_BYTES = 12 * 1024;

/** The long names of the compact forms (RFC 3261 §7.3.3, and Event, Refer-To, Referred-By, Allow-Events). */
const COMPACT: Record<string, string> = {
  i: 'call-id',
  f: 'from',
  t: 'to',
  v: 'via',
  m: 'contact',
  l: 'content-length',
  c: 'content-type',
  k: 'supported',
  e: 'content-encoding',
  s: 'subject',
  o: 'event',
  r: 'refer-to',
  b: 'referred-by',
  u: 'allow-events',
};

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const METHOD = /^[A-Z][A-Z0-9\-.!%*_+`'~]{0,31}$/;

export interface Header {
  /** Lower case, compact forms expanded. */
  name: string;
  value: string;
}

interface MessageBase {
  headers: Header[];
  body: Buffer;
}

export interface SipRequest extends MessageBase {
  kind: 'request';
  method: string;
  uri: string;
}

export interface SipResponse extends MessageBase {
  kind: 'response';
  status: number;
  reason: string;
}

export type SipMessage = SipRequest | SipResponse;

export type ParseResult =
  | { ok: true; message: SipMessage }
  /**
   * `request` is set when enough of a request was read to answer it with 400 (its Via, From, To,
   * Call-ID and CSeq), null otherwise: then it is dropped without a word.
   */
  | { ok: false; reason: string; request: SipRequest | null };

export interface ParseOptions {
  /** TCP: the framing already cut the message at its Content-Length, which must be present. */
  stream?: boolean;
}

/** Reads one SIP message. Never throws. */
export function parseMessage(data: Buffer, options: ParseOptions = {}): ParseResult {
  try {
    return parse(data, options);
  } catch (error) {
    // Nothing above throws by design; this is the promise kept should that ever be wrong.
    return { ok: false, reason: `unreadable message (${error instanceof Error ? error.message : String(error)})`, request: null };
  }
}

function parse(data: Buffer, options: ParseOptions): ParseResult {
  if (data.length > MAX_MESSAGE_BYTES) return { ok: false, reason: `message over ${MAX_MESSAGE_BYTES} bytes`, request: null };
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return { ok: false, reason: 'no end of headers (truncated)', request: null };
  const head = data.subarray(0, end);
  // The start line and headers are UTF-8 text (RFC 3261 §7.3.1); a NUL has no place in them.
  if (head.includes(0)) return { ok: false, reason: 'a NUL byte in the headers', request: null };
  const text = head.toString('utf8');
  const lines = text.split('\r\n');
  const startLine = lines.shift()!;
  const fields: Header[] = [];
  for (const line of lines) {
    if (line.length === 0) return { ok: false, reason: 'an empty header line', request: null };
    if (line[0] === ' ' || line[0] === '\t') {
      // A folded line continues the previous header (LWS).
      const previous = fields.at(-1);
      if (!previous) return { ok: false, reason: 'a continuation line with no header before it', request: null };
      previous.value = `${previous.value} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) return { ok: false, reason: 'a header line without a name', request: null };
    const rawName = line.slice(0, colon).trim();
    if (!TOKEN.test(rawName)) return { ok: false, reason: 'a header name with characters a token may not hold', request: null };
    const lower = rawName.toLowerCase();
    fields.push({ name: COMPACT[lower] ?? lower, value: line.slice(colon + 1).trim() });
    if (fields.length > MAX_HEADERS) return { ok: false, reason: `more than ${MAX_HEADERS} headers`, request: null };
  }
  const rawBody = data.subarray(end + 4);

  let message: SipMessage;
  if (startLine.startsWith('SIP/')) {
    const match = /^SIP\/2\.0 ([1-6]\d\d) ([^\r\n]*)$/.exec(startLine);
    if (!match) return { ok: false, reason: 'a malformed status line', request: null };
    message = { kind: 'response', status: Number(match[1]), reason: match[2]!, headers: fields, body: rawBody };
  } else {
    const parts = startLine.split(' ');
    if (parts.length !== 3 || parts[2] !== 'SIP/2.0') return { ok: false, reason: 'a malformed request line', request: null };
    const [method, uri] = parts as [string, string];
    if (!METHOD.test(method)) return { ok: false, reason: 'a malformed method', request: null };
    if (!/^(sips?|tel):[^\s<>"]{1,512}$/i.test(uri)) return { ok: false, reason: 'a Request-URI that is not sip:, sips: or tel:', request: null };
    message = { kind: 'request', method, uri, headers: fields, body: rawBody };
  }

  // From here on a request can be answered, if the headers a response copies are sound.
  const answerable = message.kind === 'request' && canAnswer(message) ? message : null;
  const refuse = (reason: string): ParseResult => ({ ok: false, reason, request: answerable });

  for (const name of ['via', 'from', 'to', 'call-id', 'cseq']) {
    if (!header(message, name)) return refuse(`no ${name} header`);
  }
  for (const name of ['from', 'to', 'call-id', 'cseq', 'content-length', 'content-type', 'max-forwards']) {
    if (message.headers.filter((h) => h.name === name).length > 1) return refuse(`more than one ${name} header`);
  }
  const cseq = parseCSeq(header(message, 'cseq')!);
  if (!cseq) return refuse('a malformed CSeq');
  if (message.kind === 'request' && cseq.method !== message.method) return refuse('the CSeq method is not the request method');
  if (!parseVia(header(message, 'via')!)) return refuse('a malformed Via');
  if (!parseNameAddr(header(message, 'from')!) || !parseNameAddr(header(message, 'to')!)) return refuse('a malformed From or To');
  if (!/^[\x21-\x7e]{1,256}$/.test(header(message, 'call-id')!)) return refuse('a malformed Call-ID');
  const maxForwards = header(message, 'max-forwards');
  if (maxForwards !== undefined && !/^\d{1,3}$/.test(maxForwards)) return refuse('a malformed Max-Forwards');

  const lengthText = header(message, 'content-length');
  if (lengthText === undefined) {
    if (options.stream) return refuse('no Content-Length over a stream transport');
  } else {
    if (!/^\d{1,9}$/.test(lengthText)) return refuse('a malformed Content-Length');
    const length = Number(lengthText);
    if (length > rawBody.length) return refuse('a Content-Length longer than the body (truncated)');
    // Over UDP, bytes past the Content-Length are discarded (RFC 3261 §18.3).
    message.body = rawBody.subarray(0, length);
  }
  if (message.body.length > MAX_BODY_BYTES) return refuse(`a body over ${MAX_BODY_BYTES} bytes`);
  return { ok: true, message };
}

/** A request's answerable parts are sound: a 400 can be addressed and matched by the sender. */
function canAnswer(request: SipRequest): boolean {
  const via = header(request, 'via');
  const from = header(request, 'from');
  const to = header(request, 'to');
  const callId = header(request, 'call-id');
  const cseq = header(request, 'cseq');
  return Boolean(via && parseVia(via) && from && to && callId && /^[\x21-\x7e]{1,256}$/.test(callId) && cseq && parseCSeq(cseq)) && request.method !== 'ACK';
}

/** The first value of a header, or undefined. */
export function header(message: { headers: Header[] }, name: string): string | undefined {
  return message.headers.find((h) => h.name === name)?.value;
}

/** Every value of a header, comma-separated values split (for Via, Record-Route, Route). */
export function headerList(message: { headers: Header[] }, name: string): string[] {
  return message.headers.filter((h) => h.name === name).flatMap((h) => splitComma(h.value));
}

/** Splits on commas outside quotes and angle brackets. */
export function splitComma(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '"' && value[i - 1] !== '\\') quoted = !quoted;
    else if (!quoted && c === '<') depth++;
    else if (!quoted && c === '>') depth = Math.max(0, depth - 1);
    else if (!quoted && depth === 0 && c === ',') {
      out.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(value.slice(start).trim());
  return out.filter((v) => v.length > 0);
}

export interface CSeq {
  seq: number;
  method: string;
}

export function parseCSeq(value: string): CSeq | null {
  const match = /^(\d{1,10})\s+([A-Z][A-Z0-9\-.!%*_+`'~]{0,31})$/.exec(value.trim());
  if (!match) return null;
  const seq = Number(match[1]);
  return seq < 2 ** 31 ? { seq, method: match[2]! } : null;
}

export interface Via {
  transport: string;
  host: string;
  port: number | null;
  params: Record<string, string>;
}

/** The top Via of a Via header value. */
export function parseVia(value: string): Via | null {
  const first = splitComma(value)[0];
  if (!first) return null;
  const match = /^SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z]{2,10})\s+(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-]+)(?::(\d{1,5}))?\s*((?:;[^;]*)*)$/.exec(first);
  if (!match) return null;
  const params = parseParams(match[4] ?? '');
  if (!params) return null;
  const port = match[3] ? Number(match[3]) : null;
  if (port !== null && (port < 1 || port > 65535)) return null;
  return { transport: match[1]!.toUpperCase(), host: match[2]!, port, params };
}

function parseParams(text: string): Record<string, string> | null {
  const params: Record<string, string> = {};
  for (const part of text.split(';').slice(1)) {
    const [rawName, ...rest] = part.split('=');
    const name = rawName!.trim().toLowerCase();
    if (!TOKEN.test(name)) return null;
    params[name] = rest.join('=').trim().replace(/^"(.*)"$/, '$1');
  }
  return params;
}

export interface NameAddr {
  display: string;
  uri: string;
  params: Record<string, string>;
}

/** A From, To, Contact, Refer-To or Route value: `"Name" <sip:…>;tag=…` or a bare URI with params. */
export function parseNameAddr(value: string): NameAddr | null {
  const text = value.trim();
  const open = text.indexOf('<');
  if (open >= 0) {
    const close = text.indexOf('>', open);
    if (close < 0) return null;
    const uri = text.slice(open + 1, close).trim();
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>]+$/.test(uri)) return null;
    const params = parseParams(text.slice(close + 1).trim());
    if (!params) return null;
    return { display: text.slice(0, open).trim().replace(/^"(.*)"$/, '$1'), uri, params };
  }
  // Without angle brackets the URI ends at the first semicolon: what follows are header params.
  const semicolon = text.indexOf(';');
  const uri = semicolon < 0 ? text : text.slice(0, semicolon);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>;,?]+$/.test(uri)) return null;
  const params = parseParams(semicolon < 0 ? '' : text.slice(semicolon));
  if (!params) return null;
  return { display: '', uri, params };
}

export interface SipUri {
  scheme: 'sip' | 'sips' | 'tel';
  user: string | null;
  host: string;
  port: number | null;
  params: Record<string, string>;
}

/** The parts of a sip:, sips: or tel: URI; null when it is none of those or malformed. */
export function parseUri(uri: string): SipUri | null {
  const tel = /^tel:([^;]+)((?:;[^;]*)*)$/i.exec(uri);
  if (tel) {
    const params = parseParams(tel[2] ?? '');
    return params ? { scheme: 'tel', user: decodeUser(tel[1]!), host: '', port: null, params } : null;
  }
  const match = /^(sips?):(?:([^@;?]+)@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-]+)(?::(\d{1,5}))?((?:;[^;?]*)*)(?:\?.*)?$/i.exec(uri);
  if (!match) return null;
  const params = parseParams(match[5] ?? '');
  if (!params) return null;
  const userInfo = match[2] ?? null;
  const user = userInfo === null ? null : decodeUser(userInfo.split(':')[0]!);
  if (user === null && userInfo !== null) return null;
  const port = match[4] ? Number(match[4]) : null;
  if (port !== null && (port < 1 || port > 65535)) return null;
  return { scheme: match[1]!.toLowerCase() as 'sip' | 'sips', user, host: match[3]!, port, params };
}

function decodeUser(user: string): string | null {
  try {
    return decodeURIComponent(user);
  } catch {
    return null;
  }
}

const REASONS: Record<number, string> = {
  100: 'Trying',
  180: 'Ringing',
  200: 'OK',
  202: 'Accepted',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  415: 'Unsupported Media Type',
  420: 'Bad Extension',
  480: 'Temporarily Unavailable',
  481: 'Call/Transaction Does Not Exist',
  482: 'Loop Detected',
  483: 'Too Many Hops',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  491: 'Request Pending',
  489: 'Bad Event',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? (status < 200 ? 'Session Progress' : status < 300 ? 'OK' : 'Error');
}

/** Header names as they are written (the canonical capitalisation peers expect in logs and traces). */
function writtenName(name: string): string {
  const special: Record<string, string> = { 'call-id': 'Call-ID', cseq: 'CSeq', 'www-authenticate': 'WWW-Authenticate' };
  return special[name] ?? name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

/** A header value must not break the message it goes into. */
function clean(value: string): string {
  return value.replace(/[\r\n\0]+/g, ' ');
}

export function serialize(message: SipMessage): Buffer {
  const start = message.kind === 'request' ? `${message.method} ${message.uri} SIP/2.0` : `SIP/2.0 ${message.status} ${clean(message.reason)}`;
  const lines = [start];
  for (const h of message.headers) {
    if (h.name === 'content-length') continue;
    lines.push(`${writtenName(h.name)}: ${clean(h.value)}`);
  }
  lines.push(`Content-Length: ${message.body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'utf8'), message.body]);
}

/**
 * A response to `request` (RFC 3261 §8.2.6): its Via, From, Call-ID and CSeq copied, its To with
 * `toTag` added when it has none.
 */
export function responseTo(request: SipRequest, status: number, options: { toTag?: string; headers?: Header[]; body?: Buffer; reason?: string } = {}): SipResponse {
  const headers: Header[] = [];
  for (const via of request.headers.filter((h) => h.name === 'via')) headers.push({ name: 'via', value: via.value });
  headers.push({ name: 'from', value: header(request, 'from')! });
  const to = header(request, 'to')!;
  const hasTag = parseNameAddr(to)?.params.tag;
  headers.push({ name: 'to', value: !hasTag && options.toTag && status > 100 ? `${to};tag=${options.toTag}` : to });
  headers.push({ name: 'call-id', value: header(request, 'call-id')! });
  headers.push({ name: 'cseq', value: header(request, 'cseq')! });
  headers.push(...(options.headers ?? []));
  return { kind: 'response', status, reason: options.reason ?? reasonPhrase(status), headers, body: options.body ?? Buffer.alloc(0) };
}

/** What the endpoint supports, said in answers so a peer knows what it may send. */
export function capabilities(): Header[] {
  return [
    { name: 'allow', value: 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, NOTIFY' },
    { name: 'accept', value: 'application/sdp, application/dtmf-relay, message/sipfrag' },
  ];
}

/** The tag parameter of a From or To value. */
export function tagOf(value: string | undefined): string | null {
  return value ? parseNameAddr(value)?.params.tag || null : null;
}
