// The YAML files the studio opens and saves through the native dialogs. Node only (the dialogs
// are in desktop-ipc.ts): the user picks the path; this side keeps the studio's suggested name
// to a plain file name and refuses to open files too big to be a flow.
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { MAX_YAML_CHARACTERS } from './ipc-hub.ts';

export class YamlFileError extends Error {
  override name = 'YamlFileError';
}

/**
 * The name the save dialog proposes: the studio's suggestion without any folder part (it names
 * a file, it does not choose where), without characters file systems refuse, ending in .yaml.
 */
export function suggestedYamlFileName(suggested: string): string {
  const lastPart = suggested.split(/[\\/]/).pop() ?? '';
  const cleaned = lastPart
    .replace(/[<>:"|?*\u0000-\u001f]/g, '')
    .replace(/^[.\s]+|[.\s]+$/g, '')
    .slice(0, 200);
  const stem = cleaned === '' ? 'flow' : cleaned;
  return /\.ya?ml$/i.test(stem) ? stem : `${stem}.yaml`;
}

/** A YAML file the user chose to open: its name and its text, refused when it is too big. */
export async function readYamlFile(path: string): Promise<{ name: string; text: string }> {
  // Checked before reading, so a multi-gigabyte file picked by mistake is never loaded. A file
  // within the limit in bytes is within it in characters too (UTF-8 has at least one byte each).
  const { size } = await stat(path);
  if (size > MAX_YAML_CHARACTERS) {
    throw new YamlFileError(`${basename(path)} is larger than ${MAX_YAML_CHARACTERS / 1024 / 1024} MiB; a flow is at most 256 KiB`);
  }
  const text = await readFile(path, 'utf8');
  return { name: basename(path), text: text.replace(/^\uFEFF/, '') };
}
