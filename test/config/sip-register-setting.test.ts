// The --sip-register setting: who Voxflow registers as and where, read from one flag, with the
// password only from the environment (the process list shows flags), and a clear error that never
// repeats a password someone put in the flag by mistake.
import { describe, expect, it } from 'vitest';
import { makeConfig, parseCommandLine } from '../../server/config.ts';

const configOf = (args: string[], env: Record<string, string> = {}) => makeConfig(parseCommandLine(args, env).config);

describe('--sip-register', () => {
  it('reads the user, the registrar, its port and the options, and the password from the environment', () => {
    const config = configOf(['--sip-listen', 'udp:0.0.0.0:5060', '--sip-register', 'voxflow@sip.example.com:5080;expires=120;retry=30;auth_user=acct-77;transport=tcp'], { VOXFLOW_SIP_REGISTER_PASSWORD: 'p4ss' });
    expect(config.sip.register).toEqual({ user: 'voxflow', host: 'sip.example.com', port: 5080, expires: 120, retry: 30, authUser: 'acct-77', transport: 'tcp' });
    expect(config.sip.registerPassword).toBe('p4ss');
    expect(configOf([], { VOXFLOW_SIP_REGISTER: '+15551234567@trunk.example.net' }).sip.register).toEqual({
      user: '+15551234567',
      host: 'trunk.example.net',
      port: 5060,
      expires: 300,
      retry: 5,
      authUser: '+15551234567',
      transport: 'udp',
    });
  });

  it('registers over TLS for sips: or ;transport=tls, on port 5061 unless given, with the CA file to check the registrar against', () => {
    const config = configOf(['--sip-listen', 'tls:0.0.0.0:5061', '--sip-register', 'sips:voxflow@sip.example.com', '--sip-register-ca', '/etc/voxflow/trunk-ca.pem']);
    expect(config.sip.register).toEqual({ user: 'voxflow', host: 'sip.example.com', port: 5061, expires: 300, retry: 5, authUser: 'voxflow', transport: 'tls' });
    expect(config.sip.registerCa).toBe('/etc/voxflow/trunk-ca.pem');
    expect(configOf([], { VOXFLOW_SIP_REGISTER: 'voxflow@sip.example.com:5071;transport=tls' }).sip.register).toMatchObject({ port: 5071, transport: 'tls' });
  });

  it('refuses a password in the flag without repeating it', () => {
    let message = '';
    try {
      configOf(['--sip-register', 'voxflow:hunter2-secret@sip.example.com']);
    } catch (error) {
      message = String(error);
    }
    expect(message).toMatch(/sip\.register/);
    expect(message).toMatch(/VOXFLOW_SIP_REGISTER_PASSWORD/);
    expect(message).not.toContain('hunter2-secret');
  });

  it.each(['sip.example.com', 'voxflow@', 'voxflow@sip.example.com;expires=5', 'voxflow@sip.example.com;retry=0', 'voxflow@sip.example.com;retry=301', 'voxflow@sip.example.com;transport=sctp', 'sips:voxflow@sip.example.com;transport=udp', 'voxflow@sip.example.com:99999'])('refuses %s', (value) => {
    expect(() => configOf(['--sip-register', value])).toThrow(/sip\.register: must be <user>@<host>/);
  });

  it('has no flag for the password', () => {
    expect(() => parseCommandLine(['--sip-register-password', 'x'], {})).toThrow(/unknown option/);
  });
});
