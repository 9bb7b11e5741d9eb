// The parts of a Pipecat node that are text or actions: messages (role and task) as one text,
// and the pre- and post-actions as what `on_enter` says and whether it ends the call.
import type { OnEnter } from '../types.ts';
import { isObject, type Path, type Report } from './read-functions.ts';

export function messagesText(list: unknown, path: Path, report: Report): string {
  if (list === undefined) return '';
  if (!Array.isArray(list)) {
    report('pipecat_message_adapted', 'messages that are not a list of {role, content}: left out', path);
    return '';
  }
  const texts: string[] = [];
  list.forEach((message, index) => {
    const at = [...path, index];
    const content = isObject(message) ? message.content : undefined;
    if (typeof content === 'string') texts.push(content);
    else if (Array.isArray(content)) {
      const parts = content.filter((part) => isObject(part) && typeof part.text === 'string').map((part) => (part as { text: string }).text);
      if (parts.length !== content.length) report('pipecat_message_adapted', 'only the text parts of this message are kept', [...at, 'content']);
      texts.push(parts.join('\n'));
    } else {
      report('pipecat_message_adapted', 'a message without text content: left out', at);
      return;
    }
    if (isObject(message) && message.role === 'assistant') {
      report('pipecat_message_adapted', 'an assistant message becomes part of the instructions to the model, not something it said', [...at, 'role']);
    }
  });
  return texts.join('\n\n');
}

export function readActions(list: unknown, path: Path, when: 'pre' | 'post', say: string[], onEnter: OnEnter, report: Report): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    report('pipecat_unsupported_action', 'actions that are not a list: left out', path);
    return;
  }
  list.forEach((action, index) => {
    const at: Path = [...path, index];
    const type = isObject(action) ? action.type : undefined;
    const text = isObject(action) && typeof action.text === 'string' ? action.text : undefined;
    if (type === 'tts_say' && text !== undefined) {
      say.push(text);
      if (when === 'post') report('pipecat_action_moved', 'a tts_say after the reply is said on entering the state, before the model speaks', at);
    } else if (type === 'end_conversation') {
      if (text !== undefined) say.push(text);
      onEnter.end_session = true;
      if (when === 'post') {
        report('pipecat_action_moved', 'end_conversation after the reply becomes `on_enter.end_session`: Voxflow ends the call on entering, after what on_enter says, without the model speaking; put the closing words in on_enter.say', at);
      }
    } else if (type === 'function' || (isObject(action) && action.handler !== undefined)) {
      report('pipecat_handler_not_run', `the ${String(type)} action runs a handler (Python code); Voxflow does not run it`, at);
    } else {
      report('pipecat_unsupported_action', `the action ${JSON.stringify(type ?? null)} has no Voxflow equivalent (tts_say and end_conversation do): left out`, at);
    }
  });
}

/** A context strategy's name in upper case: Pipecat's enum values are lower case, its names upper. */
export function strategyOf(value: unknown): string | null {
  const strategy = isObject(value) ? value.strategy : value;
  return typeof strategy === 'string' ? strategy.toUpperCase() : null;
}
