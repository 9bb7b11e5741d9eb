// A filter between the VAD and the speech recognizer: while a flow state's `interruptible: false`
// line plays, what the caller says over it is not heard (as in Pipecat and Vapi) rather than
// answered after it. A turn that began while guarded is dropped whole, its end included, so it
// neither interrupts the agent nor gets an answer; a turn that began before goes on as it was.
import type { CallerSpeechFrames, StageOutput } from './frames.ts';

export class CallerSpeechGate {
  /** The caller's speech that began while guarded: not heard, and no turn of its own. */
  #ignoringTurn = false;

  constructor(
    /** Whether caller speech beginning now is to be ignored (flow-speech-rules.ts says). */
    private readonly guarded: () => boolean,
    private readonly out: Pick<StageOutput<CallerSpeechFrames>, 'push'>,
  ) {}

  push(frame: CallerSpeechFrames): void {
    // Voiced audio beginning over a guarded line does not pause it; its fading always passes, so
    // a pause it began before the line was guarded still ends.
    if (frame.type === 'caller_voicing' && frame.voicing && this.guarded()) return;
    if (frame.type === 'speech_started' && this.guarded()) this.#ignoringTurn = true;
    if (this.#ignoringTurn) {
      if (frame.type === 'turn_ended') this.#ignoringTurn = false;
      return;
    }
    this.out.push(frame);
  }
}
