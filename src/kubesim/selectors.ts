import type { KubeObject } from './types.js';
import { isQualifiedName, isValidLabelValue } from './validation/names.js';

/**
 * Label and field selectors with the grammar of k8s.io/apimachinery/pkg/labels and /fields.
 * Parsing errors are returned as messages; the caller turns them into 400 BadRequest.
 */

export type LabelRequirement =
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: '=' | '!='; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] };

export type LabelSelector = LabelRequirement[];

type Token = { kind: 'id'; text: string } | { kind: 'op'; text: '!' | '=' | '==' | '!=' | '(' | ')' | ',' };

function tokenize(input: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input.charAt(i);
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      out.push({ kind: 'op', text: c });
      i++;
    } else if (c === '!') {
      if (input[i + 1] === '=') {
        out.push({ kind: 'op', text: '!=' });
        i += 2;
      } else {
        out.push({ kind: 'op', text: '!' });
        i++;
      }
    } else if (c === '=') {
      if (input[i + 1] === '=') {
        out.push({ kind: 'op', text: '==' });
        i += 2;
      } else {
        out.push({ kind: 'op', text: '=' });
        i++;
      }
    } else {
      let j = i;
      while (j < input.length && !/[\s!=(),]/.test(input.charAt(j))) j++;
      out.push({ kind: 'id', text: input.slice(i, j) });
      i = j;
    }
  }
  return out;
}

class ParseError extends Error {}

export function parseLabelSelector(input: string): LabelSelector | string {
  try {
    return parseRequirements(tokenize(input));
  } catch (err) {
    if (err instanceof ParseError) return `unable to parse requirement: ${err.message}`;
    throw err;
  }
}

function parseRequirements(tokens: Token[]): LabelSelector {
  const reqs: LabelRequirement[] = [];
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  // The Go parser prints the literal of the token it found; the end of the string has none ('').
  const describe = (t: Token | undefined) => `'${t?.text ?? ''}'`;
  const checkKey = (key: string) => {
    const errs = isQualifiedName(key);
    if (errs.length) throw new ParseError(`Invalid value: ${JSON.stringify(key)}: ${errs.join('; ')}`);
  };
  const checkValue = (v: string) => {
    const errs = isValidLabelValue(v);
    if (errs.length) throw new ParseError(`Invalid value: ${JSON.stringify(v)}: ${errs.join('; ')}`);
  };
  if (tokens.length === 0) return reqs;
  for (;;) {
    const t = next();
    if (t?.kind === 'op' && t.text === '!') {
      const key = next();
      if (key?.kind !== 'id') throw new ParseError(`found ${describe(key)}, expected: identifier after '!'`);
      checkKey(key.text);
      reqs.push({ key: key.text, op: '!' });
    } else if (t?.kind === 'id') {
      checkKey(t.text);
      const op = peek();
      if (!op || (op.kind === 'op' && op.text === ',')) {
        reqs.push({ key: t.text, op: 'exists' });
      } else if (op.kind === 'op' && (op.text === '=' || op.text === '==' || op.text === '!=')) {
        pos++;
        const v = peek();
        let value = '';
        if (v?.kind === 'id') {
          value = v.text;
          pos++;
        } else if (v && !(v.kind === 'op' && v.text === ',')) {
          throw new ParseError(`found ${describe(v)}, expected: identifier`);
        }
        checkValue(value);
        reqs.push({ key: t.text, op: op.text === '!=' ? '!=' : '=', value });
      } else if (op.kind === 'id' && (op.text === 'in' || op.text === 'notin')) {
        pos++;
        const open = next();
        if (!(open?.kind === 'op' && open.text === '('))
          // Sic: no comma in this one message of the Go parser.
          throw new ParseError(`found ${describe(open)} expected: '('`);
        const values: string[] = [];
        for (;;) {
          const v = next();
          if (v?.kind === 'id') {
            checkValue(v.text);
            values.push(v.text);
            const sep = next();
            if (sep?.kind === 'op' && sep.text === ')') break;
            if (!(sep?.kind === 'op' && sep.text === ','))
              throw new ParseError(`found ${describe(sep)}, expected: ',' or ')'`);
          } else if (v?.kind === 'op' && v.text === ')' && values.length === 0) {
            throw new ParseError("for 'in', 'notin' operators, values set can't be empty");
          } else {
            throw new ParseError(`found ${describe(v)}, expected: identifier`);
          }
        }
        reqs.push({ key: t.text, op: op.text, values });
      } else {
        throw new ParseError(`found ${describe(op)}, expected: in, notin, =, ==, !=, gt, lt`);
      }
    } else {
      throw new ParseError(`found ${describe(t)}, expected: !, identifier, or 'end of string'`);
    }
    const sep = next();
    if (!sep) return reqs;
    if (!(sep.kind === 'op' && sep.text === ','))
      throw new ParseError(`found ${describe(sep)}, expected: ',' or 'end of string'`);
  }
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return selector.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case '=':
        return has && v === r.value;
      case '!=':
        return !has || v !== r.value;
      case 'in':
        return has && r.values.includes(v ?? '');
      case 'notin':
        return !has || !r.values.includes(v ?? '');
    }
  });
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** fields.ParseSelector: `a=b,c!=d`, with `\` escaping of `,`, `=`, `!` and `\` in values. */
export function parseFieldSelector(input: string): FieldRequirement[] | string {
  const reqs: FieldRequirement[] = [];
  if (input.trim() === '') return reqs;
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < input.length; i++) {
    const c = input.charAt(i);
    if (c === '\\' && i + 1 < input.length) {
      cur += c + input.charAt(i + 1);
      i++;
    } else if (c === ',') {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  for (const part of parts) {
    const m = /^([^=!]*?)(==|!=|=)(.*)$/.exec(part);
    if (!m || m[1] === undefined || m[2] === undefined || m[3] === undefined || m[1].trim() === '') {
      return `invalid selector: '${input}'; can't understand '${part}'`;
    }
    const value = m[3].replace(/\\(.)/g, '$1');
    reqs.push({ field: m[1].trim(), op: m[2] === '!=' ? '!=' : '=', value });
  }
  return reqs;
}

