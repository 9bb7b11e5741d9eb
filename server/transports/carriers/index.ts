// Every carrier by name, for the routes (`/telephony/{carrier}/voice`) and the session.
import type { Carrier, CarrierName } from './carrier.ts';
import { plivo } from './plivo/index.ts';
import { telnyx } from './telnyx/index.ts';
import { twilio } from './twilio/index.ts';

export const CARRIERS: { readonly [Name in CarrierName]: Carrier<Name> } = { twilio, telnyx, plivo };

export function isCarrierName(value: string): value is CarrierName {
  return Object.hasOwn(CARRIERS, value);
}
