// A voice rig that takes phone calls: the server with the provider fakes, a carrier's fake REST
// API, an account with that carrier's credentials and a number bound to a published flow. A call
// is what the carrier does: a signed voice webhook, then the media stream our markup names.
import { afterAll, beforeAll, expect, inject, vi } from 'vitest';
import type { CarrierName } from '../../server/transports/carriers/carrier.ts';
import { FakeCarrierStream, streamTargetFromMarkup } from '../fakes/carriers/media-stream-client.ts';
import { startFakeCarrierApi, type FakeCarrierApi, type FakeCarrierAuth } from '../fakes/carriers/rest-server.ts';
import { telnyxSigningKey } from '../fakes/carriers/signing.ts';
import { inboundCallParams, sendVoiceWebhook, type SentWebhook, type WebhookSigner } from '../fakes/carriers/voice-webhook.ts';
import { RIG_START_TIMEOUT_MS, startVoiceRig, type VoiceRig, type VoiceRigOptions } from './voice-server.ts';

export const BUSINESS_NUMBER = '+15550100002';
export const CALLER_NUMBER = '+15550100001';

export interface PhoneRig extends VoiceRig {
  carrier: CarrierName;
  api: FakeCarrierApi;
  signer: WebhookSigner;
  numberId: string;
  /** The carrier's webhook for a call to the business's number; its markup, as sent back. */
  ring(callId: string, options?: { to?: string; signer?: WebhookSigner }): Promise<SentWebhook>;
  /** Rings, then opens the stream the markup names, as the carrier does once the call is answered. */
  call(callId: string): Promise<FakeCarrierStream>;
  /** The call of this carrier that is live now, as `GET /v1/sessions` lists it, waited for up to 15 s. */
  liveSession(): Promise<{ id: string; from: string; to: string }>;
}

/**
 * The carriers a phone test file runs its cases for: every one it names on the embedded store,
 * and only `onPostgres` in the `postgres` project. What the store keeps of a call (its number,
 * session, billing, keypad presses, transfer legs) is the same whichever carrier carried it, and
 * the carriers' own protocols are already asked on the embedded store; each file names a
 * different carrier for PostgreSQL, so every carrier's calls reach it. `onPostgres: null` runs
 * the cases on the embedded store only: cases about a timer or one carrier's own protocol, whose
 * store writes another case of the file already makes on PostgreSQL. The phone files were half
 * of that project's time, and the suite must keep within minutes on two cores.
 */
export function carriersToTest<C extends CarrierName>(carriers: readonly C[], onPostgres: C | null): readonly C[] {
  const onPostgresProject = process.env.VITEST ? Boolean(inject('voxflowPostgres')) : false;
  if (!onPostgresProject) return carriers;
  return onPostgres === null ? [] : [onPostgres];
}

const TWILIO_SID = 'AC0123456789abcdef0123456789abcdef';

function carrierSetup(carrier: CarrierName) {
  if (carrier === 'twilio') {
    const authToken = 'twilio-auth-token-0001';
    return {
      auth: { carrier, accountSid: TWILIO_SID, authToken } as FakeCarrierAuth,
      signer: { carrier, authToken } as WebhookSigner,
      credentials: { twilio_account_sid: TWILIO_SID, twilio_auth_token: authToken },
    };
  }
  if (carrier === 'telnyx') {
    const key = telnyxSigningKey();
    const apiKey = 'KEY0123456789telnyx';
    const accountSid = 'telnyx-account-0001';
    return {
      auth: { carrier, apiKey, accountSid } as FakeCarrierAuth,
      signer: { carrier, key } as WebhookSigner,
      credentials: { telnyx_api_key: apiKey, telnyx_public_key: key.publicKeyBase64, telnyx_account_sid: accountSid, telnyx_application_sid: 'texml-app-0001' },
    };
  }
  const authId = 'MA0123456789ABCDEFGH';
  const authToken = 'plivo-auth-token-0001';
  return {
    auth: { carrier, authId, authToken } as FakeCarrierAuth,
    signer: { carrier, authToken } as WebhookSigner,
    credentials: { plivo_auth_id: authId, plivo_auth_token: authToken },
  };
}

