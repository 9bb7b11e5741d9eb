// The command lines of voxflow's commands (test, replay, migrate-store): flags read one at a
// time, `--flag value` or `--flag=value`, and the error a mistyped line gives (the command
// prints its message and exits 2).
export class UsageError extends Error {}

export interface Arg {
  /** The word as given (`--runs=5`, `--runs`, `game.yaml`). */
  arg: string;
  /** The flag (`--runs`), or the word itself when it is no flag. */
  flag: string;
  /** The flag's value: after `=`, or the next word, which is then taken. */
  value(): string;
  /** The value as a number from `min` to `max`. */
  number(min: number, max: number): number;
  /** For a flag passed on unread: the next word when it has no `=` value and the next is no flag. */
  valueIfAny(): string | undefined;
}

export function* readArgs(argv: readonly string[]): Generator<Arg> {
  let i = 0;
  while (i < argv.length) {
    const arg = argv[i]!;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${flag} needs a value`);
      return v;
    };
    const number = (min: number, max: number) => {
      const text = value();
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new UsageError(`${flag} must be a number from ${min} to ${max}, not ${text}`);
      return n;
    };
    const valueIfAny = () => (inline === undefined && argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--') ? argv[++i] : undefined);
    yield { arg, flag, value, number, valueIfAny };
    i++;
  }
}
