// What the experiment tests share: the booking flow whose first state's name says which version
// ran (its outcome comes from the variables the simulated `book` tool sets, so its analysis needs
// no model), a flow with two published versions of it, and a loop that runs requests a few at a time.
import { expect } from 'vitest';
import type { TestServer } from '../support/server.ts';

export function bookingFlow(first: string): string {
  return `id: booking
version: "1.0.0"
initial_state: ${first}
settings:
  outcome:
    booked: { type: boolean, required: true }
    size: { type: enum, values: [small, large] }
    slot: { type: string }
  success:
    - outcome: booked == true
states:
  ${first}:
    respond: false
    agent: { prompt: Ask for a time., tools: [book] }
    tools:
      book:
        description: Book the table.
        parameters: { slot: { type: string, required: true }, booked: { type: boolean, required: true }, size: { type: string, required: true } }
    transitions: { on_tool_call: { book: confirmed } }
  confirmed:
    respond: false
    agent: { prompt: Confirm the booking. }
`;
}

/** A flow with versions 1 (first state `one`) and 2 (first state `two`), 2 published. */
export async function twoVersionFlow(server: TestServer, apiKey: string): Promise<string> {
  const created = await server.request('POST', '/v1/flows', { apiKey, body: { name: 'Experimented', yaml_content: bookingFlow('one') } });
  expect(created.status, created.text).toBe(201);
  const flowId = created.body.id as string;
  const second = await server.request('PUT', `/v1/flows/${flowId}`, { apiKey, body: { yaml_content: bookingFlow('two') } });
  expect(second.body.published_version, second.text).toBe(2);
  return flowId;
}

/** Runs `work` over `items`, `width` at a time. */
export async function inTurn<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}
