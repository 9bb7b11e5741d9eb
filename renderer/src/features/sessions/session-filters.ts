// The sessions screen's search and filters, kept in the address (/sessions?q=…&status=ended), so a
// reload or a shared link shows the same list. The address names them as GET /v1/sessions does
// (docs/api.md#listing-and-searching-sessions), except the dates: `from` and `to` are days in the
// designer's own time zone, both included, turned into the API's created_from and created_before.

export interface SessionFilters {
  q: string;
  flow_id: string;
  /** A version number, "draft", or "" for any. */
  version: string;
  status: '' | 'created' | 'connected' | 'ended' | 'expired';
  end_reason: string;
  /** YYYY-MM-DD, local days, both included. */
  from: string;
  to: string;
  /** Digits of the caller's number, with or without "+". */
  caller: string;
  /** The call's analysed success (docs/api.md#outcome-and-success), or "" for any. */
  success: '' | 'true' | 'false' | 'unknown';
}

export const NO_FILTERS: SessionFilters = { q: '', flow_id: '', version: '', status: '', end_reason: '', from: '', to: '', caller: '', success: '' };

const STATUSES = ['created', 'connected', 'ended', 'expired'] as const;
const SUCCESSES = ['true', 'false', 'unknown'] as const;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** What is wrong with a filter as typed, by field; an empty object when every one can be asked. */
export function filterProblems(f: SessionFilters): Partial<Record<keyof SessionFilters, string>> {
  const problems: Partial<Record<keyof SessionFilters, string>> = {};
  if (f.q.trim().length > 200) problems.q = 'At most 200 characters.';
  if (f.version.trim() !== '' && !/^(draft|[1-9]\d{0,8})$/i.test(f.version.trim())) problems.version = 'A version number, or "draft".';
  if (f.caller.trim() !== '' && !/^\+?\d{1,16}$/.test(f.caller.replace(/[\s()-]/g, ''))) problems.caller = 'Digits of a phone number (part of one will do).';
  if (f.from && f.to && f.from > f.to) problems.to = 'Not before the first day.';
  return problems;
}

/** The filters an address holds; values that could never be asked are left out. */
export function filtersFromQuery(query: string): SessionFilters {
  const params = new URLSearchParams(query);
  const text = (name: string, max: number) => (params.get(name) ?? '').slice(0, max);
  const status = params.get('status') ?? '';
  const day = (name: string) => (DAY.test(params.get(name) ?? '') ? params.get(name)! : '');
  const filters: SessionFilters = {
    q: text('q', 200),
    flow_id: text('flow_id', 200),
    version: text('version', 12),
    status: (STATUSES as readonly string[]).includes(status) ? (status as SessionFilters['status']) : '',
    end_reason: text('end_reason', 100),
    from: day('from'),
    to: day('to'),
    caller: text('caller', 24),
    success: (SUCCESSES as readonly string[]).includes(params.get('success') ?? '') ? (params.get('success') as SessionFilters['success']) : '',
  };
  const problems = filterProblems(filters);
  for (const field of Object.keys(problems) as Array<keyof SessionFilters>) filters[field] = '' as never;
  return filters;
}

/** The address's query for the filters ("" with none), in a fixed order. */
export function filtersToQuery(f: SessionFilters): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(f) as Array<[keyof SessionFilters, string]>) {
    const v = name === 'q' ? value.trim() : value;
    if (v !== '') params.set(name, v);
  }
  return params.toString();
}

export function anyFilter(f: SessionFilters): boolean {
  return filtersToQuery(f) !== '';
}

/** Local midnight of a YYYY-MM-DD day, as Unix seconds; `plusDays` moves it on. */
function localMidnight(day: string, plusDays = 0): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d + plusDays).getTime() / 1000;
}

/** GET /v1/sessions' query for the filters ("" with none). */
export function apiQuery(f: SessionFilters): string {
  const params = new URLSearchParams();
  if (f.q.trim()) params.set('q', f.q.trim());
  if (f.flow_id) params.set('flow_id', f.flow_id);
  if (f.version.trim()) params.set('version', f.version.trim().toLowerCase());
  if (f.status) params.set('status', f.status);
  if (f.end_reason) params.set('end_reason', f.end_reason);
  if (f.from) params.set('created_from', String(localMidnight(f.from)));
  // "To" includes its whole day: before the next day's midnight.
  if (f.to) params.set('created_before', String(localMidnight(f.to, 1)));
  if (f.caller.trim()) params.set('from_number', f.caller.replace(/[\s()-]/g, ''));
  if (f.success) params.set('success', f.success);
  return params.toString();
}
