// A body over its route's limit is refused with 413 before it has all arrived. Fastify then
// asks for the connection to be closed, and Node closes it as soon as the answer is written: the
// bytes the client is still sending then meet a closed socket, the client's kernel gets a reset,
// and a reset throws away the 413 it had received but not yet read (a client busy, or one that
// reads only once it has sent everything, never sees it). So, as nginx's lingering close does,
// the rest of the upload is read and thrown away, and the connection is kept for the client's
// next request; past DISCARD_AT_MOST_BYTES, or the server's request timeout, it is cut.
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How much more of a refused upload is read and thrown away: well past any limit a route has. */
const DISCARD_AT_MOST_BYTES = 16 * 1024 * 1024;

/** How often the bytes read meanwhile are looked at. */
const CHECK_EVERY_MS = 200;

/** Called as a refused upload's 413 is sent: the client can read it, whatever it sends meanwhile. */
export function discardRestOfUpload(request: FastifyRequest, reply: FastifyReply): void {
  const incoming = request.raw;
  const socket = incoming.socket;
  if (incoming.complete) return;
  // Kept alive, Node reads the rest of the body and throws it away (IncomingMessage._dump) once
  // the answer is written. What it discards reaches no listener, so the bound is checked on the
  // socket's count of bytes read.
  void reply.removeHeader('connection');
  const readBefore = socket.bytesRead;
  const check = setInterval(() => {
    if (socket.bytesRead - readBefore > DISCARD_AT_MOST_BYTES) socket.destroy();
  }, CHECK_EVERY_MS);
  check.unref();
  const stop = () => clearInterval(check);
  incoming.once('end', stop);
  incoming.once('close', stop);
  socket.once('close', stop);
  // Discarding only starts once the answer is out; a body nobody reads would otherwise wait.
  reply.raw.once('finish', () => incoming.resume());
}
