// The STT stage: the caller's speech in (past the VAD and any filter after it), their turns out.
// Speech starting interrupts the agent (barge-in) and feeds the speech recognizer, from the
// pre-roll on; the turn's end flushes it, and a transcript with words in it becomes a caller turn
// for the agent to answer.
//
// Turn-taking (turn-rules.ts, docs/flows.md#turn-taking) changes two moments:
// - Voiced audio over the agent pauses it at once, before the VAD has confirmed it as speech
//   (200 ms later); a run that fades unconfirmed (a cough, a click) resumes it where it stopped.
// - Speech over the agent keeps it paused rather than cutting it. The words (streamed interim text, or
//   the transcript at the end) and the speech's length then say whether it was an interruption
//   (the reply is cut, as before), a backchannel or noise (the agent resumes its sentence).
// - The VAD reports the caller's pauses after the shortest wait; the transcript so far is fetched
//   there, and the words decide how much longer the silence must last before the turn is over
//   (longer after "on…", shorter after "yes" to a yes/no question). Speech that comes back before
//   then continues the same turn.
// Over 400 lines: the pause for unconfirmed voiced audio, the judging of speech over the agent and
// the end of a caller's turn share the one turn under way and its timers.
import { sessionError } from '../protocol/session-errors.ts';
import type { SpeechToText, TranscriptionStream } from '../providers/types.ts';
import type { CallerSpeechFrames, CallerTurnFrame, CallerWordsFrame, ErrorFrame, InterruptFrame, PauseAgentFrame, ResumeAgentFrame, StageOutput } from './frames.ts';
import type { EndOfTurnModel } from './turn-model.ts';
import { BACKCHANNEL_MAX_MS, decideEndOfTurn, isAdaptive, judgeBargeIn, NO_HINTS, pausesForBackchannels, shortestWaitMs, type BargeInDecision, type EndOfTurnDecision, type TurnHints, type TurnPolicy } from './turn-rules.ts';
import { TurnTiming } from './turn-timing.ts';

export interface SpokenTurnsOptions {
  readonly stt: SpeechToText | null;
  /** What the recognizer is opened with: the session's language, the flow's own model. */
  readonly sttOptions: { language: string; model?: string };
  /** The longest a turn's transcript is waited for. */
  readonly sttFlushTimeoutMs: number;
  /** Aborted when the session ends. */
  readonly signal: AbortSignal;
  /** The session's next turn number (typed and spoken turns share the count). */
  nextTurnNumber(): number;
  /** The turn-taking in force now (the flow state's); absent: any speech cuts the agent, and the VAD's silence ends the turn. */
  turn?(): { policy: TurnPolicy; hints: TurnHints };
  /** Whether the agent's voice is being heard now (speech over it may be only a backchannel). */
  agentSpeaking?(): boolean;
  /** The clock `lastVoicedAt` is read on (performance.now). */
  now?(): number;
  /**
   * The server's end-of-turn model (--turn-model), asked at a pause whose words say neither
   * "unfinished" nor "a short answer": its probability that the caller is done picks the shortest
   * wait or the longest. Run in a worker; a failure leaves the words' decision.
   */
  turnModel?: EndOfTurnModel | null;
}

/**
 * The longest the end of a turn waits on voiced audio the VAD has neither confirmed as speech nor
 * seen fade: a SIP caller's audio may simply stop (no packets after its last words, or silence
 * suppression), and with no frames the VAD says nothing more. Confirmation takes 200 ms of audio.
 */
const VOICING_HOLD_MAX_MS = 600;

/** What the end-of-turn model hears: the turn's last 8 s of speech at 16 kHz. */
const MODEL_SAMPLES = 8 * 16_000;

export type SpokenTurnsOutput = InterruptFrame | PauseAgentFrame | ResumeAgentFrame | CallerTurnFrame | CallerWordsFrame | ErrorFrame;

/** A caller turn under way: from its first speech to the end the words and the silence decide. */
interface OpenTurn {
  /** When the VAD confirmed the speech (the `now` clock). */
  startedAt: number;
  /** The VAD says the caller is speaking (not in a pause). */
  speaking: boolean;
  /**
   * In a pause, voiced audio began that the VAD has not confirmed as speech yet: the caller may
   * be going on. The turn's end waits for it to be confirmed (the same turn goes on) or to fade.
   */
  voicing: boolean;
  /** The turn's end, decided and waiting for its silence: run again when a fading blip lets it. */
  pendingEnd: (() => void) | null;
  /** Gives up on voiced audio that is neither confirmed nor faded (the caller's audio stopped). */
  voicingTimer: NodeJS.Timeout | null;
  /** The agent was paused for this speech and its fate is not decided yet. */
  overAgent: boolean;
  /** What the recognizer gave at each pause so far. */
  words: string[];
  /** The newest interim text (streaming recognizers), for the barge-in decision. */
  interim: string | null;
  lastVoicedAt: number;
  /** The end-of-turn wait that is running; null when none is. */
  timer: NodeJS.Timeout | null;
  /** The BACKCHANNEL_MAX_MS check of speech over the agent. */
  durationTimer: NodeJS.Timeout | null;
  /** The turn's speech, newest last, at most MODEL_SAMPLES in all; kept only when a turn model listens. */
  audio: Int16Array[];
  audioSamples: number;
}

