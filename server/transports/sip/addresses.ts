// Addresses: whether a peer is among an account's SIP sources, and which of ours to name when
// listening on every interface.
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { parseSource } from '../../security/carrier-credentials.ts';

export function sourceAllowed(list: string, address: string): boolean {
  const blocks = new BlockList();
  const plain = address.replace(/^::ffff:/, '');
  for (const entry of list.split(',')) {
    const source = parseSource(entry);
    if (!source) continue;
    if (source.prefix === (source.family === 'ipv4' ? 32 : 128)) blocks.addAddress(source.address, source.family);
    else blocks.addSubnet(source.address, source.prefix, source.family);
  }
  const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
  return blocks.check(plain, family);
}

export function firstExternalIpv4(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address;
  }
  return '127.0.0.1';
}
