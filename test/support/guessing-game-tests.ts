// The guessing game's test suite (resources/flows/) and the model fake's side of it: the rules of
// GUESSING_GAME_RULES, plus a wrong guess, so a model run can take every transition the suite takes.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChatRule } from '../fakes/openai-server.ts';
import { GUESSING_GAME_RULES } from './voice-server.ts';

export const GAME_PATH = fileURLToPath(new URL('../../resources/flows/guessing-game.yaml', import.meta.url));
export const SUITE_PATH = fileURLToPath(new URL('../../resources/flows/guessing-game.tests.yaml', import.meta.url));
export const GAME_YAML = readFileSync(GAME_PATH, 'utf8');
export const SUITE_YAML = readFileSync(SUITE_PATH, 'utf8');

export const GUESSING_GAME_TEST_RULES: ChatRule[] = [
  {
    when: { lastRole: 'user', lastUserText: /dog/i, toolsOffered: ['guess_wrong'] },
    respond: {
      text: "No, it's not a dog.",
      toolCalls: [
        { name: 'guess_wrong', arguments: { wrong_guess: 'a dog' } },
        { name: 'record_answer', arguments: { last_answer: 'no', questions_asked: '2' } },
      ],
    },
  },
  ...GUESSING_GAME_RULES,
];
