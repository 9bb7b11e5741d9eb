#!/usr/bin/env node
// The `voxflow` command (package.json "bin"): `voxflow test FLOW.yaml TESTS.yaml` and
// `voxflow --serve`. It runs the TypeScript sources through tsx, so it needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../server/main.ts');
