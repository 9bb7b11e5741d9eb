// What every route can reach, decorated once onto the app by the `voxflow-services` plugin and
// typed by declaration merging; the other http/ plugins declare it as their dependency.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import type { SendToolRequest } from '../engine/http-tools.ts';
import type { VoiceEngine } from '../engine/voice-engine.ts';
import type { FlowJobs } from '../jobs/flow-jobs.ts';
import type { AccessTokens } from '../security/access-tokens.ts';
import type { PasswordHasher } from '../security/passwords.ts';
import type { SecretBox } from '../security/secret-box.ts';
import type { CallStatus, KeyCheckWithFirstRead, Session, Store } from '../store/store.ts';

export interface Services {
  config: Config;
  /** Where clients reach this server (the base of ws_url): configured, or the listening address. */
  publicUrl(): string;
  store: Store;
  passwords: PasswordHasher;
  accessTokens: AccessTokens;
  secrets: SecretBox;
  engine: VoiceEngine;
  /** Sends a flow http tool's request (signed, secrets filled, through the outbound guard). */
  sendToolRequest: SendToolRequest;
  /** Parses, validates and edits flow documents in worker threads, off the audio thread. */
  flowJobs: FlowJobs;
  /**
   * A short line spoken by the voice this account's sessions use (its own key's vendor, else the
   * server's, else the embedded one), in `voice` when given: PCM16 mono. Throws AppError
   * invalid_request for a voice that vendor lacks, voice_unavailable when the vendor fails.
   */
  previewVoice(accountId: string, voice: string | null, text: string, signal: AbortSignal): Promise<{ pcm: Int16Array; sampleRate: number; provider: string }>;
  /** A phone call's status changed: `call.status` into the webhook outbox, durably (never throws). */
  callStatus(session: Session, status: CallStatus): Promise<void>;
  /** Length of a billed minute, when not a real one (tests shorten it). */
  minuteMs?: number;
  /** Where the SIP endpoint listens, once bound (port 0 resolved); empty when SIP is off (docs/sip.md). */
  sipListening: Array<{ protocol: 'udp' | 'tcp' | 'tls'; host: string; port: number }>;
  /** The studio's page and its headers, once the studio is served: a browser's address with no route gets it with a 404 (its not-found screen). */
  studioPage: { body: Buffer; headers: Record<string, string> } | null;
  /** The SIP registration to a trunk (VOXFLOW_SIP_REGISTER), for /health: its state and why it fails; null when there is none. */
  sipRegistration: (() => { state: 'registering' | 'registered' | 'failing' | 'stopped'; error: string | null }) | null;
  /** Places a call over SIP for POST /v1/calls (its SIP Call-ID); null when SIP is off. */
  sipCalls: { place(call: { session: Session; tokenHash: string; from: string; to: string }): string } | null;
}

/** Who is calling, as established by the auth plugin. */
export type Principal =
  | { kind: 'jwt'; accountId: string }
  | { kind: 'api_key'; accountId: string; apiKeyId: string }
  | { kind: 'session'; accountId: string; sessionId: string };

/** Which credentials a route takes (docs/api.md). */
export type AuthRule =
  | 'none'
  | 'jwt'
  | 'api_key'
  | 'jwt_or_api_key'
  /**
   * Engine router (docs/api.md#voice-sessions): a JWT, an API key, or a session token in
   * `?session_token=`.
   */
  | 'engine';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    /** Counts a request against its credential's rate limit (429 past it); see rate-limits.ts. */
    limitCredential(principal: Principal): void;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The session a `?session_token=` claimed (engine routes only). */
    claimedSession: Session | null;
    /** The API key's check when the store makes it with the request's first read (auth.ts). */
    keyCheck: KeyCheckWithFirstRead | null;
  }
  interface FastifyContextConfig {
    auth?: AuthRule;
    /** Signup and login get the tight per-IP limit. */
    authAttempt?: boolean;
    /** With the 'engine' rule: a ?session_token= is used up here (it opens a session). */
    startsSession?: boolean;
    /** The handler authenticates itself (with authenticateRequest) once it has read the body. */
    authInHandler?: boolean;
    /**
     * A write route whose handler reads the store before it does anything else (no effect
     * before its first store statement): its API key may be checked with that read, as every
     * GET's is (auth.ts). The store still checks it before any write.
     */
    keyCheckedWithFirstRead?: boolean;
    /** The answer holds a secret (a token, a key shown once): never cached. */
    carriesSecret?: boolean;
  }
}

export const servicesPlugin = fp(
  async (app: FastifyInstance, options: { services: Services }) => {
    app.decorate('services', options.services);
  },
  { name: 'voxflow-services' },
);

/** The caller's account; only called on routes whose auth rule guarantees a principal. */
export function accountOf(principal: Principal | null): string {
  if (!principal) throw new Error('route reached without a principal: its auth rule is wrong');
  return principal.accountId;
}
