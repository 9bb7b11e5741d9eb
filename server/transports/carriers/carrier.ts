// One shape for every phone carrier. A carrier is a few pure pieces (its webhook's signature and
// fields, the markup that answers a call, the media-stream messages both ways) plus its REST calls
// (hang-up, transfer, outbound); the routes, the session and the engine use only this shape and
// never learn which carrier a call came through.
import type { G711Law } from '../../audio/g711.ts';

export type CarrierName = 'twilio' | 'telnyx' | 'plivo';

// ── The voice webhook ───────────────────────────────────────────────────────────────────────

/** A request as the route received it: the URL the carrier called (scheme, host and query). */
export interface WebhookRequest {
  /** The full public URL the carrier requested, exactly as configured in its console. */
  url: string;
  /** Header names in lower case, as Node gives them. */
  headers: Record<string, string | string[] | undefined>;
  /** The body as received (the signatures cover bytes, not a re-encoding). */
  rawBody: string;
  /** The form fields of the body (and nothing from the query), for the carriers that sign them. */
  params: Record<string, string>;
}

export type WebhookVerdict = { ok: true } | { ok: false; reason: string };

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
}

export interface TelnyxCredentials {
  /** API v2 key, sent as a bearer token. */
  apiKey: string;
  /** The account's ed25519 public key (base64, from the portal) that checks webhook signatures. */
  publicKey: string;
  /** TeXML: the account id in /texml/Accounts/{id} and the application that places calls. */
  accountSid?: string;
  applicationSid?: string;
}

export interface PlivoCredentials {
  authId: string;
  authToken: string;
}

export interface CredentialsByCarrier {
  twilio: TwilioCredentials;
  telnyx: TelnyxCredentials;
  plivo: PlivoCredentials;
}

/** What every carrier's progress means to a session (the names `call.status` webhooks use). */
export type CallStatus = 'queued' | 'ringing' | 'answered' | 'busy' | 'no_answer' | 'failed' | 'completed';

/** An answering-machine verdict; `machine_end` means the greeting is over and a message can start. */
export type AnsweredBy = 'human' | 'machine' | 'machine_end' | 'fax' | 'unknown';

export interface VoiceWebhook {
  callId: string;
  from: string;
  to: string;
  direction: 'inbound' | 'outbound';
  status: CallStatus;
  answeredBy?: AnsweredBy;
  /**
   * The id placeCall returned, where the carrier names the call differently once it exists
   * (Plivo: RequestUUID; its CallUUID is `callId`).
   */
  placementId?: string;
}

export type ParsedWebhook = { ok: true; call: VoiceWebhook } | { ok: false; reason: string };

// ── Markup that answers a call ──────────────────────────────────────────────────────────────

export interface Markup {
  contentType: string;
  body: string;
}

// ── The media stream ────────────────────────────────────────────────────────────────────────

export type StreamMessage =
  | { type: 'connected' }
  | {
      type: 'start';
      streamId: string;
      callId: string;
      /** What our markup asked the carrier to hand back (the stream token among them). */
      customParameters: Record<string, string>;
      encoding: G711Law;
      sampleRate: number;
    }
  | { type: 'media'; payload: Uint8Array; sequence?: number; timestamp?: number; track?: string }
  | { type: 'dtmf'; digit: string }
  /** Audio sent before the mark of this name has played (or was cleared). */
  | { type: 'mark'; name: string }
  | { type: 'stop' }
  | { type: 'malformed'; reason: string }
  /** A message the carrier documents that a call does not need (e.g. Plivo's clearedAudio). */
  | { type: 'ignored'; event: string };

// ── REST calls ──────────────────────────────────────────────────────────────────────────────

export interface RestOptions {
  /** The carrier's API root; the fakes' loopback address in tests. */
  baseUrl?: string;
  signal: AbortSignal;
  /** Per attempt; 10 s by default. */
  timeoutMs?: number;
  /** Retries after the first attempt on 5xx, timeouts and resets; 2 by default. */
  retries?: number;
  /** First retry waits this long, each later one twice as long; 250 ms by default. */
  backoffMs?: number;
}

export interface PlaceCallRequest {
  from: string;
  to: string;
  /** Where the carrier fetches markup once the call is answered (our voice webhook). */
  answerUrl: string;
  /** Where the carrier posts progress and answering-machine verdicts. */
  statusUrl: string;
  machineDetection: boolean;
}

