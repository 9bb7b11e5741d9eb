// A caller's audio as sipp plays it (play_pcap_audio): a pcap of RTP packets made from PCM, so a
// scenario can say what a test needs rather than the 7 s of speech in sip-tester's own pcap. No
// vitest import: the SIP bench, which runs outside vitest, makes its callers' streams here too.
import { encodeG711 } from '../../server/audio/g711.ts';

/**
 * A pcap of an A-law RTP stream (20 ms packets, payload type 8) carrying `pcm` (8 kHz; the last
 * packet padded with silence), for a scenario's play_pcap_audio: sipp sends it from and to the
 * call's own ports, so only the audio and its timing matter here.
 */
export function alawRtpPcap(pcm: Int16Array): Buffer {
  const frames = Math.ceil(pcm.length / 160);
  const padded = new Int16Array(frames * 160);
  padded.set(pcm);
  const packet = 16 + 14 + 20 + 8 + 12 + 160; // pcap record, Ethernet, IPv4, UDP, RTP, 20 ms of A-law
  const pcap = Buffer.alloc(24 + frames * packet);
  // pcap header: magic, version 2.4, GMT, accuracy, snap length, Ethernet.
  pcap.writeUInt32LE(0xa1b2c3d4, 0);
  pcap.writeUInt16LE(2, 4);
  pcap.writeUInt16LE(4, 6);
  pcap.writeUInt32LE(65535, 16);
  pcap.writeUInt32LE(1, 20);
  for (let f = 0; f < frames; f++) {
    let at = 24 + f * packet;
    const us = f * 20_000;
    pcap.writeUInt32LE(Math.floor(us / 1e6), at);
    pcap.writeUInt32LE(us % 1e6, at + 4);
    pcap.writeUInt32LE(packet - 16, at + 8);
    pcap.writeUInt32LE(packet - 16, at + 12);
    at += 16;
    pcap.writeUInt16BE(0x0800, at + 12); // Ethernet: IPv4 (addresses left zero)
    at += 14;
    const ip = at;
    pcap.writeUInt8(0x45, ip);
    pcap.writeUInt16BE(20 + 8 + 12 + 160, ip + 2);
    pcap.writeUInt8(64, ip + 8);
    pcap.writeUInt8(17, ip + 9);
    pcap.set([127, 0, 0, 1, 127, 0, 0, 1], ip + 12);
    let sum = 0;
    for (let i = 0; i < 20; i += 2) sum += pcap.readUInt16BE(ip + i);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    pcap.writeUInt16BE(~sum & 0xffff, ip + 10);
    at += 20;
    pcap.writeUInt16BE(6000, at); // sipp sends from and to the call's own ports
    pcap.writeUInt16BE(6000, at + 2);
    pcap.writeUInt16BE(8 + 12 + 160, at + 4);
    at += 8;
    pcap.writeUInt8(0x80, at);
    pcap.writeUInt8(8, at + 1); // PCMA
    pcap.writeUInt16BE(f & 0xffff, at + 2);
    pcap.writeUInt32BE((f * 160) >>> 0, at + 4);
    pcap.writeUInt32BE(0x5eed, at + 8);
    at += 12;
    pcap.set(encodeG711('alaw', padded.subarray(f * 160, (f + 1) * 160)), at);
  }
  return pcap;
}
