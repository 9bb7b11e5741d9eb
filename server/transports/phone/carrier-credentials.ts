// An account's credentials for one carrier, opened for the request that needs them (checking a
// webhook's signature, hanging up, placing a call) and never kept: the store holds the secret
// fields sealed, one row per field, as PATCH /v1/providers saved them.
import type { Services } from '../../http/services.ts';
import { carrierCredentials } from '../../security/carrier-credentials.ts';
import type { CarrierName, CredentialsByCarrier } from '../carriers/carrier.ts';

/** The stored fields (as the API names them) each carrier's credentials are made of. */
function fromFields<Name extends CarrierName>(carrier: Name, fields: Record<string, string>): CredentialsByCarrier[Name] | null {
  switch (carrier) {
    case 'twilio':
      return fields.account_sid && fields.auth_token ? ({ accountSid: fields.account_sid, authToken: fields.auth_token } as CredentialsByCarrier[Name]) : null;
    case 'telnyx':
      return fields.api_key && fields.public_key
        ? ({
            apiKey: fields.api_key,
            publicKey: fields.public_key,
            ...(fields.account_sid ? { accountSid: fields.account_sid } : {}),
            ...(fields.application_sid ? { applicationSid: fields.application_sid } : {}),
          } as CredentialsByCarrier[Name])
        : null;
    case 'plivo':
      return fields.auth_id && fields.auth_token ? ({ authId: fields.auth_id, authToken: fields.auth_token } as CredentialsByCarrier[Name]) : null;
    default:
      return null;
  }
}

/** The account's credentials for the carrier; null when a field it needs is missing or cannot be opened. */
export async function openCarrierCredentials<Name extends CarrierName>(
  services: Pick<Services, 'store' | 'secrets'>,
  accountId: string,
  carrier: Name,
): Promise<CredentialsByCarrier[Name] | null> {
  let fields: Record<string, string>;
  try {
    fields = await carrierCredentials(services.store.providers, services.secrets, accountId, carrier);
  } catch {
    // Sealed under another server key (a data folder restored without its key): unusable.
    return null;
  }
  return fromFields(carrier, fields);
}
