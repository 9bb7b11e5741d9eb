// The per-account storage quota for flows (issue 14): how many flows an account may keep, and
// how many bytes of flow text — every published version and every draft, since each save keeps
// the text it replaced. One account's flows would otherwise grow the database, and with it the
// snapshot that the whole server takes on the thread that paces every call's audio.
//
// Call it synchronously right before the store write that adds the text, with no await in
// between: the write's transaction then runs in the same turn of the event loop, so two
// requests of one account can never both pass the check and overshoot the quota together. It is
// cheap (sizes come from SQLite's record headers, see flow-storage.ts), so routes may also call
// it early, before a flow job, to refuse at once what would be refused after the work.
//
// Limits of 0 mean none: the desktop app's server (electron/server-host.ts), like its session cap.
import { AppError } from '../../errors.ts';
import type { Services } from '../../http/services.ts';

export interface FlowStorageRequest {
  /** Flows the write creates (1 for a new flow). */
  flows?: number;
  /** UTF-8 bytes of flow text the write adds (a new version's text; a draft's growth). */
  bytes?: number;
}

const MIB = 1024 * 1024;

export async function assertFlowStorageLeft(services: Pick<Services, 'config' | 'store'>, accountId: string, adding: FlowStorageRequest): Promise<void> {
  const { flowsPerAccount, flowStorageMb } = services.config.limits;
  const addingFlows = adding.flows ?? 0;
  const addingBytes = Math.max(0, adding.bytes ?? 0);
  if ((flowsPerAccount === 0 || addingFlows === 0) && (flowStorageMb === 0 || addingBytes === 0)) return;
  const used = await services.store.flowStorage.usage(accountId);
  if (flowsPerAccount > 0 && addingFlows > 0 && used.flows + addingFlows > flowsPerAccount) {
    throw new AppError(
      'flow_quota_exceeded',
      `This account has ${used.flows} flows, the most it may keep on this server (${flowsPerAccount}); delete one first.`,
      [{ quota: 'flows', limit: flowsPerAccount, used: used.flows, adding: addingFlows }],
    );
  }
  const limitBytes = flowStorageMb * MIB;
  if (flowStorageMb > 0 && addingBytes > 0 && used.bytes + addingBytes > limitBytes) {
    throw new AppError(
      'flow_quota_exceeded',
      `This account's flows and their versions take ${mib(used.bytes)} MiB; ${mib(addingBytes)} MiB more would pass its ${flowStorageMb} MiB on this server. Delete flows it no longer needs (a flow's versions go with it).`,
      [{ quota: 'bytes', limit: limitBytes, used: used.bytes, adding: addingBytes }],
    );
  }
}

const mib = (bytes: number) => (bytes / MIB).toFixed(bytes < MIB ? 2 : 1);

/** The UTF-8 size of a text, as the quota counts it. */
export const textBytes = (text: string | undefined): number => (text === undefined ? 0 : Buffer.byteLength(text, 'utf8'));
