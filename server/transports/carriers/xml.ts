// The markup every carrier answers a call with is a small XML document (TwiML, TeXML, Plivo XML).
// Everything that goes into it from outside (URLs, tokens, numbers, the text to say) is escaped
// here, so a caller's number or a flow's sentence can never close a tag or open a new one.
import type { Markup, StreamOptions } from './carrier.ts';

export const XML_CONTENT_TYPE = 'text/xml; charset=utf-8';

/** Escapes text for an element's content or an attribute value in double quotes. */
export function escapeXml(value: string): string {
  // Characters XML 1.0 forbids outright are dropped: no escape makes them legal.
  const allowed = value.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');
  return allowed.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** `name="value"` pairs, escaped, skipping undefined values. */
export function attributes(values: Record<string, string | undefined>): string {
  return Object.entries(values)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => ` ${name}="${escapeXml(value)}"`)
    .join('');
}

export function xmlResponse(inner: string): Markup {
  return { contentType: XML_CONTENT_TYPE, body: `<?xml version="1.0" encoding="UTF-8"?>\n<Response>${inner}</Response>` };
}

/** What a caller hears when the number they dialled is bound to no flow. */
export const NOT_IN_SERVICE_TEXT = 'The number you have called is not in service. Please check the number and try again.';

const STREAM_PARAMETER = /^[A-Za-z0-9]{1,500}$/;

/**
 * The token and any other parameters a stream's markup hands back in its start message, checked:
 * letters and digits only, which every carrier's markup carries unchanged (Plivo's extraHeaders
 * take nothing else).
 */
export function streamParameters(options: StreamOptions): [string, string][] {
  const pairs: [string, string][] = [['token', options.token], ...Object.entries(options.parameters ?? {})];
  for (const [name, value] of pairs) {
    if (!STREAM_PARAMETER.test(name) || !STREAM_PARAMETER.test(value)) throw new RangeError('a stream token or parameter may hold only letters and digits');
  }
  return pairs;
}
