import type { Carrier } from '../carrier.ts';
import { plivoCalls } from './calls.ts';
import { plivoAnswerWithStream, plivoCallerJoinsConference, plivoHangUp, plivoNotInService, plivoPersonJoinsConference, plivoSayAndHangUp, plivoTransferMarkup } from './markup.ts';
import { parsePlivoStreamMessage, plivoCheckpointMessage, plivoClearMessage, plivoMediaMessage } from './stream.ts';
import { parsePlivoWebhook, verifyPlivoWebhook } from './webhook.ts';

export const plivo: Carrier<'plivo'> = {
  name: 'plivo',
  transfersByUrl: true,
  asyncMachineDetection: true,
  verifyVoiceWebhook: verifyPlivoWebhook,
  parseVoiceWebhook: parsePlivoWebhook,
  // The stream asks for 8 kHz μ-law; Plivo offers no A-law on streams.
  answerWithStream: (streamUrl, options) => plivoAnswerWithStream(streamUrl, options),
  notInService: plivoNotInService,
  hangUpMarkup: plivoHangUp,
  sayAndHangUp: plivoSayAndHangUp,
  transferMarkup: plivoTransferMarkup,
  warmTransfer: { callerJoins: plivoCallerJoinsConference, personJoins: plivoPersonJoinsConference },
  parseStreamMessage: parsePlivoStreamMessage,
  mediaMessage: (_streamId, bytes) => plivoMediaMessage(bytes),
  markMessage: plivoCheckpointMessage,
  clearMessage: plivoClearMessage,
  calls: plivoCalls,
};
