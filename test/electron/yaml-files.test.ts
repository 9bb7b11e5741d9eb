// Files through the native dialogs: the save dialog proposes a plain file name whatever the
// studio suggests; opening refuses a file too big to be a flow before reading it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readYamlFile, suggestedYamlFileName } from '../../electron/yaml-files.ts';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('YAML files', () => {
  it('proposes the studio\'s name as a .yaml file name, never a folder', () => {
    expect(suggestedYamlFileName('Guessing game')).toBe('Guessing game.yaml');
    expect(suggestedYamlFileName('support.yml')).toBe('support.yml');
    expect(suggestedYamlFileName('../../.bashrc')).toBe('bashrc.yaml');
    expect(suggestedYamlFileName('C:\\Windows\\system32\\evil')).toBe('evil.yaml');
    expect(suggestedYamlFileName('what? "flow" <1>')).toBe('what flow 1.yaml');
    expect(suggestedYamlFileName('...')).toBe('flow.yaml');
  });

  it('opens a flow file with its name and text, without a byte-order mark', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'voxflow-yaml-'));
    dirs.push(dir);
    await writeFile(join(dir, 'game.yaml'), '\uFEFFid: game\nversion: "1.0.0"\n');
    expect(await readYamlFile(join(dir, 'game.yaml'))).toEqual({ name: 'game.yaml', text: 'id: game\nversion: "1.0.0"\n' });
  });

  it('refuses a file over 1 MiB with a message naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'voxflow-yaml-'));
    dirs.push(dir);
    await writeFile(join(dir, 'huge.yaml'), Buffer.alloc(1024 * 1024 + 1, 0x61));
    await expect(readYamlFile(join(dir, 'huge.yaml'))).rejects.toThrow('huge.yaml is larger than 1 MiB; a flow is at most 256 KiB');
  });
});