export interface TransferRequest {
  /** E.164 number or a sip: URI. */
  to: string;
  callerId?: string;
  /**
   * A URL that answers with `transferMarkup` (Plivo moves a live call only by pointing it at a
   * URL; the others take the markup inline).
   */
  markupUrl?: string;
}

export interface CarrierCalls {
  /**
   * Ends the call; a call already over counts as ended. Also a placed call still ringing, by the
   * id placeCall returned (Plivo cancels it by its request_uuid).
   */
  hangUp(callId: string, options: RestOptions): Promise<void>;
  /** Cold transfer: the live call leaves the stream and dials the target. */
  transfer(callId: string, request: TransferRequest, options: RestOptions): Promise<void>;
  placeCall(request: PlaceCallRequest, options: RestOptions): Promise<{ callId: string }>;
  /**
   * Replaces what a live call is doing with this markup (a warm transfer moves the caller into a
   * conference this way); absent where the carrier moves a call only by pointing it at a URL.
   */
  redirect?(callId: string, markup: Markup, options: RestOptions): Promise<void>;
  /** The same where the carrier takes only a URL that answers with the markup (Plivo's `aleg_url`). */
  redirectToUrl?(callId: string, markupUrl: string, options: RestOptions): Promise<void>;
  /** Plays keypad tones to the other party; absent where the carrier cannot during a stream. */
  sendDigits?(callId: string, digits: string, options: RestOptions): Promise<void>;
}

export interface StreamOptions {
  token: string;
  encoding?: G711Law;
  /**
   * More names and values handed back in the start message's customParameters beside the token,
   * letters and digits only, as the token (Plivo's extraHeaders take nothing else).
   */
  parameters?: Record<string, string>;
}

// ── The whole carrier ───────────────────────────────────────────────────────────────────────

export interface Carrier<Name extends CarrierName = CarrierName> {
  name: Name;
  /**
   * A cold transfer points the live call at a URL that serves `transferMarkup` (Plivo), rather
   * than handing the carrier the markup itself: TransferRequest.markupUrl is required.
   */
  transfersByUrl?: true;
  /**
   * Its answering-machine detector listens while the call already runs and posts its verdict
   * to the status URL later, without saying when the greeting ends (Plivo): the flow starts on
   * the answer, and a machine's verdict turns the call to leaving the message (voicemail.ts).
   */
  asyncMachineDetection?: true;
  verifyVoiceWebhook(request: WebhookRequest, credentials: CredentialsByCarrier[Name], now?: Date): WebhookVerdict;
  /** Form fields (Twilio, Plivo, Telnyx TeXML) or a parsed JSON body (Telnyx Call Control events). */
  parseVoiceWebhook(body: unknown): ParsedWebhook;
  /**
   * Opens the bidirectional stream; the token comes back in the start message's customParameters.
   * Tokens must be [A-Za-z0-9] only (Plivo's extraHeaders accept nothing else).
   */
  answerWithStream(streamUrl: string, options: StreamOptions): Markup;
  notInService(): Markup;
  /** Ends the call at once, saying nothing (an answering machine with no message to leave, a fax). */
  hangUpMarkup(): Markup;
  sayAndHangUp(text: string): Markup;
  /** The markup a cold transfer runs (dial the target, then end). */
  transferMarkup(request: TransferRequest): Markup;
  /**
   * A warm transfer's two sides of one conference: the caller's call is redirected into it (by a
   * URL serving `callerJoins` where the carrier `transfersByUrl`), and the person's leg answers
   * with the summary and then joins it.
   */
  warmTransfer?: { callerJoins(conference: string): Markup; personJoins(conference: string, summary: string): Markup };
  parseStreamMessage(text: string): StreamMessage;
  mediaMessage(streamId: string, bytes: Uint8Array, encoding?: G711Law): string;
  markMessage(streamId: string, name: string): string;
  clearMessage(streamId: string): string;
  calls(credentials: CredentialsByCarrier[Name]): CarrierCalls;
}

/** Keypad keys a carrier may report or send (A-D exist on some keypads and in RFC 4733). */
export const DTMF_DIGITS = /^[0-9*#A-D]$/;

/** What a whole send_dtmf string may hold: keys, and `w` (a half-second pause) where supported. */
export const DTMF_SEQUENCE = /^[0-9*#A-Dw]{1,64}$/;
