// A spoken simulated caller's ear: the agent's audio, as the session plays it to the caller,
// streamed into the configured speech to text, and read back at each of the caller's turns. The
// caller answers what was actually heard, not the agent's text: a reply cut short, words the voice
// never said, or words the recogniser got wrong reach it as they would reach a person on the phone
// (docs/testing.md#simulated-callers).
import type { SpeechToText, TranscriptionStream } from '../providers/types.ts';

export class CallerEar {
  private readonly stream: TranscriptionStream;
  private closed = false;

  constructor(stt: SpeechToText, language: string) {
    this.stream = stt.open({ language });
  }

  /** One frame of the agent's audio, as played. */
  hear(frame: Int16Array): void {
    // The session may reuse its frame: the transcriber gets a copy of its own.
    if (!this.closed) this.stream.write(frame.slice());
  }

  /** What the caller heard of the agent since its last turn ('' when the agent said nothing it could make out). */
  async heardSinceLastTurn(signal: AbortSignal): Promise<string> {
    try {
      return (await this.stream.flush(signal)).trim();
    } catch (error) {
      signal.throwIfAborted();
      throw new Error(`the simulated caller could not hear the agent: speech to text failed (${error instanceof Error ? error.message : String(error)})`, { cause: error });
    }
  }

  close(): void {
    this.closed = true;
    this.stream.close();
  }
}
