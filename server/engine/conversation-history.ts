// What the model remembers of the conversation, and how a barge-in rewrites it to what the user
// actually heard. The model is told the truth: words it said that never reached the caller are
// taken back, the part that did is marked as cut off, and tool calls stay — they were committed.
import type { ChatMessage, ChatToolCall } from '../providers/types.ts';
import type { SpokenSentence } from './audio-out.ts';

export class ConversationHistory {
  private readonly messages: ChatMessage[] = [];

  /** The request's messages: the current system prompt, then the whole conversation. */
  withSystemPrompt(system: string): ChatMessage[] {
    return [{ role: 'system', content: system }, ...this.messages];
  }

  /** Where the next message will go: sentences of a reply are tagged with it before it is added. */
  get nextIndex(): number {
    return this.messages.length;
  }

  /** A copy of what the model remembers, for tests and diagnostics. */
  snapshot(): ChatMessage[] {
    return structuredClone(this.messages);
  }

  addUser(text: string): void {
    this.messages.push({ role: 'user', content: text });
  }

  addAssistant(text: string | null, calls: ChatToolCall[] = []): void {
    this.messages.push({ role: 'assistant', content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
  }

  addToolResult(callId: string, result: unknown): void {
    this.messages.push({ role: 'tool', tool_call_id: callId, content: JSON.stringify(result) });
  }

  /**
   * The place of a result that comes later (an http tool's answer), right after its call, as the
   * model APIs require; until it is filled the model reads `pending`. Filling it later changes
   * that message wherever it is, so a caller who speaks meanwhile does not come between them.
   */
  reserveToolResult(callId: string, pending: unknown): (result: unknown) => void {
    const message: ChatMessage = { role: 'tool', tool_call_id: callId, content: JSON.stringify(pending) };
    this.messages.push(message);
    return (result) => {
      message.content = JSON.stringify(result);
    };
  }

  /** `context: reset` (docs/flows.md): the model remembers nothing said before this point. */
  forget(): void {
    this.messages.length = 0;
  }

  /**
   * After a barge-in the model should remember only what the user heard: each assistant message
   * a cut reply's sentences came from keeps the words that were spoken, marked as cut off. Returns
   * what was heard, in the order it was said ('' when nothing).
   */
  rewriteAsHeard(sentences: SpokenSentence[]): string {
    const heardByMessage = new Map<number, string[]>();
    let truncated = false;
    for (const sentence of sentences) {
      if (!sentence.whole) truncated = true;
      if (sentence.tag === null) continue;
      const parts = heardByMessage.get(sentence.tag) ?? [];
      if (sentence.spoken) parts.push(sentence.spoken);
      heardByMessage.set(sentence.tag, parts);
    }
    for (const [index, parts] of heardByMessage) {
      const message = this.messages[index];
      // A reply cut while the model was still streaming has no message yet: nothing to rewrite.
      if (message?.role !== 'assistant') continue;
      const heard = parts.join(' ');
      message.content = heard ? `${heard}${truncated ? '…' : ''}` : null;
    }
    // A message nobody heard a word of, with no committed tool calls, is forgotten entirely.
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const message = this.messages[i]!;
      if (message.role === 'assistant' && message.content === null && !message.tool_calls) this.messages.splice(i, 1);
    }
    return sentences.map((s) => s.spoken).filter(Boolean).join(' ');
  }
}
