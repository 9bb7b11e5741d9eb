// The editor's one undo history: every change is a step, typing bursts are one step, undo and
// redo walk back and forth, and a new change after an undo drops what could have been redone.
import { describe, expect, it } from 'vitest';
import { EditHistory } from '../../../../../renderer/src/features/editor/document/history.ts';

describe('the editor history', () => {
  it('undoes and redoes changes in order', () => {
    const history = new EditHistory('a');
    history.record('b', null, 0);
    history.record('c', null, 1);
    expect(history.undo()).toBe('b');
    expect(history.undo()).toBe('a');
    expect(history.undo()).toBeNull();
    expect(history.canUndo).toBe(false);
    expect(history.redo()).toBe('b');
    expect(history.redo()).toBe('c');
    expect(history.redo()).toBeNull();
    expect(history.present).toBe('c');
  });

  it('makes one step of a burst of changes with the same key', () => {
    const history = new EditHistory('');
    history.record('h', 'yaml', 0);
    history.record('he', 'yaml', 300);
    history.record('hey', 'yaml', 600);
    expect(history.undo()).toBe('');
    expect(history.redo()).toBe('hey');
  });

  it('starts a new step after a pause, after another key, and after an undo', () => {
    const history = new EditHistory('');
    history.record('a', 'yaml', 0);
    history.record('ab', 'yaml', 5_000);
    history.record('abc', 'inspector:won.ui', 5_100);
    expect(history.undo()).toBe('ab');
    history.record('abX', 'yaml', 5_200);
    history.record('abXY', 'yaml', 5_300);
    expect(history.undo()).toBe('ab');
    expect(history.undo()).toBe('a');
  });

  it('a new change after an undo forgets the steps that could have been redone', () => {
    const history = new EditHistory(1);
    history.record(2);
    history.undo();
    history.record(3);
    expect(history.canRedo).toBe(false);
    expect(history.undo()).toBe(1);
  });

  it('ignores a change to the same content, and an amended present undoes with its step', () => {
    const history = new EditHistory({ yaml: 'a' }, {}, (x, y) => x.yaml === y.yaml);
    expect(history.record({ yaml: 'a' })).toBe(false);
    history.record({ yaml: 'b' });
    history.amend({ yaml: 'b+' });
    expect(history.present).toEqual({ yaml: 'b+' });
    expect(history.undo()).toEqual({ yaml: 'a' });
    expect(history.redo()).toEqual({ yaml: 'b+' });
  });

  it('keeps at most `limit` steps', () => {
    const history = new EditHistory(0, { limit: 3 });
    for (let i = 1; i <= 10; i++) history.record(i);
    const undone: number[] = [];
    for (let step = history.undo(); step !== null; step = history.undo()) undone.push(step);
    expect(undone).toEqual([9, 8, 7]);
  });
});
