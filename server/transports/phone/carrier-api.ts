import type { Config } from '../../config.ts';
import type { CarrierName } from '../carriers/carrier.ts';

/** The carrier's REST API: the configured one (a regional edge, a test's fake), else the carrier's own. */
export function carrierApiUrl(config: Config, carrier: CarrierName): string | undefined {
  return carrier === 'twilio' ? config.carriers.twilioApiUrl : carrier === 'telnyx' ? config.carriers.telnyxApiUrl : config.carriers.plivoApiUrl;
}
