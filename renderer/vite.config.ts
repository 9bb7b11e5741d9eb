// The studio's build. Output goes to dist/renderer, which the server serves at `/` (and Electron
// loads from the server's origin). Hashed asset names let the server cache them for a year.
import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/',
  plugins: [svelte()],
  build: {
    outDir: here('../dist/renderer'),
    emptyOutDir: true,
    sourcemap: true,
    // CodeMirror and xyflow are most of the bundle; one chunk each keeps rebuild diffs small.
    chunkSizeWarningLimit: 900,
  },
  server: { port: 5173, proxy: { '^/(auth|v1|offer|ice-servers|health|capabilities|ws|test)': 'http://127.0.0.1:8787' } },
});
