// An account's credentials for one carrier, opened for the request that needs them (checking a
// webhook's signature, hanging up, placing a call) and never kept: the store holds the secret
// fields sealed, one row per field (PATCH /v1/providers sets them).
import type { Services } from '../../http/services.ts';
import { carrierFieldContext } from '../../security/carrier-fields.ts';
import type { CarrierName, CredentialsByCarrier } from '../carriers/carrier.ts';

/** The fields each carrier needs, by the names PATCH /v1/providers stores them under. */
const REQUIRED: { [Name in CarrierName]: ReadonlyArray<keyof CredentialsByCarrier[Name] & string> } = {
  twilio: ['accountSid', 'authToken'],
  telnyx: ['apiKey', 'publicKey'],
  plivo: ['authId', 'authToken'],
};

/** The account's credentials for the carrier; null when any field it needs is missing or cannot be opened. */
export async function openCarrierCredentials<Name extends CarrierName>(
  services: Pick<Services, 'store' | 'secrets'>,
  accountId: string,
  carrier: Name,
): Promise<CredentialsByCarrier[Name] | null> {
  const fields = await services.store.providers.carrierCredentials(accountId, carrier);
  const opened: Record<string, string> = {};
  for (const field of fields) {
    if (field.valuePlain !== null) opened[field.field] = field.valuePlain;
    else if (field.valueEnc !== null) {
      try {
        opened[field.field] = services.secrets.open(field.valueEnc, carrierFieldContext(accountId, carrier, field.field));
      } catch {
        // Sealed under another server key (a data folder restored without its key): unusable.
        return null;
      }
    }
  }
  for (const name of REQUIRED[carrier]) if (!opened[name]) return null;
  return opened as unknown as CredentialsByCarrier[Name];
}
