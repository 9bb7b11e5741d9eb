import type { Carrier } from '../carrier.ts';
import { callerJoinsConference, personJoinsConference } from '../conference.ts';
import { parseTwilioStyleWebhook } from '../form-webhook.ts';
import { twilioCalls } from './calls.ts';
import { twilioHangUp, twilioAnswerWithStream, twilioNotInService, twilioSayAndHangUp, twilioTransferMarkup } from './markup.ts';
import { parseTwilioStreamMessage, twilioClearMessage, twilioMarkMessage, twilioMediaMessage } from './stream.ts';
import { verifyTwilioWebhook } from './webhook.ts';

export const twilio: Carrier<'twilio'> = {
  name: 'twilio',
  verifyVoiceWebhook: verifyTwilioWebhook,
  parseVoiceWebhook: (body) => parseTwilioStyleWebhook(body),
  answerWithStream: twilioAnswerWithStream,
  notInService: twilioNotInService,
  hangUpMarkup: twilioHangUp,
  sayAndHangUp: twilioSayAndHangUp,
  transferMarkup: twilioTransferMarkup,
  warmTransfer: { callerJoins: callerJoinsConference, personJoins: personJoinsConference },
  parseStreamMessage: parseTwilioStreamMessage,
  // Twilio streams μ-law only.
  mediaMessage: (streamId, bytes) => twilioMediaMessage(streamId, bytes),
  markMessage: twilioMarkMessage,
  clearMessage: twilioClearMessage,
  calls: twilioCalls,
};