export class SpokenTurns {
  private stt: TranscriptionStream | null = null;
  private userSpeaking = false;
  /**
   * The agent is paused for voiced audio that the VAD has not confirmed as speech yet: resumed
   * where it stopped if the run fades, kept paused and judged if it is confirmed. The timer gives
   * up on a run that does neither (the caller's audio stopped).
   */
  private voicePause: NodeJS.Timeout | null = null;
  /** The adaptive turn (or speech over the agent) under way; null between turns and for fixed waits. */
  private open: OpenTurn | null = null;

  constructor(
    private readonly options: SpokenTurnsOptions,
    private readonly out: StageOutput<SpokenTurnsOutput>,
  ) {}

  private get now(): number {
    return this.options.now?.() ?? performance.now();
  }

  push(frame: CallerSpeechFrames): void {
    if (this.options.signal.aborted) return;
    switch (frame.type) {
      case 'speech_started':
        this.speechStarted(frame.preRoll);
        return;
      case 'caller_speech':
        this.stt?.write(frame.pcm);
        if (this.open && this.options.turnModel) keepAudio(this.open, frame.pcm);
        return;
      case 'turn_ended':
        if (this.open) void this.paused(this.open, frame.lastVoicedAt);
        else void this.transcribeTurn(frame.lastVoicedAt);
        return;
      case 'caller_voicing':
        if (this.open && !this.open.speaking) this.voicing(this.open, frame.voicing);
        else if (!this.open) this.voicingOverAgent(frame.voicing);
        return;
    }
  }

  /**
   * A caller turn is under way or waits for its end (the words said "not finished yet"): the
   * session is not idle, though no agent turn is in flight.
   */
  get holdingTurn(): boolean {
    return this.open !== null;
  }

  /** The session ended: the recognizer's stream is closed. */
  close(): void {
    this.endVoicePause();
    this.closeTurn();
    this.stt?.close();
  }

  private policy(): { policy: TurnPolicy; hints: TurnHints } | null {
    return this.options.turn?.() ?? null;
  }

  private speechStarted(preRoll: Int16Array): void {
    const open = this.open;
    this.openStt()?.write(preRoll);
    if (open) {
      // The caller goes on after a pause: the same turn, and its end is decided again.
      open.speaking = true;
      this.stopVoicingHold(open);
      open.pendingEnd = null;
      if (open.timer) clearTimeout(open.timer);
      open.timer = null;
      return;
    }
    this.userSpeaking = true;
    this.out.send({ type: 'user_started_speaking' });
    const turn = this.policy();
    const pausedForVoice = this.endVoicePause();
    const overAgent = turn !== null && pausesForBackchannels(turn.policy) && (pausedForVoice || (this.options.agentSpeaking?.() ?? false));
    if (overAgent) {
      // Judged once its words or length say: the agent's audio stops now (or stopped when the
      // voiced audio began; pausing again is harmless) either way.
      this.out.push({ type: 'pause_agent' });
    } else {
      // Barge-in: the caller talking over the agent (or over its thinking) stops it at once;
      // an agent with nothing in flight takes no notice.
      this.out.push({ type: 'interrupt' });
    }
    if (turn === null || (!overAgent && !isAdaptive(turn.policy))) return;
    const started: OpenTurn = { startedAt: this.now, speaking: true, voicing: false, pendingEnd: null, voicingTimer: null, overAgent, words: [], interim: null, lastVoicedAt: this.now, timer: null, durationTimer: null, audio: [], audioSamples: 0 };
    this.open = started;
    if (this.options.turnModel) keepAudio(started, preRoll);
    if (overAgent) {
      started.durationTimer = setTimeout(() => {
        started.durationTimer = null;
        // Paused, the speech is as long as it got: its words decide once they come.
        if (this.open === started && started.speaking) this.judge(started, false);
      }, BACKCHANNEL_MAX_MS);
    }
  }

