// The SIP endpoint as a part of the app (docs/sip.md): off unless VOXFLOW_SIP_LISTEN names where to
// listen. Its sockets are bound while the app is built, so a port taken is an error at start, and
// where they listen (port 0 resolved) is in the app's services. Closing the app ends every SIP call
// with a BYE, then stops listening.
import type { FastifyInstance } from 'fastify';
import { SipEndpoint } from './endpoint.ts';

export async function sipTransport(app: FastifyInstance): Promise<void> {
  const { config } = app.services;
  if (config.sip.listen.length === 0) {
    if (config.sip.register) throw new Error('VOXFLOW_SIP_REGISTER: registering needs VOXFLOW_SIP_LISTEN (a udp: listener, where the trunk then sends its calls)');
    return;
  }
  const endpoint = new SipEndpoint(app, {
    listen: config.sip.listen,
    rtpPorts: config.sip.rtpPorts,
    mediaAddress: config.sip.mediaAddress,
    register: config.sip.register,
    registerPassword: config.sip.registerPassword,
    outboundProxy: config.sip.outboundProxy,
    tlsCert: config.sip.tlsCert,
    tlsKey: config.sip.tlsKey,
    registerCa: config.sip.registerCa,
  }, app.log.child({ transport: 'sip' }));
  await endpoint.start();
  app.services.sipListening.push(...endpoint.listening);
  const registration = endpoint.registration;
  if (registration) app.services.sipRegistration = () => ({ state: registration.state, error: registration.lastError });
  const outbound = endpoint.outbound;
  if (outbound) app.services.sipCalls = { place: (call) => outbound.place(call) };
  // Before the engine ends the sessions, so each call ends with its BYE rather than a silent line.
  app.addHook('preClose', async () => {
    await endpoint.close();
    app.services.sipListening.length = 0;
    app.services.sipCalls = null;
    app.services.sipRegistration = null;
  });
}
