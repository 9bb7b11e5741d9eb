import type { Carrier } from '../carrier.ts';
import { callerJoinsConference, personJoinsConference } from '../conference.ts';
import { telnyxCalls } from './calls.ts';
import { telnyxHangUp, telnyxAnswerWithStream, telnyxNotInService, telnyxSayAndHangUp, telnyxTransferMarkup } from './markup.ts';
import { parseTelnyxStreamMessage, telnyxClearMessage, telnyxMarkMessage, telnyxMediaMessage } from './stream.ts';
import { parseTelnyxWebhook, verifyTelnyxWebhook } from './webhook.ts';

export const telnyx: Carrier<'telnyx'> = {
  name: 'telnyx',
  verifyVoiceWebhook: verifyTelnyxWebhook,
  parseVoiceWebhook: parseTelnyxWebhook,
  answerWithStream: telnyxAnswerWithStream,
  notInService: telnyxNotInService,
  hangUpMarkup: telnyxHangUp,
  sayAndHangUp: telnyxSayAndHangUp,
  transferMarkup: telnyxTransferMarkup,
  warmTransfer: { callerJoins: callerJoinsConference, personJoins: personJoinsConference },
  parseStreamMessage: parseTelnyxStreamMessage,
  mediaMessage: (_streamId, bytes) => telnyxMediaMessage(bytes),
  markMessage: (_streamId, name) => telnyxMarkMessage(name),
  clearMessage: () => telnyxClearMessage(),
  calls: telnyxCalls,
};
