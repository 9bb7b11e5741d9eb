// The phone carriers' credentials on /v1/providers, beside the speech and model keys: each field
// of server/security/carrier-credentials.ts is a body field (`twilio_auth_token`), null clears
// it. Secrets are sealed before the store sees them and read back masked; the other fields (an
// account SID, a webhook-signing public key) are shown whole, as the carrier's console shows them.
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { CARRIER_FIELD_NAMES, carrierCredentialContext } from '../../security/carrier-credentials.ts';
import { maskSecret, type SecretBox } from '../../security/secret-box.ts';
import type { CarrierFieldChange, StoredCarrierField } from '../../store/store.ts';

/** The body fields, to extend PATCH /v1/providers' schema with. */
export const CARRIER_BODY_FIELDS = Object.fromEntries(
  CARRIER_FIELD_NAMES.map(({ name }) => [name, z.string().trim().min(1, 'must not be empty').max(512, 'at most 512 characters').nullable().optional()]),
) as Record<string, z.ZodOptional<z.ZodNullable<z.ZodString>>>;

/** The carrier fields a PATCH body sets or clears, sealed where secret; 422 for a value of the wrong shape. */
export function carrierChanges(body: Record<string, unknown>, accountId: string, secrets: SecretBox): CarrierFieldChange[] {
  const changes: CarrierFieldChange[] = [];
  for (const { name, carrier, field, spec } of CARRIER_FIELD_NAMES) {
    const value = body[name] as string | null | undefined;
    if (value === undefined) continue;
    if (value === null) {
      changes.push({ carrier, field, value: null });
      continue;
    }
    const problem = spec.problem(value);
    if (problem) throw new AppError('invalid_request', `Nothing was saved: ${name} ${problem}.`, [{ field: name, message: problem }]);
    changes.push({ carrier, field, value: spec.secret ? { sealed: secrets.seal(value, carrierCredentialContext(accountId, carrier, field)) } : { plain: value } });
  }
  return changes;
}

/** Every carrier field, null when unset, secrets masked. */
export function carrierView(secrets: SecretBox, accountId: string, stored: readonly StoredCarrierField[]): Record<string, string | null> {
  const view: Record<string, string | null> = {};
  for (const { name, carrier, field } of CARRIER_FIELD_NAMES) {
    const row = stored.find((r) => r.carrier === carrier && r.field === field);
    if (!row) view[name] = null;
    else if (row.valuePlain !== null) view[name] = row.valuePlain;
    else {
      try {
        view[name] = maskSecret(secrets.open(row.valueEnc!, carrierCredentialContext(accountId, carrier, field)));
      } catch {
        // Sealed under another secret key (a data dir restored without its key): say so, show nothing.
        view[name] = '(unreadable: set it again)';
      }
    }
  }
  return view;
}
