// The session protocol's error codes, one registry like server/errors.ts: each code a default
// message and whether it ends the session. `error.code` on the wire is always one of these, so
// the studio can switch on it and say what the designer can do.

export const SESSION_ERRORS = {
  malformed_message: { fatal: false, message: 'Text frames must be JSON objects with a "type".' },
  unknown_message: { fatal: false, message: 'Unknown message type.' },
  malformed_audio: { fatal: false, message: 'Binary frames are PCM16: a whole number of 2-byte samples.' },
  forbidden: { fatal: false, message: "simulate_tool is only for the account owner's studio sessions (signed in with a JWT)." },
  no_flow: { fatal: false, message: 'simulate_tool needs a flow session; this is an assistant session.' },
  llm_unavailable: { fatal: false, message: 'No language model is configured, so the agent cannot speak or answer; simulate_tool still drives the flow.' },
  stt_unavailable: { fatal: false, message: 'No speech-to-text provider is configured; send typed turns ({"type":"text"}) instead.' },
  vad_unavailable: { fatal: false, message: 'Voice activity detection is not available on this server; send typed turns instead.' },
  vad_failed: { fatal: false, message: 'Voice activity detection failed.' },
  stt_failed: { fatal: false, message: 'Speech to text failed.' },
  llm_failed: { fatal: false, message: 'The language model failed.' },
  tts_failed: { fatal: false, message: 'Text to speech failed.' },
  rate_limited: { fatal: false, message: 'Too many typed turns or simulate_tool calls: 5 at once, then 1 a second. This one was dropped.' },
} as const satisfies Record<string, { fatal: boolean; message: string }>;

export type SessionErrorCode = keyof typeof SESSION_ERRORS;

export const SESSION_ERROR_CODES = Object.keys(SESSION_ERRORS) as SessionErrorCode[];

export function isSessionErrorCode(code: string): code is SessionErrorCode {
  return Object.hasOwn(SESSION_ERRORS, code);
}

/** The `error` event for a code, with its registered message unless a more precise one is given. */
export function sessionError(code: SessionErrorCode, message?: string): { type: 'error'; code: SessionErrorCode; message: string; fatal: boolean } {
  const entry = SESSION_ERRORS[code];
  return { type: 'error', code, message: message ?? entry.message, fatal: entry.fatal };
}
