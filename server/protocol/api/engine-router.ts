// What the open server endpoints and the engine router answer: health, capabilities, the WebRTC
// offer and its trickled candidates, and the ICE servers.
import { z } from 'zod';

/** The hosted API's health and the engine router's provider report in one body. */
export const Health = z.object({
  status: z.enum(['ok', 'degraded']),
  /** False when the store refuses writes: the answer is then a 503, so a load balancer stops sending calls. */
  store_writable: z.boolean(),
  service: z.string(),
  transport: z.string(),
  stt_provider: z.string(),
  stt_configured: z.boolean(),
  tts_provider: z.string(),
  tts_configured: z.boolean(),
  llm_provider: z.string(),
  llm_configured: z.boolean(),
  turn_provider: z.string(),
  turn_configured: z.boolean(),
  system_prompt_configured: z.boolean(),
  /** The least free space of the disks this node writes to (data folder, recordings); null before it is first measured. */
  disk_free_bytes: z.number().nullable(),
  /** Why the status is degraded, one sentence each (the store refusing writes, a disk nearly full); empty when ok. */
  problems: z.array(z.string()),
  /** The SIP registration to a trunk (VOXFLOW_SIP_REGISTER): registering, registered or failing, and why it fails; absent without one. It does not make the node degraded: its other calls still work. */
  sip_registration: z.object({ state: z.enum(['registering', 'registered', 'failing', 'stopped']), error: z.string().nullable() }).optional(),
});

export const Capabilities = z.object({
  stt: z.object({ provider: z.string() }),
  tts: z.object({ provider: z.string() }),
  llm: z.object({ provider: z.string(), model: z.string().nullable() }),
  /** `ready` turns true once the voice activity model has loaded, a moment after start-up. */
  turn: z.object({ provider: z.string(), ready: z.boolean() }),
  transport: z.object({ webrtc: z.boolean(), websocket: z.boolean() }),
});

export const OfferAnswer = z.object({ pc_id: z.string(), sdp: z.string(), type: z.literal('answer') });
export const CandidatesAdded = z.object({ status: z.literal('success') });

export const IceConfiguration = z.object({
  iceServers: z.array(z.object({ urls: z.string(), username: z.string().optional(), credential: z.string().optional() })),
  ttlSeconds: z.number(),
});
