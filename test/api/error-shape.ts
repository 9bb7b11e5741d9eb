// Shared check for the error body every failure of the hosted API carries (docs/api.md):
// {"error":{"code","message","details"?}} and nothing that leaks the server's internals.
import { expect } from 'vitest';
import type { TestResponse } from '../support/server.ts';

export function expectError(response: TestResponse, status: number, code: string): void {
  expect({ status: response.status, code: response.body?.error?.code }, response.text.slice(0, 400)).toEqual({ status, code });
  expectErrorShape(response);
}

export function expectErrorShape(response: TestResponse): void {
  expect(response.headers.get('content-type') ?? '').toMatch(/application\/json/);
  expect(response.body).toBeTypeOf('object');
  expect(Object.keys(response.body)).toEqual(['error']);
  const error = response.body.error;
  expect(error.code).toMatch(/^[a-z][a-z0-9_]*$/);
  expect(error.message).toBeTypeOf('string');
  expect(error.message.length).toBeGreaterThan(0);
  for (const key of Object.keys(error)) expect(['code', 'message', 'details']).toContain(key);
  if ('details' in error) expect(Array.isArray(error.details)).toBe(true);
  // No stack traces, no source paths.
  expect(response.text).not.toMatch(/\bat .+\(.*:\d+:\d+\)|\/work\/|node_modules|\.ts:\d+|"stack"/i);
}
