// Credit admission (docs/api.md): a session starts only when the balance pays its first minute at
// the account's rate. The same rule for POST /v1/sessions and for every voice connection.

export type CreditCheck = { ok: true; balance: number } | { ok: false; balance: number; message: string };

export function checkFirstMinute(balance: number, ratePerMinute: number): CreditCheck {
  if (ratePerMinute > 0 && balance < ratePerMinute) {
    return { ok: false, balance, message: `A minute costs ${ratePerMinute} cents and the balance is ${balance}; add credit or set your own provider keys.` };
  }
  return { ok: true, balance };
}
