// parseFlow: YAML text in, the flow document and every diagnostic out. It never throws: the
// studio runs it on every keystroke and the API on untrusted uploads.
import { LineCounter, isScalar, visit, type Document } from 'yaml';
import { DocumentLocator } from './locate.ts';
import { parseYaml } from './parse-yaml.ts';
import { dataTooDeep, isStackOverflowError, tooDeepMessage, tooDeeplyNested } from './nesting.ts';
import { checkSemantics } from './semantics.ts';
import { checkStructure } from './structure.ts';
import { DIAGNOSTIC_CODES } from './diagnostic-codes.ts';
import {
  MAX_DOCUMENT_BYTES,
  MAX_YAML_ALIASES,
  hasErrors,
  type Diagnostic,
  type DocPath,
  type FlowDocument,
  type ParseResult,
} from './types.ts';

const utf8 = new TextEncoder();

export function parseFlow(yamlText: string): ParseResult {
  try {
    return parseUnchecked(yamlText);
  } catch (error) {
    // Nothing above should throw; if a library does on some input, it is still a refusal with a
    // reason rather than a crash of the caller.
    return {
      document: null,
      diagnostics: [
        {
          severity: 'error',
          code: 'yaml_syntax',
          message: `the document could not be read: ${error instanceof Error ? error.message : String(error)}`,
          path: [],
          line: 1,
          column: 1,
        },
      ],
    };
  }
}

function parseUnchecked(yamlText: string): ParseResult {
  if (typeof yamlText !== 'string') {
    return refuse('wrong_type', 'a flow document is YAML text');
  }
  // Length in UTF-16 units bounds the byte length from below by itself, so the encoder only
  // runs on texts that could be too large.
  if (yamlText.length > MAX_DOCUMENT_BYTES / 4 && utf8.encode(yamlText).length > MAX_DOCUMENT_BYTES) {
    return refuse('document_too_large', `the document is larger than ${MAX_DOCUMENT_BYTES / 1024} KiB`);
  }

  const lines = new LineCounter();
  const doc = parseYaml(yamlText, { lineCounter: lines, prettyErrors: false, strict: true });
  const locator = new DocumentLocator(doc, lines, yamlText);
  const diagnostics: Diagnostic[] = [];

  // Before anything reads the document by recursion; the library's own overflow is not reported.
  const tooDeep = tooDeeplyNested(doc, yamlText);
  if (tooDeep) {
    diagnostics.push({ severity: 'error', code: 'too_deeply_nested', message: tooDeep.message, path: [], ...locator.offsetPosition(tooDeep.offset) });
  }
  for (const problem of doc.errors) {
    if (tooDeep && isStackOverflowError(problem)) continue;
    const at = locator.offsetPosition(problem.pos[0]);
    diagnostics.push({ severity: 'error', code: 'yaml_syntax', message: problem.message, path: [], ...at });
  }
  for (const problem of doc.warnings) {
    const at = locator.offsetPosition(problem.pos[0]);
    // The one code reported at two severities: the yaml library's warnings do not refuse a flow.
    diagnostics.push({ severity: 'warning', code: 'yaml_syntax', message: problem.message, path: [], ...at });
  }
  if (hasErrors(diagnostics)) return finish(null, diagnostics);

  const aliasProblem = checkAliases(doc, locator);
  if (aliasProblem) return finish(null, [...diagnostics, aliasProblem]);

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch {
    // The yaml library throws when aliases expand beyond the limit (nested "billion laughs").
    return finish(null, [
      ...diagnostics,
      {
        severity: 'error',
        code: 'too_many_aliases',
        message: `aliases in this document expand to more than ${MAX_YAML_ALIASES} copies`,
        path: [],
        line: 1,
        column: 1,
      },
    ]);
  }

  if (dataTooDeep(data)) {
    return finish(null, [...diagnostics, { severity: 'error', code: 'too_deeply_nested', message: tooDeepMessage(true), path: [], line: 1, column: 1 }]);
  }

  if (data === null || data === undefined) {
    return finish(null, [
      ...diagnostics,
      {
        severity: 'error',
        code: 'wrong_type',
        message: 'the document is empty: a flow is a map with id, version, initial_state and states',
        path: [],
        line: 1,
        column: 1,
      },
    ]);
  }

  const sourceText = (path: DocPath) => {
    const node = locator.find(path).located.value;
    return isScalar(node) ? node.source : undefined;
  };
  for (const { code, message, path, atKey } of checkStructure(data, sourceText)) {
    diagnostics.push({ severity: DIAGNOSTIC_CODES[code], code, message, path, ...locator.position(path, atKey) });
  }
  for (const problem of checkSemantics(data)) {
    const at = problem.needle
      ? locator.positionInScalar(problem.path, problem.needle.text, problem.needle.occurrence)
      : locator.position(problem.path, problem.atKey);
    diagnostics.push({
      severity: DIAGNOSTIC_CODES[problem.code],
      code: problem.code,
      message: problem.message,
      path: problem.path,
      ...at,
    });
  }

  return finish(hasErrors(diagnostics) ? null : (data as FlowDocument), diagnostics);
}

function checkAliases(doc: Document, locator: DocumentLocator): Diagnostic | null {
  let count = 0;
  let offset: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      count++;
      if (count === MAX_YAML_ALIASES + 1) offset = node.range?.[0];
    },
  });
  if (count <= MAX_YAML_ALIASES) return null;
  return {
    severity: 'error',
    code: 'too_many_aliases',
    message: `the document uses ${count} aliases; at most ${MAX_YAML_ALIASES} are allowed`,
    path: [],
    ...locator.offsetPosition(offset),
  };
}

function refuse(code: Diagnostic['code'], message: string): ParseResult {
  return { document: null, diagnostics: [{ severity: DIAGNOSTIC_CODES[code], code, message, path: [], line: 1, column: 1 }] };
}

function finish(document: FlowDocument | null, diagnostics: Diagnostic[]): ParseResult {
  const order = (d: Diagnostic) => (d.severity === 'error' ? 0 : 1);
  diagnostics.sort((a, b) => order(a) - order(b) || a.line - b.line || a.column - b.column);
  return { document, diagnostics };
}
