// The server's session error events in the designer's words. The protocol's own messages are
// written for client developers ("send typed turns ({"type":"text"})", "simulate_tool still
// drives the flow"); the studio says what the designer can do here instead, and keeps the code
// out of sight (it stays on the notice's data-code for tests and bug reports).
import { SESSION_ERRORS, isSessionErrorCode } from '../../../../server/protocol/session-errors.ts';

const PLAIN: Record<string, string> = {
  llm_unavailable:
    'No language model is set up, so the agent cannot answer. Walk the flow with the simulator below, or add a model key in Settings → Provider keys.',
  stt_unavailable: 'This server has no speech-to-text, so it cannot hear you. Type your turns in the box under the conversation instead.',
  vad_unavailable: 'This server cannot tell when you speak (it has no voice detection). Type your turns in the box under the conversation instead.',
  forbidden: 'Only the owner of this flow, signed in to the studio, can fire tools from the simulator.',
  no_flow: 'The simulator works only when the session runs a flow.',
  malformed_message: 'The server did not understand a message from the studio. Reload the page; if it happens again, the studio and the server may be different versions.',
  unknown_message: 'The server did not understand a message from the studio. Reload the page; if it happens again, the studio and the server may be different versions.',
  malformed_audio: 'The server could not read the audio from your microphone. Talk again, or type your turns.',
  vad_failed: 'Voice detection failed on the server. Talk again, or type your turns.',
  stt_failed: 'Speech-to-text failed, so what you said was not understood. Say it again, or type it.',
  llm_failed: 'The language model failed to answer. Send your turn again, or check the model key in Settings → Provider keys.',
  tts_failed: 'The agent’s voice failed; its words still show in the conversation.',
  rate_limited: 'That was too many turns too fast: the server takes five at once, then one a second. Wait a moment and send it again.',
};

/**
 * What a session error means for the designer. A message the server made more precise than its
 * registered one (a provider's own error) is kept after the plain words, as the detail.
 */
export function describeSessionError(code: string, serverMessage: string): string {
  const plain = PLAIN[code];
  if (!plain) return serverMessage;
  const registered = isSessionErrorCode(code) ? SESSION_ERRORS[code].message : null;
  const detail = serverMessage.trim();
  return detail === '' || detail === registered || !code.endsWith('_failed') ? plain : `${plain} (${detail})`;
}

const END_REASONS: Record<string, string> = {
  client_ended: 'you ended it',
  credits_exhausted: 'credits ran out',
  idle_timeout: 'nothing was heard for too long',
  client_disconnected: 'the connection dropped',
  connect_timeout: 'the connection never came up',
  ice_failed: 'no network path to the server',
  server_shutdown: 'the server shut down',
  restarted: 'a new connection replaced it',
  flow_ended: 'the flow ended the call',
};

/** Why a session ended, in words. */
export function describeEndReason(reason: string): string {
  return END_REASONS[reason] ?? reason.replaceAll('_', ' ');
}
