// RFC 3261's transactions over UDP, where datagrams are lost: a refusal of an INVITE is sent again
// at T1, 2·T1, 4·T1… (at most T2 apart) until the caller's ACK, and given up after 64·T1; a
// retransmitted request is answered with the same response and not handed on twice; a request
// we send is retransmitted the same way until its answer, and after 64·T1 is a 408.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { header, parseMessage, serialize, type SipMessage, type SipRequest } from '../../../server/transports/sip/message.ts';
import { T1_MS, T2_MS, TransactionLayer, type ServerTransaction } from '../../../server/transports/sip/transactions.ts';
import type { Peer } from '../../../server/transports/sip/transport.ts';

function request(method: string, branch: string, cseq = 1): SipRequest {
  const text = [
    `${method} sip:1000@192.0.2.1 SIP/2.0`,
    `Via: SIP/2.0/UDP 192.0.2.10:5060;branch=${branch}`,
    'From: <sip:pbx@192.0.2.10>;tag=abc',
    'To: <sip:1000@192.0.2.1>',
    'Call-ID: call-1@192.0.2.10',
    `CSeq: ${cseq} ${method}`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  const parsed = parseMessage(Buffer.from(text));
  if (!parsed.ok || parsed.message.kind !== 'request') throw new Error('test request did not parse');
  return parsed.message;
}

function udpPeer(sent: SipMessage[]): Peer {
  return { protocol: 'udp', address: '192.0.2.10', port: 5060, local: { address: '192.0.2.1', port: 5060 }, send: (m) => (sent.push(m), true) };
}

const statuses = (sent: SipMessage[]) => sent.map((m) => (m.kind === 'response' ? m.status : m.method));

describe('SIP transactions over UDP', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('sends 100 Trying at once, and a refusal again with T1 doubling up to T2 until the ACK', () => {
    const sent: SipMessage[] = [];
    const handed: ServerTransaction[] = [];
    const layer = new TransactionLayer({ request: (tx) => handed.push(tx), ack: () => {} });
    const peer = udpPeer(sent);
    layer.receiveRequest(request('INVITE', 'z9hG4bKinvite1'), peer);
    expect(statuses(sent)).toEqual([100]);
    handed[0]!.reply(486);
    expect(statuses(sent)).toEqual([100, 486]);
    // Retransmitted at 500, 1500 (+1000), 3500 (+2000), 7500 (+4000), 11500 (+4000: T2).
    const at = (ms: number) => {
      vi.advanceTimersByTime(ms);
      return sent.length;
    };
    expect(at(T1_MS - 1)).toBe(2);
    expect(at(1)).toBe(3);
    expect(at(2 * T1_MS)).toBe(4);
    expect(at(4 * T1_MS)).toBe(5);
    expect(at(T2_MS)).toBe(6);
    expect(at(T2_MS)).toBe(7);
    // The INVITE again: the same answer, and the call is not handed on twice.
    layer.receiveRequest(request('INVITE', 'z9hG4bKinvite1'), peer);
    expect(statuses(sent).at(-1)).toBe(486);
    expect(handed).toHaveLength(1);
    // The ACK (same branch) stops it; a late ACK is absorbed.
    layer.receiveRequest(request('ACK', 'z9hG4bKinvite1'), peer);
    const count = sent.length;
    vi.advanceTimersByTime(64 * T1_MS);
    expect(sent.length).toBe(count);
  });

  it('gives up on a refusal never acknowledged after 64·T1', () => {
    const sent: SipMessage[] = [];
    const layer = new TransactionLayer({ request: (tx) => tx.reply(403), ack: () => {} });
    layer.receiveRequest(request('INVITE', 'z9hG4bKinvite2'), udpPeer(sent));
    vi.advanceTimersByTime(64 * T1_MS);
    const count = sent.length;
    expect(count).toBeGreaterThan(5);
    vi.advanceTimersByTime(60_000);
    expect(sent.length).toBe(count);
    expect(layer.size).toBe(0);
  });

  it('answers a retransmitted BYE with the same 200, without handing it on again, for 64·T1', () => {
    const sent: SipMessage[] = [];
    const handed: ServerTransaction[] = [];
    const layer = new TransactionLayer({
      request: (tx) => {
        handed.push(tx);
        tx.reply(200);
      },
      ack: () => {},
    });
    const peer = udpPeer(sent);
    layer.receiveRequest(request('BYE', 'z9hG4bKbye', 2), peer);
    layer.receiveRequest(request('BYE', 'z9hG4bKbye', 2), peer);
    expect(statuses(sent)).toEqual([200, 200]);
    expect(handed).toHaveLength(1);
    vi.advanceTimersByTime(64 * T1_MS);
    expect(layer.size).toBe(0);
  });

  it('retransmits a request it sends until its answer, and makes a 408 when none comes', async () => {
    const layer = new TransactionLayer({ request: () => {}, ack: () => {} });
    let sends = 0;
    const bye = request('BYE', 'z9hG4bKours', 3);
    const answered = layer.sendRequest(bye, () => (sends++, true), false);
    vi.advanceTimersByTime(T1_MS + 2 * T1_MS);
    expect(sends).toBe(3);
    layer.receiveResponse({ kind: 'response', status: 200, reason: 'OK', headers: bye.headers, body: Buffer.alloc(0) });
    expect((await answered).status).toBe(200);
    vi.advanceTimersByTime(10_000);
    expect(sends).toBe(3);

    const lost = layer.sendRequest(request('BYE', 'z9hG4bKlost', 4), () => true, false);
    vi.advanceTimersByTime(64 * T1_MS);
    expect((await lost).status).toBe(408);
  });

  it('sends an INVITE of ours again until the far end answers, waits while it rings, and acknowledges a refusal on the same branch', async () => {
    const layer = new TransactionLayer({ request: () => {}, ack: () => {} });
    const sent: SipRequest[] = [];
    const invite = request('INVITE', 'z9hG4bKoutbound', 1);
    const rang: number[] = [];
    const answered = layer.sendInvite(invite, (m) => (sent.push(m), true), false, (r) => rang.push(r.status));
    vi.advanceTimersByTime(T1_MS + 2 * T1_MS);
    expect(sent.map((m) => m.method)).toEqual(['INVITE', 'INVITE', 'INVITE']);
    // Ringing: no more retransmissions, and no 408 however long it rings.
    layer.receiveResponse({ kind: 'response', status: 180, reason: 'Ringing', headers: invite.headers, body: Buffer.alloc(0) });
    vi.advanceTimersByTime(120 * T1_MS);
    expect(sent).toHaveLength(3);
    expect(rang).toEqual([180]);
    const busy = invite.headers.map((h) => (h.name === 'to' ? { name: 'to', value: `${h.value};tag=callee1` } : h));
    layer.receiveResponse({ kind: 'response', status: 486, reason: 'Busy Here', headers: busy, body: Buffer.alloc(0) });
    expect((await answered).status).toBe(486);
    const ack = sent.at(-1)!;
    expect(ack.method).toBe('ACK');
    expect(ack.uri).toBe(invite.uri);
    expect(header(ack, 'via')).toBe(header(invite, 'via'));
    expect(header(ack, 'to')).toContain('tag=callee1');
    expect(header(ack, 'cseq')).toBe('1 ACK');
  });

  it('gives up on an INVITE of ours that nobody answers: a 408 after 64·T1, with nothing to acknowledge', async () => {
    const layer = new TransactionLayer({ request: () => {}, ack: () => {} });
    const sent: SipRequest[] = [];
    const lost = layer.sendInvite(request('INVITE', 'z9hG4bKnobody', 1), (m) => (sent.push(m), true), false, () => {});
    vi.advanceTimersByTime(64 * T1_MS);
    expect((await lost).status).toBe(408);
    expect(sent.every((m) => m.method === 'INVITE')).toBe(true);
  });
});
