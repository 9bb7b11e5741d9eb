// Voice sessions over WebSocket: binary frames are PCM16 LE mono 16 kHz both ways, text frames
// are JSON events (docs/api.md#voice-sessions). Two doors to the same engine:
//   WS /v1/ws/:token             the hosted API's session, authenticated by its token alone
//   WS /ws?mode=&program_id=     the engine router, with a JWT, an API key or ?session_token=
// Refusals (unknown, expired or used token; no credit; no such flow; the account or the server
// full) happen at the upgrade, as HTTP statuses, before any WebSocket exists; connects past the
// ones being admitted at once are refused before any of those checks (http/pending-upgrades.ts).
import websocket from '@fastify/websocket';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { AppError } from '../../errors.ts';
import { noBody } from '../../http/api-contract.ts';
import { upgradeAdmitted } from '../../http/pending-upgrades.ts';
import { digest } from '../../security/opaque-tokens.ts';
import { admitClaimedSession, admitEngineSession, decorateAdmittedSession, type AdmittedSession } from '../session-admission.ts';

/** Largest frame accepted; larger ones close the socket with 1009 (message too big). */
export const MAX_FRAME_BYTES = 64 * 1024;

/** A voice session's WebSocket: binary PCM16 both ways, JSON events as text frames; refusals are the API's errors. */
const upgraded = { 101: noBody('Switched to the WebSocket protocol: the voice session is live') };

/**
 * The WebSocket server every transport's sockets share (the voice WebSocket here, the carriers'
 * media streams in ../phone): one upgrade handler on the HTTP server, registered once at the top.
 */
export const webSocketServerPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES } });
    // An upgrade refused by the auth hook (which runs before @fastify/websocket's own onRequest
    // hook marks the request as a WebSocket one) would leave the raw socket open after the error
    // response: the server's close would then wait for the client to hang up. Once answered, an
    // upgrade request that was not upgraded has nothing more to say.
    app.addHook('onResponse', (request, _reply, done) => {
      if (request.raw.headers.upgrade?.toLowerCase() === 'websocket') request.raw.socket.destroy();
      done();
    });
  },
  { name: 'voxflow-websocket-server' },
);

export async function websocketTransport(app: FastifyInstance): Promise<void> {
  const { store } = app.services;
  decorateAdmittedSession(app);

  // Hosted API: the token in the path is the only credential.
  app.get<{ Params: { token: string } }>(
    '/v1/ws/:token',
    {
      websocket: true,
      config: { auth: 'none' },
      schema: { description: 'The session token in the path is the only credential.', response: upgraded },
      preValidation: async (request) => {
        const record = await store.sessions.claim(digest(request.params.token), Date.now() / 1000);
        if (!record) throw new AppError('session_token_invalid');
        request.admittedSession = refusedIfNeverAttached(request, await admitClaimedSession(app, record));
      },
    },
    (socket, request) => attach(socket, request),
  );

  // Engine router.
  app.get(
    '/ws',
    {
      websocket: true,
      config: { auth: 'engine', startsSession: true },
      schema: { response: upgraded },
      preValidation: async (request: FastifyRequest, _reply: FastifyReply) => {
        request.admittedSession = refusedIfNeverAttached(request, await admitEngineSession(app, request, 'websocket'));
      },
    },
    (socket, request) => attach(socket, request),
  );
}

/**
 * A client that hangs up while its upgrade is admitted never gets a WebSocket: `ws` drops the
 * dead socket without calling the route's handler. Its session is refused when the connection
 * closes (which does nothing once the session started), so the record ends and the place it
 * held among the live sessions comes back.
 */
function refusedIfNeverAttached(request: FastifyRequest, admitted: AdmittedSession): AdmittedSession {
  const connection = request.raw.socket;
  const refuse = () => void admitted.refuse('client_disconnected').catch((error: unknown) => request.log.warn({ err: error }, 'could not end a session whose client left'));
  if (connection.destroyed) refuse();
  else connection.once('close', refuse);
  return admitted;
}

function attach(socket: WebSocket, request: FastifyRequest): void {
  upgradeAdmitted(request);
  const session = request.admittedSession!.start({
    sendEvent: (event) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
    },
    sendAudio: (frame) => {
      if (socket.readyState === socket.OPEN) socket.send(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength), { binary: true });
    },
    close: (code, reason) => {
      if (socket.readyState === socket.OPEN) socket.close(code, reason.slice(0, 100));
    },
  });

  socket.on('message', (data, isBinary) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (!isBinary) {
      session.handleTextFrame(bytes.toString('utf8'));
      return;
    }
    if (bytes.length % 2 !== 0) {
      session.rejectFrame('malformed_audio');
      return;
    }
    // Copy into an aligned buffer: a Buffer slice may start at an odd offset.
    const pcm = new Int16Array(bytes.length / 2);
    new Uint8Array(pcm.buffer).set(bytes);
    session.pushAudio(pcm);
  });
  socket.on('close', () => void session.end('client_disconnected'));
  socket.on('error', (error) => {
    request.log.warn({ err: error, session: session.id }, 'websocket error');
    void session.end('client_disconnected');
  });
}
