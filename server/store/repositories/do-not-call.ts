// An account's do-not-call list: numbers its outbound calls must never ring. Checked before a
// call is placed; a number is kept as given (E.164, checked by the API).

export interface DoNotCallEntry {
  number: string;
  createdAt: number;
}

export interface DoNotCallRepository {
  /** Adds the number; returns whether it was new (adding it again keeps its first date). */
  add(accountId: string, number: string): Promise<{ created: boolean; entry: DoNotCallEntry }>;
  /** By number. */
  list(accountId: string): Promise<DoNotCallEntry[]>;
  /** False when the number was not on the list. */
  remove(accountId: string, number: string): Promise<boolean>;
  isDoNotCall(accountId: string, number: string): Promise<boolean>;
}
