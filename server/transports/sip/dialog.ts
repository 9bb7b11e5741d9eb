// A SIP dialog's state (RFC 3261 12), as a call we answer or a call we placed makes it: what each
// side's requests in the call carry, and where they go.
import { header, headerList, parseCSeq, parseNameAddr, parseUri, type SipRequest } from './message.ts';
import type { ServerTransaction } from './transactions.ts';
import type { Peer } from './transport.ts';

/** A dialog's state as either side made it (RFC 3261 12.1): who we are, who they are, where requests go. */
export interface Dialog {
  callId: string;
  localTag: string;
  /** Our URI, in the From of our requests. */
  localUri: string;
  /** The other side's From or To value, with its tag: the To of our requests. */
  remote: string;
  /** Where our requests go: the other side's Contact. */
  remoteTarget: string;
  /** Route headers for our requests, in order. */
  routeSet: string[];
  /** The other side's last CSeq. */
  remoteCseq: number;
  /** The hop the dialog's messages come from and go to (the PBX, the trunk, the proxy). */
  peer: Peer;
}

/** The dialog an INVITE we answer makes: our tag in To, the caller's Contact as the remote target, its Record-Route as the route set. */
export function dialogOfInvite(invite: ServerTransaction, localTag: string): Dialog {
  const request = invite.request;
  const remote = header(request, 'from')!;
  const contact = parseNameAddr(header(request, 'contact') ?? '');
  return {
    callId: header(request, 'call-id')!,
    localTag,
    localUri: parseNameAddr(header(request, 'to')!)!.uri,
    remote,
    remoteTarget: contact?.uri ?? parseNameAddr(remote)!.uri,
    routeSet: headerList(request, 'record-route'),
    remoteCseq: parseCSeq(header(request, 'cseq')!)!.seq,
    peer: invite.peer,
  };
}

/** Where a dialog is kept: its Call-ID and our tag. */
export function dialogKey(callId: string, localTag: string): string {
  return `${callId}|${localTag}`;
}

/** The caller's number or user, as the From header names it. */
export function callerOf(request: SipRequest): string {
  const from = parseNameAddr(header(request, 'from')!);
  const uri = from ? parseUri(from.uri) : null;
  return (uri?.user ?? from?.uri ?? 'unknown').slice(0, 64);
}
