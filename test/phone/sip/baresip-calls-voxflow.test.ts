// A real softphone, baresip, calls Voxflow over SIP: its microphone is a WAV (baresip's aufile
// source), it presses a key (baresip sends RFC 4733 events), and what it
// heard is recorded by its sndfile module: the agent's speech is in that recording. baresip runs
// with its own configuration folder and is killed after the test.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { dbfs, decodeWav, encodeWav } from '../../../server/audio/pcm.ts';
import { afterThisTest } from '../../support/after-this-test.ts';
import { freeSipPort } from '../../support/kamailio.ts';
import { PHONE_MENU_YAML } from '../../support/phone-menu-flow.ts';
import { useSipRig } from '../../support/sip-rig.ts';

const BARESIP = '/usr/bin/baresip';

describe('baresip calling Voxflow', () => {
  const rig = useSipRig();

  it('is answered by the flow, moves it with a key, and hears the agent', { timeout: 120_000 }, async () => {
    await rig().bind('1000', PHONE_MENU_YAML);
    const dir = await mkdtemp(join(tmpdir(), 'voxflow-baresip-'));
    afterThisTest(() => rm(dir, { recursive: true, force: true }));
    // The caller listens to the menu and answers with a key: its microphone is 30 s of silence
    // (8 kHz mono, the rate of the G.711 call). Words spoken a second into the call talked over
    // the menu, which on a busy machine started late and rightly yielded, so nothing was heard.
    await writeFile(join(dir, 'caller.wav'), encodeWav(new Int16Array(8000 * 30), 8000));
    const before = new Set(((await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey })).body as Array<{ id: string }>).map((s) => s.id));
    const findSession = async () =>
      ((await rig().server.request('GET', '/v1/sessions', { apiKey: rig().account.apiKey })).body as Array<{ id: string; transport: string }>).find((s) => s.transport === 'sip' && !before.has(s.id));

    // baresip listens for SIP on UDP and TCP at one port, and its console (cons) on UDP and TCP at
    // another. A port free when picked can be taken before baresip binds it (another test's
    // socket on a busy machine); baresip then says "Address already in use" and exits, and the
    // call is placed again on ports picked anew.
    let baresip: Baresip | undefined;
    let session: { id: string } | undefined;
    for (let attempt = 1; !session; attempt++) {
      baresip = await startBaresip(dir, rig().udpPort);
      for (const deadline = Date.now() + 30_000; !session && !baresip.hasExited() && Date.now() < deadline; ) {
        session = await findSession();
        if (!session) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const portTaken = baresip.hasExited() && baresip.output().includes('Address already in use');
      if (!session && !(portTaken && attempt < 4)) throw new Error(`no SIP session; baresip said:\n${baresip.output().slice(-3000)}`);
    }
    const { consPort, output, exited } = baresip!;
    const keys = createSocket('udp4');
    afterThisTest(() => new Promise<void>((resolve) => keys.close(() => resolve())));
    const press = (key: string) => new Promise<void>((resolve) => keys.send(key, consPort, '127.0.0.1', () => resolve()));

    const path = async () => ((await rig().server.request('GET', `/v1/sessions/${session!.id}`, { apiKey: rig().account.apiKey })).body.path as Array<{ state: string }>).map((p) => p.state);
    await vi.waitFor(async () => expect(await path()).toEqual(['menu']), { timeout: 15_000, interval: 100 });
    // Let the menu's line be heard, then press 1: an RFC 4733 event from baresip.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await press('1');
    await vi.waitFor(async () => expect(await path()).toEqual(['menu', 'account']), { timeout: 15_000, interval: 200 });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // Hang up ("b" in baresip's menu), then quit.
    await press('b');
    await vi.waitFor(async () => expect((await rig().server.request('GET', `/v1/sessions/${session!.id}`, { apiKey: rig().account.apiKey })).body.status).toBe('ended'), { timeout: 15_000, interval: 200 });
    await press('q');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);

    // What baresip heard (its decoded audio, dumped by sndfile): the agent's speech.
    const heardFile = (await readdir(dir)).find((f) => f.startsWith('dump-') && f.endsWith('-dec.wav'));
    expect(heardFile, `${await readdir(dir)}\n${output().slice(-3000)}`).toBeDefined();
    const heard = decodeWav(await readFile(join(dir, heardFile!)));
    const window = Math.round(heard.sampleRate / 5);
    let loudest = -Infinity;
    for (let at = 0; at + window <= heard.pcm.length; at += window) loudest = Math.max(loudest, dbfs(heard.pcm.subarray(at, at + window)));
    expect(loudest).toBeGreaterThan(-40);
    expect(heard.pcm.length / heard.sampleRate).toBeGreaterThan(5);
  });
});

interface Baresip {
  consPort: number;
  output: () => string;
  hasExited: () => boolean;
  exited: Promise<void>;
}

/** Starts baresip dialling Voxflow's number 1000, on ports picked now; killed after the test. */
async function startBaresip(dir: string, voxflowPort: number): Promise<Baresip> {
  const sipPort = await freeSipPort(true, false);
  const consPort = await freeSipPort(true, false);
  await writeFile(
    join(dir, 'config'),
    [
      'poll_method epoll',
      `sip_listen 127.0.0.1:${sipPort}`,
      'audio_source aufile,' + join(dir, 'caller.wav'),
      'audio_player aubridge,ear',
      'audio_alert aubridge,ear',
      'module_path /usr/lib/baresip/modules',
      'net_interface 127.0.0.1',
      'module account.so',
      'module g711.so',
      'module aufile.so',
      'module aubridge.so',
      'module sndfile.so',
      'module cons.so',
      'module_app menu.so',
      `cons_listen 127.0.0.1:${consPort}`,
      `snd_path ${dir}`,
      'rtp_ports 30000-30999',
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'accounts'), '<sip:caller@127.0.0.1>;regint=0;audio_codecs=PCMU;dtmfmode=rtpevent\n');
  const child = spawn(BARESIP, ['-f', dir, '-e', `/dial sip:1000@127.0.0.1:${voxflowPort}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-20_000)));
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-20_000)));
  let hasExited = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => (hasExited = true));
  afterThisTest(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await exited;
  });
  return { consPort, output: () => output, hasExited: () => hasExited, exited };
}
