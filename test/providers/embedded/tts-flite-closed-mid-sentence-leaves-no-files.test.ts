// flite writes each sentence to a folder of its own in /dev/shm (RAM). A server closing while flite
// speaks terminates the worker mid-sentence, and a terminated thread runs no cleanup of its own:
// the host removes what that thread left, so no closing leaves RAM behind. A process killed
// mid-sentence cannot: the next process to start flite removes the folders of gone processes.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, expect, test } from 'vitest';
import { FliteWorkerHost, shutdownFlite } from '../../../server/providers/tts/flite.ts';
import { removeFoldersOfGoneProcesses } from '../../../server/providers/tts/flite-worker-host.ts';
import { neverAborted } from '../support.ts';

afterAll(() => shutdownFlite());

const LONG = 'This sentence goes on for long enough that flite is still writing it when its server closes, and then it goes on a little longer still.';

test("a worker closed mid-sentence leaves no sentence's folder behind", async () => {
  const root = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const ours = async () => (await readdir(root)).filter((name) => name.startsWith(`voxflow-flite-${process.pid}-`));
  const host = new FliteWorkerHost();
  await host.warmUp();
  expect(await ours()).toEqual([]);

  const speaking = host.run(LONG, 'slt', neverAborted());
  const failed = expect(speaking).rejects.toThrow(/flite was shut down/);
  // The sentence's folder is there while flite writes it.
  await expect.poll(ours, { interval: 5, timeout: 10_000 }).toHaveLength(1);
  await host.close();
  await failed;
  expect(await ours()).toEqual([]);
});

test('the folders of a process killed mid-sentence are removed by the next, and no live one\'s', async () => {
  const root = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  // A process that has ended: its id names no live process.
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const left = await mkdtemp(join(root, `voxflow-flite-${gone}-3-`));
  const live = await mkdtemp(join(root, `voxflow-flite-${process.pid}-3-`));
  try {
    await removeFoldersOfGoneProcesses(root);
    expect(existsSync(left)).toBe(false);
    expect(existsSync(live)).toBe(true);
  } finally {
    await Promise.all([left, live].map((dir) => rm(dir, { recursive: true, force: true })));
  }
});
