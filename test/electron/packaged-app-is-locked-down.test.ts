// The packaged app cannot be turned into a Node runtime or a debugging target.
// Fuses are flipped by electron-builder from electron-builder.yml; debugging switches are refused
// by the app itself, since Chromium's remote debugging has no fuse.
import { readFileSync } from 'node:fs';
import type { FuseOptionsV1 } from 'app-builder-lib';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { refusedDebugSwitches } from '../../electron/args.ts';

const builder = parse(readFileSync(new URL('../../electron-builder.yml', import.meta.url), 'utf8')) as { electronFuses?: FuseOptionsV1 };

describe('the packaged desktop app', () => {
  it('flips the fuses: no run-as-node, no NODE_OPTIONS, no --inspect, only the checked app.asar', () => {
    expect(builder.electronFuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
      grantFileProtocolExtraPrivileges: false,
    } satisfies Required<Omit<FuseOptionsV1, 'loadBrowserProcessSpecificV8Snapshot' | 'resetAdHocDarwinSignature'>>);
  });

  it('refuses to start with a debugger switch, in either of its spellings', () => {
    const argv = ['/opt/Voxflow/voxflow', '--serve', '--remote-debugging-port=9222', '--inspect', '--inspect-brk=0.0.0.0:9229', '--port', '8787'];
    expect(refusedDebugSwitches(argv, { packaged: true })).toEqual(['--remote-debugging-port=9222', '--inspect', '--inspect-brk=0.0.0.0:9229']);
    expect(refusedDebugSwitches(['/opt/Voxflow/voxflow', '--remote-debugging-pipe'], { packaged: true })).toEqual(['--remote-debugging-pipe']);
  });

  it('starts normally without them, and lets developers debug the unpackaged app', () => {
    expect(refusedDebugSwitches(['/opt/Voxflow/voxflow', '--serve', '--no-sandbox', '--port', '8787'], { packaged: true })).toEqual([]);
    expect(refusedDebugSwitches(['/usr/lib/electron', '.', '--inspect'], { packaged: false })).toEqual([]);
  });
});
