// How the desktop app reads its command line: `--serve` goes headless with the user's flags
// untouched; Electron's own additions (executable, app folder, Chromium switches) never reach
// the server's parser.
import { describe, expect, it } from 'vitest';
import { headlessChromiumSwitches, parseLaunchArguments } from '../../electron/args.ts';

const PACKAGED = { defaultApp: false };
const UNPACKAGED = { defaultApp: true };

describe('launch arguments', () => {
  it('opens the studio when started without --serve, packaged or as `electron .`', () => {
    expect(parseLaunchArguments(['/opt/Voxflow/voxflow'], PACKAGED)).toEqual({ kind: 'desktop' });
    expect(parseLaunchArguments(['/usr/lib/electron', '.'], UNPACKAGED)).toEqual({ kind: 'desktop' });
    expect(parseLaunchArguments(['/opt/Voxflow/voxflow', '--no-sandbox', '/home/me/flow.yaml'], PACKAGED)).toEqual({ kind: 'desktop' });
  });

  it('runs headless with --serve and hands the server exactly the flags the user typed', () => {
    const argv = ['/opt/Voxflow/voxflow', '--serve', '--host', '0.0.0.0', '--port=9000', '--data-dir', '/var/lib/voxflow', '--public-url', 'https://voice.example.com'];
    expect(parseLaunchArguments(argv, PACKAGED)).toEqual({
      kind: 'serve',
      serverArgv: ['--serve', '--host', '0.0.0.0', '--port=9000', '--data-dir', '/var/lib/voxflow', '--public-url', 'https://voice.example.com'],
    });
  });

  it('drops the app folder of `electron . --serve`, wherever Electron switches put it', () => {
    expect(parseLaunchArguments(['/usr/lib/electron', '.', '--serve', '--port', '0'], UNPACKAGED)).toEqual({ kind: 'serve', serverArgv: ['--serve', '--port', '0'] });
    expect(parseLaunchArguments(['/usr/lib/electron', '--no-sandbox', '/src/voxflow', '--serve'], UNPACKAGED)).toEqual({ kind: 'serve', serverArgv: ['--serve'] });
  });

  it('leaves out Chromium, Node and macOS launcher switches but keeps the server\'s --log-level', () => {
    const argv = ['/opt/Voxflow/voxflow', '-psn_0_12345', '--no-sandbox', '--ozone-platform=headless', '--enable-logging', '--inspect=9229', '--serve', '--log-level', 'warn', '--disable-gpu'];
    expect(parseLaunchArguments(argv, PACKAGED)).toEqual({ kind: 'serve', serverArgv: ['--serve', '--log-level', 'warn'] });
  });

  it('passes an unknown flag on to the server, which refuses it as `npm run serve` does', () => {
    expect(parseLaunchArguments(['/opt/Voxflow/voxflow', '--serve', '--prot', '80'], PACKAGED)).toEqual({ kind: 'serve', serverArgv: ['--serve', '--prot', '80'] });
  });

  it('treats --help as the headless usage, not as a desktop launch', () => {
    expect(parseLaunchArguments(['/opt/Voxflow/voxflow', '--help'], PACKAGED)).toEqual({ kind: 'serve', serverArgv: ['--help'] });
  });
});

describe('Chromium switches for --serve', () => {
  it('turns the GPU off everywhere, since no window is ever shown', () => {
    for (const platform of ['linux', 'darwin', 'win32'] as const) {
      expect(headlessChromiumSwitches([], { DISPLAY: ':0' }, platform)).toContainEqual(['disable-gpu']);
    }
  });

  it('picks Ozone\'s headless platform on a Linux server with no display', () => {
    expect(headlessChromiumSwitches([], {}, 'linux')).toContainEqual(['ozone-platform', 'headless']);
  });

  it('keeps the display platform on a Linux desktop, and a platform the user chose', () => {
    expect(headlessChromiumSwitches([], { WAYLAND_DISPLAY: 'wayland-0' }, 'linux').map(([name]) => name)).not.toContain('ozone-platform');
    expect(headlessChromiumSwitches([], { DISPLAY: ':1' }, 'linux').map(([name]) => name)).not.toContain('ozone-platform');
    expect(headlessChromiumSwitches(['x', '--ozone-platform=x11'], {}, 'linux').map(([name]) => name)).not.toContain('ozone-platform');
    expect(headlessChromiumSwitches([], {}, 'darwin').map(([name]) => name)).not.toContain('ozone-platform');
  });
});
