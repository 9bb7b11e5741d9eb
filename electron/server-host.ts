// The desktop's embedded server: the same server as `--serve`, run in the main process, on the
// loopback address only and a port the OS picks (so a second app, or a hosted server, on the
// same machine never collides), with its data in the app's user-data folder. Settings other
// than where it listens and keeps data come from the same environment variables as headless
// hosting (providers, language, log level). Node only: the folder comes in as a path.
import { join } from 'node:path';
import { makeConfig, parseCommandLine, type Config } from '../server/config.ts';
import { startServer, type RunningServer, type StartServerOptions } from '../server/serve.ts';

/** The data folder inside the app's user-data folder (Electron's app.getPath('userData')). */
export function desktopDataDir(userDataDir: string): string {
  return join(userDataDir, 'data');
}

/**
 * The embedded server's config: 127.0.0.1, port 0, data in `<userData>/data`. VOXFLOW_HOST,
 * _PORT, _DATA_DIR and _PUBLIC_URL are for headless hosting and are ignored here: the studio
 * must reach its own server on loopback, whatever the shell that launched the app exported.
 * So is VOXFLOW_SESSIONS_PER_ACCOUNT: the per-account limit keeps hosted tenants from starving
 * each other, and this server's accounts are the desktop's local one and whatever the same
 * user signs up on loopback; only the server-wide caps apply. The per-account flow quotas
 * (VOXFLOW_FLOWS_PER_ACCOUNT, VOXFLOW_FLOW_STORAGE_MB) are off for the same reason.
 */
export function embeddedServerConfig(userDataDir: string, env: NodeJS.ProcessEnv): Config {
  const fromEnv = parseCommandLine([], env).config;
  return makeConfig({
    ...fromEnv,
    host: '127.0.0.1',
    port: 0,
    dataDir: desktopDataDir(userDataDir),
    publicUrl: undefined,
    engine: { ...fromEnv.engine, sessionsPerAccount: 0 },
    limits: { ...fromEnv.limits, flowsPerAccount: 0, flowStorageMb: 0 },
    // The desktop's user runs their receivers on their own machine or network.
    webhooks: { ...fromEnv.webhooks, allowPrivate: true },
  });
}

export interface EmbeddedServer extends RunningServer {
  /** The studio's origin, e.g. http://127.0.0.1:43125: windows, IPC and permissions are pinned to it. */
  origin: string;
}

/** Starts the embedded server; rejects with StoreLockedError when another process holds the data folder. */
export async function startEmbeddedServer(
  userDataDir: string,
  env: NodeJS.ProcessEnv,
  options: Pick<StartServerOptions, 'announce' | 'logger'> = {},
): Promise<EmbeddedServer> {
  const server = await startServer(embeddedServerConfig(userDataDir, env), options);
  return { ...server, origin: new URL(server.url).origin };
}
