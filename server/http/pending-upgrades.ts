// A voice WebSocket's connect costs the server work before it is answered: the credential looked
// up, a session token claimed (a store write), the account's providers and credit read, its flow
// parsed, the session recorded. A flood of connects to one node would queue all of that in front
// of every other account's requests. So the connects being admitted at once are counted, all
// client addresses together and per address; past either count a new connect is refused at once
// with 503 at_capacity and Retry-After, before any credential, store or flow work, and the rest of
// the server keeps answering. Only the voice session doors count (/ws and /v1/ws/{token}): a
// carrier's media streams come from few addresses and are admitted by their own signatures.
//
// A connect stops counting when its upgrade is answered: refused (the response is sent), accepted
// (the transport calls upgradeAdmitted as the WebSocket opens), or the client hangs up.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.ts';

/** Is this request a connect to one of the voice session doors? */
function isVoiceUpgrade(request: FastifyRequest): boolean {
  if (request.raw.headers.upgrade?.toLowerCase() !== 'websocket') return false;
  const path = request.url.split('?', 1)[0]!;
  return path === '/ws' || path.startsWith('/v1/ws/');
}

const RELEASE = Symbol('pending upgrade release');

type Counted = FastifyRequest & { [RELEASE]?: () => void };

/** The transport took the connect: its WebSocket is open and it no longer counts as pending. */
export function upgradeAdmitted(request: FastifyRequest): void {
  (request as Counted)[RELEASE]?.();
}

export interface PendingUpgradeLimits {
  total: number;
  perAddress: number;
}

/** The counts, apart from Fastify, so they can be read and tested alone. */
export class PendingUpgrades {
  private total = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly limits: PendingUpgradeLimits) {}

  /** Takes a place for a connect from `address`, or says which limit is reached. */
  take(address: string): { release(): void } | 'full' | 'address_full' {
    const mine = this.byAddress.get(address) ?? 0;
    if (this.total >= this.limits.total) return 'full';
    if (mine >= this.limits.perAddress) return 'address_full';
    this.total++;
    this.byAddress.set(address, mine + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.byAddress.get(address) ?? 1) - 1;
        if (left > 0) this.byAddress.set(address, left);
        else this.byAddress.delete(address);
      },
    };
  }

  get pending(): number {
    return this.total;
  }
}

export const pendingUpgradesPlugin = fp(
  async (app: FastifyInstance) => {
    const { pendingUpgrades, pendingUpgradesPerAddress } = app.services.config.limits;
    const gate = new PendingUpgrades({ total: pendingUpgrades, perAddress: pendingUpgradesPerAddress });

    // Callbacks, not async: every request passes these, and an async hook costs each a promise
    // and a turn of the microtask queue.
    app.addHook('onRequest', (request, _reply, done) => {
      if (!isVoiceUpgrade(request)) return done();
      const place = gate.take(request.ip);
      if (place === 'full' || place === 'address_full') {
        const which = place === 'full' ? `${pendingUpgrades} connects are being admitted already` : `${pendingUpgradesPerAddress} connects from this address are being admitted already`;
        return done(new AppError('at_capacity', `The server is busy admitting voice sessions (${which}); try again in a moment.`, undefined, { 'retry-after': '1' }));
      }
      (request as Counted)[RELEASE] = place.release;
      request.raw.socket.once('close', place.release);
      done();
    });
    // A refusal anywhere in admission is answered with a response: the place is free from then.
    app.addHook('onResponse', (request, _reply, done) => {
      (request as Counted)[RELEASE]?.();
      done();
    });
  },
  { name: 'voxflow-pending-upgrades', dependencies: ['voxflow-services'] },
);
