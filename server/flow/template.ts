// `{name}` placeholders in prompts, UI text and speech cues. Authors write free text that
// may hold JSON examples or stray braces, so anything that is not exactly `{identifier}` is
// kept as written instead of being an error: a prompt must never fail to render mid-call.

/** What a flow variable can hold: tool arguments after coercion, and context values. */
export type VariableValue = string | number | boolean;

export interface Placeholder {
  name: string;
  /** Index of the opening `{` in the template text. */
  offset: number;
}

type TemplatePart = { kind: 'text'; text: string } | { kind: 'placeholder'; name: string; offset: number };

// Sticky, so it matches only at the position being scanned.
const PLACEHOLDER_AT = /\{([A-Za-z_][A-Za-z0-9_]*)\}/y;

// One scanner for both rendering and the validator's placeholder search, so the two can
// never disagree about what counts as a placeholder. Scanning is left to right and escapes
// win where they start: `{{name}}` is the literal text `{name}`, as in Python's str.format.
// A consequence authors should know: nested JSON such as `{"a":{"b":1}}` ends in `}}`,
// which renders as a single `}`; doubling braces is the way to write it literally.
function parseTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literal = '';
  let index = 0;
  while (index < text.length) {
    const char = text[index];
    const next = text[index + 1];
    if ((char === '{' && next === '{') || (char === '}' && next === '}')) {
      literal += char;
      index += 2;
      continue;
    }
    if (char === '{') {
      PLACEHOLDER_AT.lastIndex = index;
      const match = PLACEHOLDER_AT.exec(text);
      if (match !== null && match[1] !== undefined) {
        if (literal !== '') parts.push({ kind: 'text', text: literal });
        literal = '';
        parts.push({ kind: 'placeholder', name: match[1], offset: index });
        index += match[0].length;
        continue;
      }
    }
    literal += char;
    index += 1;
  }
  if (literal !== '') parts.push({ kind: 'text', text: literal });
  return parts;
}

export function renderTemplate(text: string, variables: Readonly<Record<string, VariableValue>>): string {
  let rendered = '';
  for (const part of parseTemplate(text)) {
    if (part.kind === 'text') {
      rendered += part.text;
      continue;
    }
    // Own properties only: `{constructor}` must not render Object.prototype's members.
    const value = Object.hasOwn(variables, part.name) ? variables[part.name] : undefined;
    if (value !== undefined) rendered += String(value);
  }
  return rendered;
}

/** Every `{name}` placeholder in the text, escaped braces excluded, in text order. */
export function findPlaceholders(text: string): Placeholder[] {
  const placeholders: Placeholder[] = [];
  for (const part of parseTemplate(text)) {
    if (part.kind === 'placeholder') placeholders.push({ name: part.name, offset: part.offset });
  }
  return placeholders;
}