export async function startPhoneRig(carrier: CarrierName, options: VoiceRigOptions & { flowYaml?: string } = {}): Promise<PhoneRig> {
  const setup = carrierSetup(carrier);
  const api = await startFakeCarrierApi(setup.auth);
  let rig: VoiceRig;
  try {
    rig = await startVoiceRig({
      ...options,
      config: { ...options.config, carriers: { twilioApiUrl: api.baseUrl, telnyxApiUrl: api.baseUrl, plivoApiUrl: api.baseUrl } },
    });
  } catch (error) {
    await api.close();
    throw error;
  }
  const close = async () => {
    await rig.close();
    await api.close();
  };
  try {
    const { server, account } = rig;
    let flowId = rig.flowId;
    if (options.flowYaml) {
      const created = await server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: 'Phone flow', yaml_content: options.flowYaml } });
      if (created.status !== 201) throw new Error(`flow: ${created.status} ${created.text}`);
      flowId = created.body.id;
    }
    const saved = await server.request('PATCH', '/v1/providers', { jwt: account.jwt, body: setup.credentials });
    if (saved.status !== 200) throw new Error(`carrier credentials: ${saved.status} ${saved.text}`);
    const bound = await server.request('POST', '/v1/phone-numbers', { jwt: account.jwt, body: { carrier, number: BUSINESS_NUMBER, flow_id: flowId, label: 'Front desk' } });
    if (bound.status !== 201) throw new Error(`phone number: ${bound.status} ${bound.text}`);
    const webhookUrl = bound.body.webhook_url as string;
    const ring: PhoneRig['ring'] = (callId, ringOptions = {}) =>
      sendVoiceWebhook(ringOptions.signer ?? setup.signer, webhookUrl, inboundCallParams(carrier, { callId, from: CALLER_NUMBER, to: ringOptions.to ?? BUSINESS_NUMBER }));
    return {
      ...rig,
      flowId,
      carrier,
      api,
      signer: setup.signer,
      numberId: bound.body.id,
      ring,
      async call(callId) {
        const answered = await ring(callId);
        if (answered.status !== 200) throw new Error(`voice webhook: ${answered.status} ${answered.body}`);
        api.addLiveCall(callId, { from: CALLER_NUMBER, to: BUSINESS_NUMBER });
        const stream = await FakeCarrierStream.connect({ carrier, target: streamTargetFromMarkup(carrier, answered.body), callId, from: CALLER_NUMBER, to: BUSINESS_NUMBER });
        // A call moved elsewhere (a transfer) leaves its stream: the carrier stops it and closes it.
        api.whenRedirected(callId, () => void stream.hangUp());
        return stream;
      },
      liveSession: () =>
        vi.waitFor(
          async () => {
            const list = await server.request('GET', '/v1/sessions', { apiKey: account.apiKey });
            const found = list.body.find((s: { transport: string; status: string }) => s.transport === carrier && s.status === 'connected');
            expect(found, `no ${carrier} call is live yet`).toBeDefined();
            return found as { id: string; from: string; to: string };
          },
          { timeout: 15_000, interval: 100 },
        ),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** A phone rig for a test file: started before its tests, closed after them. */
export function usePhoneRig(carrier: CarrierName, options: VoiceRigOptions & { flowYaml?: string } = {}): () => PhoneRig {
  let rig: PhoneRig | undefined;
  let starting: Promise<PhoneRig> | undefined;
  beforeAll(async () => {
    starting = startPhoneRig(carrier, options);
    rig = await starting;
  }, RIG_START_TIMEOUT_MS);
  afterAll(async () => {
    // A start the hook gave up waiting for still finishes: it is closed too, once it has.
    await (rig ?? (await starting?.catch(() => undefined)))?.close();
  }, RIG_START_TIMEOUT_MS);
  return () => {
    if (!rig) throw new Error('usePhoneRig: used outside a test, or the rig failed to start');
    return rig;
  };
}
