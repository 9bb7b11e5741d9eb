// `node --import ./register.mjs main.mjs …`: resolves `electron` to the stand-in, and marks the
// process as an unpackaged run (`electron <app folder> …`), as Electron would.
import { register } from 'node:module';

process.defaultApp = true;
const standIn = new URL('./electron.mjs', import.meta.url).href;
const hooks = `export async function resolve(specifier, context, next) {
  return specifier === 'electron' ? { url: ${JSON.stringify(standIn)}, shortCircuit: true } : next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
