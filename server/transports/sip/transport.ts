// SIP's transports (RFC 3261 §18): UDP datagrams, and TCP streams framed by Content-Length (TLS:
// the same stream, encrypted, with the server's certificate; RFC 3261 §26.2: no client certificate
// is asked for, the peer is trusted by its address or digest as over TCP). Every
// message read is handed on parsed (message.ts), with where it came from and how to answer
// there: over UDP to the address and port it came from (as RFC 3581's rport does, which also
// gets through a NAT), over TCP on the connection it came on.
//
// Limits for a port open to anyone: a datagram or a message over MAX_MESSAGE_BYTES is dropped
// (a TCP connection that sends one is closed, since its framing is lost); a TCP connection that
// stays silent for two minutes is closed, and at most MAX_TCP_CONNECTIONS are held at once.
import { createSocket, type Socket } from 'node:dgram';
import { readFile } from 'node:fs/promises';
import { createConnection, createServer, isIP, type Server, type Socket as TcpSocket } from 'node:net';
import { checkServerIdentity, connect as connectTls, createSecureContext, createServer as createTlsServer } from 'node:tls';
import { MAX_MESSAGE_BYTES, parseMessage, serialize, type ParseResult, type SipMessage } from './message.ts';

export type SipProtocol = 'udp' | 'tcp' | 'tls';

export interface SipListen {
  protocol: SipProtocol;
  host: string;
  port: number;
}

/** Where a message came from, and the way back. */
export interface Peer {
  protocol: SipProtocol;
  address: string;
  port: number;
  /** Sends a message back to this peer (on the same connection over TCP); false when that is no longer possible. */
  send(message: SipMessage): boolean;
  /** Our address and port on this path (for Via and Contact). */
  local: { address: string; port: number };
}

export type Inbound = (result: ParseResult, peer: Peer) => void;

const MAX_TCP_CONNECTIONS = 256;
const TCP_IDLE_MS = 120_000;

export interface Listening {
  protocol: SipProtocol;
  host: string;
  port: number;
  /** Sends a message over this transport to an address (UDP), or over an open connection to it (TCP). */
  sendTo(message: SipMessage, address: string, port: number): boolean;
  close(): Promise<void>;
}

/** Parses `udp:127.0.0.1:5060` (and `tcp:[::1]:5060`, `tls:0.0.0.0:5061`); null when malformed. */
export function parseListen(text: string): SipListen | null {
  const match = /^(udp|tcp|tls):(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.\-]+):(\d{1,5})$/.exec(text.trim());
  if (!match) return null;
  const port = Number(match[3]);
  if (port > 65535) return null;
  return { protocol: match[1] as SipProtocol, host: match[2]!.replace(/^\[(.*)\]$/, '$1'), port };
}

