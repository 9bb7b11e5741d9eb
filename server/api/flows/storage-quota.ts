// The per-account storage quota for flows: how many flows an account may keep, and
// how many bytes of flow text — every published version and every draft, since each save keeps
// the text it replaced. One account's flows would otherwise grow the database, and with it the
// snapshot that the whole server takes on the thread that paces every call's audio.
//
// A write that adds text goes through withFlowStorageLeft: the check and the write run as one
// turn of the account's queue on this server, so two requests of one account can never both
// pass the check and overshoot the quota together. (The store answers from another thread or
// over the network, so "no await between the check and the write" no longer made that hold.)
// Servers sharing PostgreSQL check each on its own, so uploads to two nodes at the same moment
// can pass a quota by a flow. The check is cheap (sizes come from
// SQLite's record headers, see flow-storage.ts), so routes also call assertFlowStorageLeft
// early, before a flow job, to refuse at once what would be refused after the work.
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
  const limitBytes = Math.floor(flowStorageMb * MIB);
  if (flowStorageMb > 0 && addingBytes > 0 && used.bytes + addingBytes > limitBytes) {
    throw new AppError(
      'flow_quota_exceeded',
      `This account's flows and their versions take ${mib(used.bytes)} MiB; ${mib(addingBytes)} MiB more would pass its ${flowStorageMb} MiB on this server. Delete flows it no longer needs (a flow's versions go with it).`,
      [{ quota: 'bytes', limit: limitBytes, used: used.bytes, adding: addingBytes }],
    );
  }
}

/**
 * The UTF-8 bytes of new flow text the account may still add: -1 when it may keep no more
 * flows, Infinity without limits. A hint for skipping work the check would refuse anyway
 * (assertFlowStorageLeft still decides).
 */
export async function newFlowBytesLeft(services: Pick<Services, 'config' | 'store'>, accountId: string): Promise<number> {
  const { flowsPerAccount, flowStorageMb } = services.config.limits;
  if (flowsPerAccount === 0 && flowStorageMb === 0) return Infinity;
  const used = await services.store.flowStorage.usage(accountId);
  if (flowsPerAccount > 0 && used.flows + 1 > flowsPerAccount) return -1;
  return flowStorageMb > 0 ? Math.floor(flowStorageMb * MIB) - used.bytes : Infinity;
}

/** Each account's last quota-checked write on this server: the next one waits for it. */
const writing = new Map<string, Promise<unknown>>();

/**
 * Checks the quota, then runs `write`, with no other quota-checked write of the account between
 * the two on this server. The queue holds only writes: reads and other accounts never wait on it.
 */
export function withFlowStorageLeft<T>(
  services: Pick<Services, 'config' | 'store'>,
  accountId: string,
  adding: FlowStorageRequest | (() => Promise<FlowStorageRequest>),
  write: () => Promise<T>,
): Promise<T> {
  const before = writing.get(accountId) ?? Promise.resolve();
  const turn = before.then(async () => {
    // A size that depends on what is stored (a draft's growth) is read in the turn, too.
    await assertFlowStorageLeft(services, accountId, typeof adding === 'function' ? await adding() : adding);
    return write();
  });
  const settled = turn.then(
    () => undefined,
    () => undefined,
  );
  writing.set(accountId, settled);
  void settled.then(() => {
    if (writing.get(accountId) === settled) writing.delete(accountId);
  });
  return turn;
}

const mib = (bytes: number) => (bytes / MIB).toFixed(bytes < MIB ? 2 : 1);

/** The UTF-8 size of a text, as the quota counts it. */
export const textBytes = (text: string | undefined): number => (text === undefined ? 0 : Buffer.byteLength(text, 'utf8'));
