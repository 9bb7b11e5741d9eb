// A voice rig whose server is a SIP endpoint on loopback (UDP and TCP, ports from the OS), with an
// account that takes SIP calls from 127.0.0.1 and binds SIP user parts to flows, and the callers:
// real sipp (Debian's sip-tester) running the scenarios in test/phone/sip/fixtures/, its RTP
// played from sip-tester's own pcaps or from words flite says (`saying`), and a UDP socket of ours
// where Voxflow's RTP is sent (the scenarios' SDP names it), to hear what a caller would.
import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { afterThisFile, afterThisTest } from './after-this-test.ts';
import { alawRtpPcap } from './rtp-pcap.ts';
import { createAccount } from './server.ts';
import { padWithSilence, synthesizeSpeech } from './speech.ts';
import { RIG_START_TIMEOUT_MS, startVoiceRig, type VoiceRig, type VoiceRigOptions } from './voice-server.ts';

export const SIPP = '/usr/bin/sipp';
export const FIXTURES = fileURLToPath(new URL('../phone/sip/fixtures/', import.meta.url));
export const SIP_PASSWORD = 'trunk-password-0001';

export interface SipRig extends VoiceRig {
  udpPort: number;
  tcpPort: number;
  /** The tls: listener's port, when the rig was given a certificate; 0 otherwise. */
  tlsPort: number;
  /** Binds a SIP user part to a new published flow of the rig's account; its flow id. */
  bind(user: string, yaml: string): Promise<string>;
}

export interface SipRigOptions extends VoiceRigOptions {
  /** The account's `sip_allowed_sources` (127.0.0.1 unless set). */
  allowedSources?: string;
  /** Also set `sip_username` and `sip_password`, for digest authentication. */
  digestUser?: string;
  /** Also listen on tls: with this certificate and key (PEM file paths). */
  tls?: { certFile: string; keyFile: string };
}

export async function startSipRig(options: SipRigOptions = {}): Promise<SipRig> {
  const listen = ['udp:127.0.0.1:0', 'tcp:127.0.0.1:0', ...(options.tls ? ['tls:127.0.0.1:0'] : [])];
  const tls = options.tls ? { tlsCert: options.tls.certFile, tlsKey: options.tls.keyFile } : {};
  const rig = await startVoiceRig({ ...options, config: { ...options.config, sip: { ...options.config?.sip, ...tls, listen, rtpPorts: '0' } } });
  try {
    const listening = rig.server.app.services.sipListening;
    const udpPort = listening.find((l) => l.protocol === 'udp')!.port;
    const tcpPort = listening.find((l) => l.protocol === 'tcp')!.port;
    const tlsPort = listening.find((l) => l.protocol === 'tls')?.port ?? 0;
    const credentials = {
      sip_allowed_sources: options.allowedSources ?? '127.0.0.1',
      ...(options.digestUser ? { sip_username: options.digestUser, sip_password: SIP_PASSWORD } : {}),
    };
    const saved = await rig.server.request('PATCH', '/v1/providers', { jwt: rig.account.jwt, body: credentials });
    if (saved.status !== 200) throw new Error(`sip credentials: ${saved.status} ${saved.text}`);
    const bind = async (user: string, yaml: string) => {
      const created = await rig.server.request('POST', '/v1/flows', { apiKey: rig.account.apiKey, body: { name: `SIP ${user}`, yaml_content: yaml } });
      if (created.status !== 201) throw new Error(`flow: ${created.status} ${created.text}`);
      const bound = await rig.server.request('POST', '/v1/phone-numbers', { jwt: rig.account.jwt, body: { carrier: 'sip', number: user, flow_id: created.body.id, label: `SIP ${user}` } });
      if (bound.status !== 201) throw new Error(`phone number: ${bound.status} ${bound.text}`);
      return created.body.id as string;
    };
    return { ...rig, udpPort, tcpPort, tlsPort, bind };
  } catch (error) {
    await rig.close();
    throw error;
  }
}

export function useSipRig(options: SipRigOptions = {}): () => SipRig {
  let rig: SipRig | undefined;
  let starting: Promise<SipRig> | undefined;
  beforeAll(async () => {
    starting = startSipRig(options);
    afterThisFile(async () => (await starting?.catch(() => undefined))?.close());
    rig = await starting;
  }, RIG_START_TIMEOUT_MS);
  afterAll(async () => {
    await (rig ?? (await starting?.catch(() => undefined)))?.close();
  }, RIG_START_TIMEOUT_MS);
  return () => {
    if (!rig) throw new Error('useSipRig: used outside a test, or the rig failed to start');
    return rig;
  };
}

