import { describe, expect, it } from 'vitest';
import { makeConfig, parseCommandLine } from '../../server/config.ts';

// The server's turn-taking (docs/flows.md#turn-taking), from its flags into the config the engine
// is built with, and refused with the setting's name when it is not a value the engine takes.
describe("the server's turn-taking settings", () => {
  it('read the four flags into engine.turn', () => {
    const { config } = parseCommandLine(['--backchannels', 'interrupt', '--min-interruption-words', '0', '--endpointing-ms', '600', '--max-endpointing-ms', '600'], {});
    expect(makeConfig(config).engine.turn).toEqual({ backchannels: 'interrupt', minInterruptionWords: 0, endpointingMs: 600, maxEndpointingMs: 600 });
  });

  it('leave every key unset when none is given, so the engine and the flows decide', () => {
    expect(makeConfig({}).engine.turn).toEqual({});
  });

  it.each([
    [{ backchannels: 'never' }, /backchannels/],
    [{ endpointingMs: '50' }, /endpointingMs/],
    [{ maxEndpointingMs: 'soon' }, /maxEndpointingMs/],
    [{ minInterruptionWords: '1.5' }, /minInterruptionWords/],
  ])('refuse %o, naming it', (turn, name) => {
    expect(() => makeConfig({ engine: { turn } } as never)).toThrow(name);
  });
});
