// The server's settings are one table (server/config.ts SETTINGS): the command line, the
// environment, --help and the settings table in docs/hosting.md all follow it, and the Config made from
// them cannot be changed while the server runs.
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS, USAGE, makeConfig, parseCommandLine, type ConfigInput } from '../../server/config.ts';
import { REPLAY_VARIABLES } from '../../server/replay-command.ts';

const HOSTING = readFileSync(new URL('../../docs/hosting.md', import.meta.url), 'utf8');
/** Everything a user reads: the README and every page of docs/. */
const DOCS = [new URL('../../README.md', import.meta.url), ...readdirSync(new URL('../../docs/', import.meta.url)).filter((f) => f.endsWith('.md')).map((f) => new URL(`../../docs/${f}`, import.meta.url))]
  .map((url) => readFileSync(url, 'utf8'))
  .join('\n');

/** A value each setting accepts, and how it reads back from the ConfigInput. */
function sampleFor(env: string, list: boolean | undefined): { raw: string; parsed: unknown } {
  if (list) return { raw: 'stun:a.example:3478, stun:b.example:3478', parsed: ['stun:a.example:3478', 'stun:b.example:3478'] };
  return { raw: `value-of-${env.toLowerCase()}`, parsed: `value-of-${env.toLowerCase()}` };
}

function valueAt(input: ConfigInput, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], input);
}

describe('the settings table', () => {
  it.each(SETTINGS.map((s) => [s.env, s] as const))('%s is read from the environment into its place in the config', (_env, setting) => {
    const { raw, parsed } = sampleFor(setting.env, setting.list);
    expect(valueAt(parseCommandLine([], { [setting.env]: raw }).config, setting.path)).toEqual(parsed);
  });

  it.each(SETTINGS.filter((s) => s.flag).map((s) => [`--${s.flag}`, s] as const))('%s is a flag that wins over its environment variable', (flag, setting) => {
    const { raw, parsed } = sampleFor(setting.env, setting.list);
    const { config } = parseCommandLine([flag, raw], { [setting.env]: setting.list ? 'stun:env.example' : 'from-env' });
    expect(valueAt(config, setting.path)).toEqual(parsed);
    expect(valueAt(parseCommandLine([`${flag}=${raw}`], {}).config, setting.path)).toEqual(parsed);
  });

  it('keeps secrets off the command line, where the process list would show them', () => {
    // A setting that names a key's file (VOXFLOW_SIP_TLS_KEY) shows only the path, never the key.
    const secrets = SETTINGS.filter((s) => /KEY|SECRET/.test(s.env) && !s.value.startsWith('<file'));
    expect(SETTINGS.filter((s) => /KEY|SECRET/.test(s.env) && s.value.startsWith('<file')).map((s) => s.env)).toEqual(['VOXFLOW_SIP_TLS_KEY']);
    expect(secrets.map((s) => s.env)).toEqual(expect.arrayContaining(['VOXFLOW_SECRET_KEY', 'VOXFLOW_LLM_API_KEY', 'VOXFLOW_TURN_SECRET']));
    for (const s of secrets) expect(s.flag, s.env).toBeUndefined();
    expect(() => parseCommandLine(['--llm-api-key', 'sk-x'], {})).toThrow(/unknown option --llm-api-key/);
  });

  it('prints every setting in --help, with its flag, variable and default', () => {
    for (const s of SETTINGS) {
      expect(USAGE).toContain(s.env);
      if (s.flag) {
        const line = USAGE.split('\n').find((l) => l.trimStart().startsWith(`--${s.flag} `));
        expect(line, s.flag).toContain(s.env);
        if (s.shownDefault) expect(line).toContain(`(default ${s.shownDefault})`);
      }
    }
  });

  it('is the settings table in docs/hosting.md, row for row', () => {
    for (const s of SETTINGS) {
      const row = `| ${s.flag ? `\`--${s.flag}\`` : ''} | \`${s.env}\` | ${s.shownDefault ? `\`${s.shownDefault}\`` : ''} |`;
      expect(HOSTING, `docs/hosting.md row for ${s.env}`).toContain(row);
    }
    // And neither the README nor the docs name a variable the server does not read (test and bench knobs,
    // and the variables `voxflow replay` reads to find a server, aside).
    // VOXFLOW_WORKER_BUNDLE_DIR is read only when the server runs from its TypeScript sources
    // (the workers' from-source entry points, server/jobs and server/store/sqljs): the test suite
    // points it at its build; docs/testing.md explains it. No setting of a built server.
    const known = new Set<string>([...SETTINGS.map((s) => s.env), ...REPLAY_VARIABLES, 'VOXFLOW_WORKER_BUNDLE_DIR']);
    const named = new Set(DOCS.match(/VOXFLOW_[A-Z][A-Z_]*[A-Z]\b/g) ?? []);
    const unknown = [...named].filter((name) => !known.has(name) && !/^VOXFLOW_(BENCH|FC)_/.test(name));
    expect(unknown).toEqual([]);
  });

  it('refuses an unknown flag, a flag without its value and a stray argument, naming them', () => {
    expect(() => parseCommandLine(['--serve', '--prot', '80'], {})).toThrow(/unknown option --prot/);
    expect(() => parseCommandLine(['--port'], {})).toThrow(/--port needs a value/);
    expect(() => parseCommandLine(['--port', '--host', 'x'], {})).toThrow(/--port needs a value/);
    expect(() => parseCommandLine(['--serve', 'now'], {})).toThrow(/unexpected argument/);
  });
});

describe('the config a server runs with', () => {
  it('cannot be changed once made, down to nested settings', () => {
    const config = makeConfig({ port: 0, providers: { llm: { provider: 'openai' } }, ice: { stunUrls: ['stun:a.example'] } });
    expect(() => Object.assign(config, { port: 1 })).toThrow(TypeError);
    expect(() => Object.assign(config.providers.llm, { provider: 'none' })).toThrow(TypeError);
    expect(() => (config.ice.stunUrls as string[]).push('stun:b.example')).toThrow(TypeError);
    expect(config.port).toBe(0);
    expect(config.providers.llm.provider).toBe('openai');
  });
});