/** A second account on the rig's server, with its own SIP sources, binding `user` to a flow. */
export async function otherAccountBinding(rig: SipRig, user: string, yaml: string, allowedSources: string): Promise<void> {
  const account = await createAccount(rig.server);
  const saved = await rig.server.request('PATCH', '/v1/providers', { jwt: account.jwt, body: { sip_allowed_sources: allowedSources } });
  if (saved.status !== 200) throw new Error(`sip credentials: ${saved.status} ${saved.text}`);
  const created = await rig.server.request('POST', '/v1/flows', { apiKey: account.apiKey, body: { name: `SIP ${user}`, yaml_content: yaml } });
  const bound = await rig.server.request('POST', '/v1/phone-numbers', { jwt: account.jwt, body: { carrier: 'sip', number: user, flow_id: created.body.id, label: 'Other' } });
  if (bound.status !== 201) throw new Error(`phone number: ${bound.status} ${bound.text}`);
}

export interface RtpPacketSeen {
  at: number;
  /** Where it came from: Voxflow's RTP port for the call (it sends from where it receives). */
  from: { address: string; port: number };
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  marker: boolean;
  payload: Buffer;
}

/** Where Voxflow's RTP goes in a scenario: every packet, as it arrived. Closed after the test. */
export interface RtpEar {
  port: number;
  packets: RtpPacketSeen[];
  socket: Socket;
}

export async function listenForRtp(host = '127.0.0.1'): Promise<RtpEar> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  afterThisTest(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  const packets: RtpPacketSeen[] = [];
  socket.on('message', (data, remote) => {
    if (data.length < 12) return;
    packets.push({
      at: performance.now(),
      from: { address: remote.address, port: remote.port },
      payloadType: data[1]! & 0x7f,
      marker: (data[1]! & 0x80) !== 0,
      sequence: data.readUInt16BE(2),
      timestamp: data.readUInt32BE(4),
      ssrc: data.readUInt32BE(8),
      payload: data.subarray(12 + (data[0]! & 0x0f) * 4),
    });
  });
  return { port: socket.address().port, packets, socket };
}

/** An RFC 4733 telephone-event packet for a key (its start; `end` for the last of the event). */
export function telephoneEvent(key: string, options: { payloadType?: number; sequence: number; timestamp: number; end?: boolean }): Buffer {
  const packet = Buffer.alloc(16);
  packet[0] = 0x80;
  packet[1] = (options.payloadType ?? 101) | (options.end ? 0 : 0x80);
  packet.writeUInt16BE(options.sequence & 0xffff, 2);
  packet.writeUInt32BE(options.timestamp >>> 0, 4);
  packet.writeUInt32BE(0x5eed, 8);
  packet[12] = '0123456789*#ABCD'.indexOf(key);
  packet[13] = options.end ? 0x8a : 0x0a;
  packet.writeUInt16BE(800, 14);
  return packet;
}

/** A free even UDP port with the three after it free too (sipp's audio and video media ports). */
async function freeMediaPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = createSocket('udp4');
    await new Promise<void>((resolve) => first.bind(0, '127.0.0.1', resolve));
    const port = first.address().port & ~1;
    first.close();
    const held: Socket[] = [];
    let free = port + 3 < 65536;
    for (let i = 0; free && i < 4; i++) {
      const socket = createSocket('udp4');
      free = await new Promise<boolean>((resolve) => {
        socket.once('error', () => resolve(false));
        socket.bind(port + i, '127.0.0.1', () => resolve(true));
      });
      held.push(socket);
    }
    for (const socket of held) {
      try {
        socket.close();
      } catch {
        // never bound
      }
    }
    if (free) return port;
  }
  throw new Error('no free media port for sipp');
}

export interface SippRun {
  code: number | null;
  /** sipp's screen at its end, and its error log: what went wrong, when something did. */
  output: string;
}

export interface SippOptions {
  rig: SipRig;
  scenario: string;
  /** The Request-URI's user (-s). */
  service?: string;
  transport?: 'udp' | 'tcp';
  /** The caller's address (-i, and the media address): 127.0.0.2 is loopback too, and not a listed source. */
  localIp?: string;
  /** Where the scenario's SDP says our RTP goes. */
  rtpPort: number;
  /** Send to this port on 127.0.0.1 rather than the rig's (a trunk in front of it). */
  remotePort?: number;
  /** Be the called side (a UAS scenario), listening on this port. */
  uasPort?: number;
  vars?: Record<string, string>;
  extraArgs?: string[];
  timeoutSeconds?: number;
}