export function matchesFields(reqs: FieldRequirement[], get: (field: string) => string | undefined): boolean {
  return reqs.every((r) => {
    const v = get(r.field) ?? '';
    return r.op === '=' ? v === r.value : v !== r.value;
  });
}

/** A compiled label+field predicate over stored objects. */
export interface ObjectFilter {
  labels: LabelSelector;
  fields: FieldRequirement[];
  fieldValue: (obj: KubeObject, field: string) => string | undefined;
  empty: boolean;
}

export function matches(filter: ObjectFilter, obj: KubeObject): boolean {
  return (
    matchesLabels(filter.labels, obj.metadata.labels) &&
    matchesFields(filter.fields, (f) => filter.fieldValue(obj, f))
  );
}

/** A metav1.LabelSelector as stored (matchLabels, matchExpressions). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?: { key: string; operator: string; values?: string[] | undefined }[] | undefined;
}

/**
 * metav1.LabelSelectorAsSelector, then Matches: an empty (or absent) selector matches
 * everything; an unknown operator matches nothing (validation refuses it before it is stored).
 */
export function matchesLabelSelector(
  selector: LabelSelectorObject | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  const reqs: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) reqs.push({ key, op: '=', value });
  for (const e of selector?.matchExpressions ?? []) {
    const values = e.values ?? [];
    if (e.operator === 'In') reqs.push({ key: e.key, op: 'in', values });
    else if (e.operator === 'NotIn') reqs.push({ key: e.key, op: 'notin', values });
    else if (e.operator === 'Exists') reqs.push({ key: e.key, op: 'exists' });
    else if (e.operator === 'DoesNotExist') reqs.push({ key: e.key, op: '!' });
    else return false;
  }
  return matchesLabels(reqs, labels);
}
