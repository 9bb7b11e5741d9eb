// Asking for the microphone, and saying in words why it could not be had, so the panel can offer
// a text-only session instead of a dead end.

export type MicrophoneProblem = 'denied' | 'no_device' | 'busy' | 'unsupported' | 'failed';

export type MicrophoneResult = { ok: true; stream: MediaStream } | { ok: false; problem: MicrophoneProblem; message: string };

/** getUserMedia's DOMException names, in the words a designer needs. */
export function describeMicrophoneError(error: unknown): { problem: MicrophoneProblem; message: string } {
  const name = typeof error === 'object' && error !== null && 'name' in error ? String((error as { name: unknown }).name) : '';
  switch (name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return { problem: 'denied', message: 'Microphone access was refused. Allow it in the browser (or system) settings, or talk by typing.' };
    case 'NotFoundError':
    case 'OverconstrainedError':
      return { problem: 'no_device', message: 'No microphone was found. Plug one in, or talk by typing.' };
    case 'NotReadableError':
    case 'AbortError':
      return { problem: 'busy', message: 'The microphone could not be opened; another app may be using it.' };
    default:
      return { problem: 'failed', message: `The microphone could not be opened${error instanceof Error && error.message ? `: ${error.message}` : '.'}` };
  }
}

export async function openMicrophone(): Promise<MicrophoneResult> {
  if (typeof navigator === 'undefined' || !navigator.mediaDevices?.getUserMedia) {
    // Browsers hide mediaDevices from pages that are not a secure context (http on another host).
    return { ok: false, problem: 'unsupported', message: 'This page cannot use a microphone (it needs https or localhost).' };
  }
  try {
    // Echo cancellation keeps the agent's voice from the speakers out of the microphone, where
    // it would sound like the user talking over it.
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    return { ok: true, stream };
  } catch (error) {
    return { ok: false, ...describeMicrophoneError(error) };
  }
}