/** Runs one call of a scenario against the rig; resolves when sipp exits. Killed after the test if still running. */
export async function runSipp(options: SippOptions): Promise<SippRun> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-sipp-'));
  const localIp = options.localIp ?? '127.0.0.1';
  const port = options.remotePort ?? (options.transport === 'tcp' ? options.rig.tcpPort : options.rig.udpPort);
  const args = [
    '-sf', resolve(FIXTURES, options.scenario),
    ...(options.uasPort !== undefined ? ['-p', String(options.uasPort)] : ['-s', options.service ?? '1000', `127.0.0.1:${port}`]),
    '-t', options.transport === 'tcp' ? 't1' : 'u1',
    '-i', localIp,
    '-mi', localIp,
    '-mp', String(await freeMediaPort()),
    '-m', '1',
    '-l', '1',
    '-nostdin',
    '-timeout', `${options.timeoutSeconds ?? 60}s`,
    '-timeout_error',
    '-trace_err',
    '-error_file', join(dir, 'errors.log'),
    '-trace_screen',
    '-screen_file', join(dir, 'screen.log'),
    '-set', 'rtpport', String(options.rtpPort),
    ...Object.entries(options.vars ?? {}).flatMap(([name, value]) => ['-set', name, value]),
    ...(options.extraArgs ?? []),
  ];
  const child = spawn(SIPP, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let captured = '';
  child.stdout.on('data', (chunk: Buffer) => {
    if (captured.length < 20_000) captured += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    if (captured.length < 20_000) captured += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  afterThisTest(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    await rm(dir, { recursive: true, force: true });
  });
  const code = await exited;
  const logs = await Promise.all(
    (await readdir(dir)).filter((f) => f.endsWith('.log')).map(async (f) => `--- ${f}\n${(await readFile(join(dir, f), 'utf8')).slice(-4000)}`),
  );
  return { code, output: `${logs.join('\n')}\n--- stdout\n${captured.slice(-4000)}` };
}

/** A scenario's turn to talk: a pause, sip-tester's 7 s of speech, and a pause. */
const TALK = /<pause milliseconds="\d+"\/>\s*<nop>\s*<action>\s*<exec play_pcap_audio="\/usr\/share\/sip-tester\/g711a\.pcap"\/>\s*<\/action>\s*<\/nop>\s*<pause milliseconds="\d+"\/>/;

/**
 * A copy of `fixture` whose peer, rather than listen a fixed while and play sip-tester's 7 s of
 * speech, listens `listenMs`, says `words` (flite, as A-law RTP) and goes on `afterMs` once they
 * are said: as long as a test needs to hear the agent and be heard. Removed after the test.
 */
export async function saying(fixture: string, words: string, listenMs: number, afterMs: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'voxflow-sipp-talk-'));
  afterThisTest(() => rm(dir, { recursive: true, force: true }));
  const speech = padWithSilence(await synthesizeSpeech(words, { sampleRate: 8000 }), 200, 0, 8000);
  const pcap = join(dir, 'words.pcap');
  await writeFile(pcap, alawRtpPcap(speech));
  const original = await readFile(join(FIXTURES, fixture), 'utf8');
  if (!TALK.test(original)) throw new Error(`${fixture} no longer plays g711a.pcap between two pauses`);
  const talk = `<pause milliseconds="${listenMs}"/>
  <nop><action><exec play_pcap_audio="${pcap}"/></action></nop>
  <pause milliseconds="${Math.ceil((speech.length / 8000) * 1000) + afterMs}"/>`;
  const scenario = join(dir, fixture);
  await writeFile(scenario, original.replace(TALK, talk));
  return scenario;
}

/**
 * Waits until something listens on UDP `port` (a sipp UAS runSipp started there), read from
 * Linux's socket table rather than by binding the port, which could take it from sipp.
 */
export async function udpListening(port: number, timeoutMs = 20_000): Promise<void> {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const until = performance.now() + timeoutMs;
  for (;;) {
    const table = await readFile('/proc/net/udp', 'utf8');
    if (table.split('\n').some((line) => line.trim().split(/\s+/)[1]?.endsWith(hex))) return;
    if (performance.now() > until) throw new Error(`nothing listens on UDP port ${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A flow that thanks the caller and hangs up: what a call needs when only its routing is tested. */
export const goodbyeFlow = (id: string) => `
id: ${id}
version: "1.0.0"
initial_state: bye
settings:
  base_system_prompt: You answer the phone for a dental clinic.
states:
  bye:
    ui: { artifact_type: card, prompt: "Goodbye" }
    on_enter:
      say: Thanks, goodbye!
      end_session: true
    agent:
      prompt: Say goodbye.
`;
