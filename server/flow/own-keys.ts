// Documents come from YAML and arguments from the model: a tool or parameter named
// `toString` must not find Object.prototype's member.
export function ownValue<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

// Plain assignment of a key named `__proto__` would replace the prototype instead of adding a key.
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
}