  /**
   * Voiced audio began (or faded) with no caller turn under way. Over the agent, under a policy
   * that pauses for backchannels, the agent's audio stops at the first voiced frame, 200 ms before
   * the VAD can confirm speech: a real interruption is already silent when it is judged. A run
   * that fades unconfirmed was no speech, and the agent goes on where it stopped.
   */
  private voicingOverAgent(voicing: boolean): void {
    if (!voicing) {
      if (this.endVoicePause()) this.out.push({ type: 'resume_agent', from: 'where_paused' });
      return;
    }
    if (this.voicePause) return;
    const turn = this.policy();
    if (!turn || !pausesForBackchannels(turn.policy) || !(this.options.agentSpeaking?.() ?? false)) return;
    this.out.push({ type: 'pause_agent' });
    this.voicePause = setTimeout(() => this.voicingOverAgent(false), VOICING_HOLD_MAX_MS);
  }

  /** Ends a pause for unconfirmed voiced audio, if one holds; true if it did. */
  private endVoicePause(): boolean {
    if (!this.voicePause) return false;
    clearTimeout(this.voicePause);
    this.voicePause = null;
    return true;
  }

  private openStt(): TranscriptionStream | null {
    if (!this.options.stt) return null;
    if (!this.stt) {
      this.stt = this.options.stt.open(this.options.sttOptions);
      this.stt.onInterim = (text) => {
        const open = this.open;
        if (!open?.overAgent) return;
        open.interim = text;
        this.judge(open, false);
      };
    }
    return this.stt;
  }

  /**
   * Decides what speech over the agent was, if its words or length can say yet; true once it is
   * decided. A backchannel or noise resumes the agent and ends the turn; an interruption cuts it.
   */
  private judge(open: OpenTurn, ended: boolean): boolean {
    const turn = this.policy();
    if (!turn || !open.overAgent) return true;
    const said = [...open.words, ...(open.interim !== null && !ended ? [open.interim] : [])].join(' ').trim();
    const transcript = said === '' && !ended && open.interim === null && open.words.length === 0 ? null : said;
    // Speech that ended (or paused: its words are being fetched) lasted to its last voiced audio;
    // speech still going, to now. A slow transcript must not make "uh-huh" long.
    const durationMs = Math.max(0, Math.round((ended || !open.speaking ? open.lastVoicedAt : this.now) - open.startedAt));
    const decision = judgeBargeIn({ transcript, durationMs, ended, language: this.options.sttOptions.language }, turn.policy);
    if (!decision) return false;
    open.overAgent = false;
    if (open.durationTimer) clearTimeout(open.durationTimer);
    open.durationTimer = null;
    this.bargeIn(decision, transcript, durationMs);
    if (decision.decision !== 'interrupted') {
      this.closeTurn();
      if (this.userSpeaking) {
        this.userSpeaking = false;
        this.out.send({ type: 'user_stopped_speaking' });
      }
    }
    return true;
  }

  private bargeIn(decision: BargeInDecision, transcript: string | null, durationMs: number): void {
    const interrupted = decision.decision === 'interrupted';
    this.out.push({ type: interrupted ? 'interrupt' : 'resume_agent' });
    // After the cut (the `interrupted` event the cut sends comes first), or as the agent resumes.
    this.out.send({ type: 'barge_in', decision: decision.decision, reason: decision.reason, transcript: transcript || null, duration_ms: durationMs });
  }

  /** The VAD heard the shortest pause: fetch the words so far and decide how much longer to wait. */
  private async paused(open: OpenTurn, lastVoicedAt: number): Promise<void> {
    const { signal } = this.options;
    open.speaking = false;
    open.lastVoicedAt = lastVoicedAt;
    if (this.stt) {
      let text: string;
      try {
        const timeout = AbortSignal.timeout(this.options.sttFlushTimeoutMs);
        text = (await this.stt.flush(AbortSignal.any([signal, timeout]))).trim();
      } catch (error) {
        if (this.open !== open) return;
        this.closeTurn();
        if (open.overAgent) this.out.push({ type: 'interrupt' });
        this.userSpeaking = false;
        this.out.send({ type: 'user_stopped_speaking' });
        if (!signal.aborted) this.out.push({ type: 'error', code: 'stt_failed', error });
        return;
      }
      if (this.open !== open || signal.aborted) return;
      if (text) open.words.push(text);
      open.interim = null;
    }
    // The caller went on while the words were fetched: this pause was no end.
    if (open.speaking) {
      if (open.overAgent) this.judge(open, false);
      return;
    }
    if (open.overAgent && !this.judge(open, true)) return;
    if (this.open !== open) return;
    const turn = this.policy();
    const text = open.words.join(' ');
    let decision: EndOfTurnDecision = decideEndOfTurn(text, this.options.sttOptions.language, turn?.hints ?? NO_HINTS, turn!.policy);
    const model = this.options.turnModel;
    if (decision.reason === 'default' && model && open.audioSamples > 0) {
      const probability = await model.endOfTurnProbability(joinAudio(open.audio, open.audioSamples)).catch(() => null);
      if (this.open !== open || open.speaking || this.options.signal.aborted) return;
      if (probability !== null) {
        decision = probability >= 0.5 ? { waitMs: shortestWaitMs(turn!.policy), reason: 'model_complete' } : { waitMs: turn!.policy.maxEndpointingMs, reason: 'model_unfinished' };
      }
    }
    const dueAt = open.lastVoicedAt + decision.waitMs;
    const finish = () => {
      if (this.open !== open || open.speaking) return;
      // Voiced audio not yet confirmed: the caller may be going on. Decided when it is confirmed
      // or fades (voicing()); until then the silence is not known to have lasted.
      if (open.voicing) {
        open.pendingEnd = finish;
        return;
      }
      open.pendingEnd = null;
      this.finishTurn(open, Math.min(this.now, dueAt), decision, text);
    };
    const remaining = dueAt - this.now;
    if (remaining <= 0) finish();
    else open.timer = setTimeout(finish, remaining);
  }

