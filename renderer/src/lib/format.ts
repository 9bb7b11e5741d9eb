// How the studio writes numbers, money and times.
export function formatCents(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '—';
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  return minutes > 0 ? `${minutes}m ${String(whole % 60).padStart(2, '0')}s` : `${whole}s`;
}

/** A Unix time in seconds, as the API sends times. */
export function formatWhen(unixSeconds: number | null): string {
  if (unixSeconds === null) return '—';
  return new Date(unixSeconds * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * How long ago a Unix time (seconds) was, in words a list can show at a glance ("just now",
 * "5 min ago", "3 h ago", "yesterday"); past a week it is the date itself. Lists pair it with
 * the full time in a tooltip.
 */
export function formatAgo(unixSeconds: number | null, nowMs: number = Date.now()): string {
  if (unixSeconds === null) return '—';
  const seconds = Math.max(0, Math.round(nowMs / 1000 - unixSeconds));
  if (seconds < 45) return 'just now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(seconds / 3600);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(seconds / 86_400);
  if (days === 1) return 'yesterday';
  if (days < 7) return `${days} days ago`;
  return new Date(unixSeconds * 1000).toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** A per-minute price in cents, as the credits section and session costs say it: "3¢/min". */
export function formatRate(centsPerMinute: number): string {
  return `${centsPerMinute}¢/min`;
}
