// The booking example's calls spoken: what the Deepgram fake hears in them. Its recogniser knows
// every line the agent and the callers of test/support/booking-simulated-callers.ts say, by their
// sound in the embedded voice, and answers each in a recogniser's words (lower case, no
// punctuation, numbers in words), so a test tells what speech to text heard from what was typed.
import type { TextToSpeech } from '../../server/providers/types.ts';
import { templateRecogniser } from '../fakes/template-recogniser.ts';

export const BOOKING_HEARD: Record<string, string> = {
  // The agent.
  'Welcome to Maple Street Dental. I am an automated assistant, and this call may be recorded for quality.': 'welcome to maple street dental i am an automated assistant and this call may be recorded for quality',
  'Which weekday would suit you?': 'which weekday would suit you',
  'Let me check tuesday.': 'let me check tuesday',
  'Tuesday at 10:00 is free. Shall I book it?': 'tuesday at ten is free shall i book it',
  'You are booked for tuesday at 10:00. We look forward to seeing you. Goodbye!': 'you are booked for tuesday at ten we look forward to seeing you goodbye',
  // The callers.
  'Do you have anything on Tuesday?': 'do you have anything on tuesday',
  'Yes please, book it.': 'yes please book it',
  'Oh, lovely weather today, is it not?': 'oh lovely weather today is it not',
};

/** The Deepgram fake's `transcribe` for the booking calls, learnt from `voice` (the voice the run speaks with). */
export function bookingRecogniser(voice: TextToSpeech): Promise<(pcm: Int16Array) => string> {
  return templateRecogniser(voice, BOOKING_HEARD);
}
