// The Traffic overlay's filters (docs/studio.md#traffic) and the query string they make for
// GET /v1/analytics/flows/{id} (docs/api.md#analytics). Pure, so the studio's unit tests read it.

export type TrafficRange = '24h' | '7d' | '30d' | 'custom';

export interface TrafficFilters {
  /** '' for every published version, a version number, or 'draft'. */
  version: string;
  range: TrafficRange;
  /** For a custom range: datetime-local values (the designer's local time); '' for open. */
  from: string;
  to: string;
  success: '' | 'true' | 'false' | 'unknown';
  /** One outcome field and the value it must have; both or neither. */
  outcomeField: string;
  outcomeValue: string;
}

export const DEFAULT_TRAFFIC_FILTERS: TrafficFilters = { version: '', range: '7d', from: '', to: '', success: '', outcomeField: '', outcomeValue: '' };

const RANGE_SECONDS: Record<Exclude<TrafficRange, 'custom'>, number> = { '24h': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400 };

/** The query string of the filters at `nowMs` (a preset range ends now). */
export function trafficQuery(filters: TrafficFilters, nowMs: number = Date.now()): string {
  const params = new URLSearchParams();
  if (filters.range === 'custom') {
    if (filters.from) params.set('from', new Date(filters.from).toISOString());
    if (filters.to) params.set('to', new Date(filters.to).toISOString());
  } else {
    params.set('from', new Date(nowMs - RANGE_SECONDS[filters.range] * 1000).toISOString());
  }
  if (filters.version) params.set('version', filters.version);
  if (filters.success) params.set('success', filters.success);
  if (filters.outcomeField.trim() && filters.outcomeValue.trim()) params.set(`outcome.${filters.outcomeField.trim()}`, filters.outcomeValue.trim());
  return params.toString();
}