export async function listenUdp(listen: SipListen, inbound: Inbound): Promise<Listening> {
  const socket: Socket = createSocket({ type: listen.host.includes(':') ? 'udp6' : 'udp4' });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(listen.port, listen.host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  // A send failing (an unreachable peer) is that peer's problem, never the process's.
  socket.on('error', () => {});
  const bound = socket.address();
  const local = { address: listen.host, port: bound.port };
  const sendTo = (message: SipMessage, address: string, port: number): boolean => {
    try {
      socket.send(serialize(message), port, address);
      return true;
    } catch {
      return false;
    }
  };
  socket.on('message', (data, remote) => {
    // A keep-alive (RFC 5626 CRLF, or a lone CRLF some phones send) is not a message.
    if (data.length <= 4 && data.toString('latin1').trim() === '') return;
    const peer: Peer = { protocol: 'udp', address: remote.address, port: remote.port, local, send: (message) => sendTo(message, remote.address, remote.port) };
    inbound(parseMessage(data), peer);
  });
  return {
    protocol: 'udp',
    host: listen.host,
    port: bound.port,
    sendTo,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/**
 * A tls: listener's certificate and key, read and checked at start: a missing setting, a file that
 * cannot be read, or PEM that is not a certificate with its key is an error naming the setting and
 * the file (never the key's content).
 */
export async function readTlsFiles(certPath: string | undefined, keyPath: string | undefined): Promise<TlsFiles> {
  if (!certPath || !keyPath) {
    throw new Error('VOXFLOW_SIP_LISTEN has a tls: listener: set VOXFLOW_SIP_TLS_CERT and VOXFLOW_SIP_TLS_KEY (--sip-tls-cert, --sip-tls-key) to its PEM certificate and private key files');
  }
  const read = async (setting: string, path: string) => {
    try {
      return await readFile(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Error(`${setting}: cannot read "${path}" (${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable')})`);
    }
  };
  const cert = await read('VOXFLOW_SIP_TLS_CERT', certPath);
  const key = await read('VOXFLOW_SIP_TLS_KEY', keyPath);
  try {
    createSecureContext({ cert, key });
    return { cert, key };
  } catch (error) {
    // OpenSSL's reason only (e.g. "key values mismatch"): nothing of the files is repeated.
    const reason = error instanceof Error ? error.message.split('\n')[0]!.slice(0, 120) : 'unusable';
    throw new Error(`VOXFLOW_SIP_TLS_CERT / VOXFLOW_SIP_TLS_KEY: "${certPath}" and "${keyPath}" are not a PEM certificate and its private key (${reason})`);
  }
}

/** A tls: listener's PEM certificate (chain) and private key. */
export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

/** A stream listener: TCP, or TLS when given its certificate. */
export async function listenTcp(listen: SipListen, inbound: Inbound, tls?: TlsFiles): Promise<Listening> {
  const connections = new Set<TcpSocket>();
  const protocol: SipProtocol = tls ? 'tls' : 'tcp';
  const onConnection = (socket: TcpSocket) => {
    if (connections.size >= MAX_TCP_CONNECTIONS) {
      socket.destroy();
      return;
    }
    connections.add(socket);
    socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
    socket.on('close', () => connections.delete(socket));
    socket.on('error', () => socket.destroy());
    readStream(socket, streamPeer(socket, protocol, { address: listen.host, port: (server.address() as { port: number }).port }), inbound);
  };
  const server: Server = tls
    ? createTlsServer({ cert: tls.cert, key: tls.key, handshakeTimeout: 10_000 }, onConnection).on('tlsClientError', () => {})
    : createServer(onConnection);
  server.maxConnections = MAX_TCP_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  return {
    protocol,
    host: listen.host,
    port,
    sendTo(message, address, toPort) {
      for (const socket of connections) {
        if (socket.remoteAddress === address && socket.remotePort === toPort && socket.writable) {
          socket.write(serialize(message));
          return true;
        }
      }
      return false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of connections) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The peer at the other end of a stream: answered on the same connection. */
function streamPeer(socket: TcpSocket, protocol: SipProtocol, local: { address: string; port: number }): Peer {
  return {
    protocol,
    address: socket.remoteAddress ?? '',
    port: socket.remotePort ?? 0,
    local,
    send: (message) => {
      if (socket.destroyed || !socket.writable) return false;
      socket.write(serialize(message));
      return true;
    },
  };
}

/** Reads SIP messages from a stream, framed by Content-Length, and hands each on. */
function readStream(socket: TcpSocket, peer: Peer, inbound: Inbound): void {
  let buffer: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      // Keep-alive CRLFs between messages (RFC 5626 §3.5.1): a double CRLF is answered with one.
      while (buffer.length >= 2 && buffer[0] === 13 && buffer[1] === 10) {
        if (buffer.length >= 4 && buffer[2] === 13 && buffer[3] === 10) {
          socket.write('\r\n');
          buffer = buffer.subarray(4);
        } else buffer = buffer.subarray(2);
      }
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buffer.length > MAX_MESSAGE_BYTES) socket.destroy();
        return;
      }
      const lengthMatch = /\r\n(?:content-length|l)[ \t]*:[ \t]*(\d{1,9})[ \t]*(?:\r\n|$)/i.exec(buffer.subarray(0, end + 2).toString('latin1'));
      if (!lengthMatch) {
        // No framing: the message is answered if it can be, and the stream cannot go on.
        inbound(parseMessage(buffer.subarray(0, end + 4), { stream: true }), peer);
        socket.end();
        return;
      }
      const total = end + 4 + Number(lengthMatch[1]);
      if (total > MAX_MESSAGE_BYTES) {
        socket.destroy();
        return;
      }
      if (buffer.length < total) return;
      const message = buffer.subarray(0, total);
      buffer = buffer.subarray(total);
      inbound(parseMessage(Buffer.from(message), { stream: true }), peer);
    }
  });
}

/** A connection we opened (a registration over TCP or TLS): requests go on it, and what comes back is read as any stream. */
export interface Connection {
  readonly peer: Peer;
  readonly open: boolean;
  close(): void;
}

/** How a connection of ours is secured: TLS, the peer's certificate checked against `ca` (the system's CAs when null) for `host`. */
export interface ConnectTls {
  ca: Buffer | null;
  /** The name the certificate must carry: the registrar's host as configured (a name or an IP address). */
  host: string;
}

/**
 * Opens a TCP connection (TLS when `tls` is given) to a registrar or proxy; what arrives on it
 * (responses, and requests the other side sends back on it) goes to `inbound`. `local` is what our
 * Via and Contact name (our listener), not the connection's own port. A TLS peer whose certificate
 * does not verify (unknown CA, wrong name, expired) is refused, and the error says so.
 */
export async function connectTcp(address: string, port: number, local: { address: string; port: number }, inbound: Inbound, closed: () => void, tls?: ConnectTls): Promise<Connection> {
  const kind = tls ? 'TLS' : 'TCP';
  const socket: TcpSocket = tls
    ? connectTls({ host: address, port, ca: tls.ca ?? undefined, rejectUnauthorized: true, ...(isIP(tls.host) ? {} : { servername: tls.host }), checkServerIdentity: (_name, cert) => checkServerIdentity(tls.host, cert) })
    : createConnection({ host: address, port });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no ${kind} connection to ${address}:${port} within 10 s`));
    }, 10_000);
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      const refused = tls && (/certificate|self.signed|issuer|altname|Hostname/i.test(error.message) || /CERT|SIGNED|ISSUER/.test(error.code ?? ''));
      reject(new Error(refused ? `the certificate of ${tls.host}:${port} was refused: ${error.message}${error.code ? ` (${error.code})` : ''}; check VOXFLOW_SIP_REGISTER_CA` : `no ${kind} connection to ${address}:${port}: ${error.message}`));
    });
  });
  socket.on('error', () => socket.destroy());
  socket.setKeepAlive(true, 30_000);
  socket.on('close', closed);
  const peer = streamPeer(socket, tls ? 'tls' : 'tcp', local);
  readStream(socket, peer, inbound);
  return {
    peer,
    get open() {
      return !socket.destroyed && socket.writable;
    },
    close: () => void socket.end(),
  };
}
