// How the app was launched: the desktop studio, or `--serve` (headless, the same command as
// `npm run serve`). Pure: Electron's argv and environment come in as values.
//
// Electron's argv carries more than ours: the executable, the app folder when run as
// `electron .`, Chromium and Node switches a user or launcher may add (`--no-sandbox`,
// `--ozone-platform=headless`), and on macOS a `-psn_…` process serial number. The headless
// command gets only the rest, so an unknown flag there is still an error, as with `npm run serve`.

export type LaunchMode =
  | { kind: 'desktop' }
  /** `serverArgv` is what `npm run serve` would get after `--`, including `--serve` itself. */
  | { kind: 'serve'; serverArgv: string[] };

/**
 * Switches that Electron, Chromium or Node read from the command line (Electron's "supported
 * command line switches" plus the ones headless hosting needs). Chromium switches carry their
 * value after `=`, never as the next argument, so skipping the one token is enough.
 * `--log-level` is ours: the server's flag wins over Chromium's of the same name.
 */
const RUNTIME_SWITCHES = new Set([
  // Chromium
  'auth-server-whitelist', 'auth-negotiate-delegate-whitelist', 'disable-ntlm-v2', 'disable-http-cache', 'disable-http2',
  'disable-renderer-backgrounding', 'disk-cache-size', 'enable-logging', 'force-fieldtrials', 'host-rules',
  'host-resolver-rules', 'ignore-certificate-errors', 'ignore-connections-limit', 'js-flags', 'lang', 'log-file',
  'log-net-log', 'no-proxy-server', 'no-sandbox', 'proxy-bypass-list', 'proxy-pac-url', 'proxy-server',
  'remote-debugging-port', 'v', 'vmodule', 'force_high_performance_gpu', 'force_low_power_gpu',
  'xdg-portal-required-version', 'ozone-platform', 'ozone-platform-hint', 'enable-features', 'disable-features',
  'disable-gpu', 'disable-software-rasterizer', 'disable-dev-shm-usage', 'no-zygote', 'user-data-dir',
  'enable-wayland-ime', 'in-process-gpu', 'use-gl', 'use-angle',
  // Node, as Electron accepts them
  'inspect', 'inspect-brk', 'inspect-port', 'inspect-publish-uid', 'experimental-network-inspection',
  'no-deprecation', 'throw-deprecation', 'trace-deprecation', 'trace-warnings', 'dns-result-order',
  'diagnostic-dir', 'no-experimental-global-navigator',
]);

/**
 * Switches that open a debugger into the app: anyone who can start it with one could read the
 * account's keys from memory or drive the studio. A packaged app refuses to start with them (the
 * fuses already disable Node's --inspect; Chromium's remote debugging has no fuse).
 */
const DEBUG_SWITCHES = new Set(['inspect', 'inspect-brk', 'inspect-port', 'inspect-publish-uid', 'remote-debugging-port', 'remote-debugging-pipe', 'remote-allow-origins']);

/** The debugging switches in argv, which a packaged app refuses; none when run from the sources. */
export function refusedDebugSwitches(argv: readonly string[], options: { packaged: boolean }): string[] {
  if (!options.packaged) return [];
  return argv.filter((arg) => arg.startsWith('--') && DEBUG_SWITCHES.has(arg.slice(2).split('=', 1)[0]!));
}

/** True for a switch meant for Electron, Chromium or Node rather than for Voxflow. */
export function isRuntimeSwitch(arg: string): boolean {
  if (/^-psn_\d+_\d+$/.test(arg)) return true;
  if (!arg.startsWith('--')) return false;
  const name = arg.slice(2).split('=', 1)[0]!;
  return RUNTIME_SWITCHES.has(name);
}

/**
 * The arguments the user typed: argv without the executable and, when run unpackaged as
 * `electron <app folder>` (`process.defaultApp`), without the app folder, the first argument
 * that is not a switch.
 */
export function userArguments(argv: readonly string[], options: { defaultApp: boolean }): string[] {
  const rest = argv.slice(1);
  if (options.defaultApp) {
    const appFolder = rest.findIndex((arg) => !arg.startsWith('-'));
    if (appFolder >= 0) rest.splice(appFolder, 1);
  }
  return rest;
}

/** `--serve` (or `--help`, which prints the headless usage) selects headless mode; anything else opens the studio. */
export function parseLaunchArguments(argv: readonly string[], options: { defaultApp: boolean }): LaunchMode {
  const args = userArguments(argv, options).filter((arg) => !isRuntimeSwitch(arg));
  if (args.some((arg) => arg === '--serve' || arg === '--help' || arg === '-h')) return { kind: 'serve', serverArgv: args };
  return { kind: 'desktop' };
}

/**
 * Chromium switches for headless mode, set before the app is ready. No window is ever opened,
 * so the GPU is off; on Linux with no display at all, Ozone's headless platform lets Electron
 * start where it would otherwise stop at "Missing X server or $DISPLAY". A platform the user
 * chose on the command line is left alone.
 */
export function headlessChromiumSwitches(argv: readonly string[], env: NodeJS.ProcessEnv, platform: NodeJS.Platform): Array<[name: string, value?: string]> {
  const switches: Array<[string, string?]> = [['disable-gpu']];
  const hasDisplay = Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
  const platformChosen = argv.some((arg) => arg.startsWith('--ozone-platform=') || arg === '--ozone-platform');
  if (platform === 'linux' && !hasDisplay && !platformChosen) switches.push(['ozone-platform', 'headless']);
  return switches;
}
