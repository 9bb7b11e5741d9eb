// `npm run screenshot`: the README's picture of the studio, made with the browser tests' own rig
// so it shows the studio as it is today. A real server with a fresh account, the guessing game
// created from its example file, and its editor opened at 1280×800 in Debian's headless Chromium,
// with the first state selected so the inspector shows what a designer edits. Writes
// docs/images/studio.png.
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createAccount, createFlow, startTestServer } from '../support/server.ts';
import { launchChromium, tempDir, writeMicWav } from './browser.ts';
import { signInBrowser } from './studio.ts';
import { WAIT, node } from './studio-editor-page.ts';

const OUTPUT = fileURLToPath(new URL('../../docs/images/studio.png', import.meta.url));
const STUDIO_DIR = fileURLToPath(new URL('../../dist/renderer/', import.meta.url));

const dir = await tempDir();
const server = await startTestServer({}, { studioDir: STUDIO_DIR, voice: true });
const chromium = await launchChromium({ micWav: await writeMicWav(dir.path, null) });
try {
  const account = await createAccount(server, 'you@example.com');
  const flowId = await createFlow(server, account.apiKey, 'Guessing game');
  const page = await chromium.newPage({ width: 1280, height: 800 });
  await signInBrowser(page, server.url, account);
  await page.goto(`${server.url}/flow-editor?flow=${flowId}&state=setup`);
  await node(page, 'setup').waitFor(WAIT);
  await page.locator('.svelte-flow__edge-label').first().waitFor(WAIT);
  // The layout and the inspector settle over a few frames after the graph first shows.
  await page.waitForTimeout(1_000);
  await mkdir(fileURLToPath(new URL('.', `file://${OUTPUT}`)), { recursive: true });
  await page.screenshot({ path: OUTPUT });
  if (chromium.pageErrors.length > 0) throw new Error(`the studio reported errors:\n${chromium.pageErrors.join('\n')}`);
  console.log(`wrote ${OUTPUT}`);
} finally {
  await chromium.close();
  await server.close();
  await dir.remove();
}
// A browser kept for reuse (browser.ts) would hold the process open a little longer.
process.exit(0);
