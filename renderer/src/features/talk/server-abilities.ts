// What this server (GET /capabilities) and the account's own provider keys (GET /v1/providers)
// offer, asked once for the page's screens that say so: the Talk tab before Talk, and the flow
// panel when a flow's settings ask for something missing. A minute old at most: a key added in
// Settings shows up on the next look after that, or at once after a reload.
import { api, type Capabilities, type ProvidersView } from '../../lib/api.ts';

export interface ServerAbilities {
  capabilities: Capabilities;
  providers: ProvidersView | null;
}

const FRESH_MS = 60_000;
let asked: { at: number; answer: Promise<ServerAbilities | null> } | null = null;

/** The server's and the account's providers; null when /capabilities cannot be read. */
export function serverAbilities(): Promise<ServerAbilities | null> {
  if (asked && Date.now() - asked.at < FRESH_MS) return asked.answer;
  const answer = Promise.all([api.capabilities(), api.providers()]).then(([capabilities, providers]) =>
    capabilities.ok ? { capabilities: capabilities.value, providers: providers.ok ? providers.value : null } : null,
  );
  asked = { at: Date.now(), answer };
  // A failed look is not kept: the next screen asks again.
  void answer.then((value) => {
    if (value === null && asked?.answer === answer) asked = null;
  });
  return answer;
}