  /**
   * Voiced audio in a pause began or faded before the VAD confirmed it. Without this, a caller
   * going on after a pause shorter than the wait was heard only once confirmed (200 ms of speech
   * later), and the turn could end in between: the agent answered half a sentence.
   */
  private voicing(open: OpenTurn, voicing: boolean): void {
    this.stopVoicingHold(open);
    if (voicing) {
      open.voicing = true;
      open.voicingTimer = setTimeout(() => {
        if (this.open === open && !open.speaking) this.voicing(open, false);
      }, VOICING_HOLD_MAX_MS);
      return;
    }
    const end = open.pendingEnd;
    open.pendingEnd = null;
    end?.();
  }

  private stopVoicingHold(open: OpenTurn): void {
    open.voicing = false;
    if (open.voicingTimer) clearTimeout(open.voicingTimer);
    open.voicingTimer = null;
  }

  private finishTurn(open: OpenTurn, endedAt: number, decision: EndOfTurnDecision, text: string): void {
    this.closeTurn();
    this.userSpeaking = false;
    const timing = new TurnTiming(this.options.nextTurnNumber(), 'voice');
    timing.userTurnEnded(open.lastVoicedAt, endedAt);
    timing.transcribed();
    this.out.send({ type: 'user_stopped_speaking' });
    this.out.send({ type: 'turn_end', wait_ms: decision.waitMs, reason: decision.reason, transcript: text });
    if (!this.stt) {
      this.out.send(sessionError('stt_unavailable'));
      return;
    }
    // Nothing recognised (a cough, noise): no turn.
    if (!text) return;
    this.out.push({ type: 'caller_turn', text, timing });
  }

  private closeTurn(): void {
    const open = this.open;
    if (!open) return;
    if (open.timer) clearTimeout(open.timer);
    if (open.durationTimer) clearTimeout(open.durationTimer);
    if (open.voicingTimer) clearTimeout(open.voicingTimer);
    this.open = null;
  }

  private async transcribeTurn(lastVoicedAt: number): Promise<void> {
    const { signal } = this.options;
    if (!this.userSpeaking) return;
    this.userSpeaking = false;
    const timing = new TurnTiming(this.options.nextTurnNumber(), 'voice');
    timing.userTurnEnded(lastVoicedAt);
    this.out.send({ type: 'user_stopped_speaking' });
    if (!this.stt) {
      this.out.send(sessionError('stt_unavailable'));
      return;
    }
    let text: string;
    try {
      const timeout = AbortSignal.timeout(this.options.sttFlushTimeoutMs);
      text = (await this.stt.flush(AbortSignal.any([signal, timeout]))).trim();
    } catch (error) {
      if (!signal.aborted) this.out.push({ type: 'error', code: 'stt_failed', error });
      return;
    }
    timing.transcribed();
    if (signal.aborted) return;
    // Nothing recognised (a cough, noise), or the caller went on talking: that next turn answers.
    if (!text) return;
    if (this.userSpeaking) this.out.push({ type: 'caller_words', text });
    else this.out.push({ type: 'caller_turn', text, timing });
  }
}

/** Keeps the turn's newest speech for the end-of-turn model, dropping what is older than it hears. */
function keepAudio(open: OpenTurn, pcm: Int16Array): void {
  if (pcm.length === 0) return;
  open.audio.push(pcm);
  open.audioSamples += pcm.length;
  while (open.audio.length > 1 && open.audioSamples - open.audio[0]!.length >= MODEL_SAMPLES) open.audioSamples -= open.audio.shift()!.length;
}

function joinAudio(parts: Int16Array[], samples: number): Int16Array {
  const out = new Int16Array(samples);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
