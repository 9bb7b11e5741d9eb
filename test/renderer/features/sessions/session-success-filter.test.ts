// The sessions screen's success filter and column (docs/api.md#outcome-and-success): kept in the
// address, asked of the API as ?success=, and shown in words.
import { describe, expect, it } from 'vitest';
import { NO_FILTERS, apiQuery, filtersFromQuery, filtersToQuery } from '../../../../renderer/src/features/sessions/session-filters.ts';
import { successLabel } from '../../../../renderer/src/features/sessions/session-rows.ts';

describe('the sessions list by success', () => {
  it('keeps the filter in the address and asks the API for it', () => {
    const filters = { ...NO_FILTERS, status: 'ended' as const, success: 'false' as const };
    expect(filtersToQuery(filters)).toBe('status=ended&success=false');
    expect(filtersFromQuery('status=ended&success=false')).toEqual(filters);
    expect(apiQuery(filters)).toBe('status=ended&success=false');
  });

  it('leaves out a value the API would refuse', () => {
    expect(filtersFromQuery('success=maybe').success).toBe('');
  });

  it('says each success in words', () => {
    expect([true, false, 'unknown', null, undefined].map((s) => successLabel(s as never))).toEqual(['Succeeded', 'Did not succeed', 'Unknown', '—', '—']);
  });
});
